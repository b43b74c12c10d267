package rush

import (
	"fmt"
	"strings"
	"time"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/state"
)

// The rush's decisions that need nothing but what they are given (tasks,
// times, configuration values): no git, no clock, no store, so that they
// are tested on tables, and a scheduler that is not level by level can
// reuse them.

// hopeless says why no task of the level can run in this rush: each one
// that is not settled waits on a blocked task, or for an approval. "" when
// some can run (or has work to merge).
func hopeless(tasks []*state.Task, level int) string {
	byID := make(map[string]*state.Task, len(tasks))
	for _, t := range tasks {
		byID[t.ID()] = t
	}
	var blockedBy func(t *state.Task, seen map[string]bool) string
	blockedBy = func(t *state.Task, seen map[string]bool) string {
		for _, d := range t.Deps() {
			dt := byID[d]
			if dt == nil || seen[d] {
				continue
			}
			seen[d] = true
			if dt.Status == state.Blocked {
				return d
			}
			if dt.Status != state.Done {
				if b := blockedBy(dt, seen); b != "" {
					return b
				}
			}
		}
		return ""
	}
	var waits []string
	for _, t := range tasks {
		if t.Level != level || t.Status.Settled() {
			continue
		}
		switch b := blockedBy(t, map[string]bool{}); {
		case t.Status == state.Pending && b != "":
			waits = append(waits, t.ID()+" waits on blocked "+b)
		case t.Status == state.Pending && t.NeedsApproval() && t.Approved == "":
			waits = append(waits, t.ID()+" needs git zerg approve "+t.ID())
		default:
			return ""
		}
	}
	if len(waits) == 0 {
		return ""
	}
	return strings.Join(firstFew(waits, 5), "; ")
}

// levelSettled reports whether every task of the level is at rest
// (verified, done or blocked): nothing of it runs any more.
func levelSettled(tasks []*state.Task, level int) bool {
	for _, t := range tasks {
		if t.Level == level && !t.Status.AtRest() {
			return false
		}
	}
	return true
}

// levelDone: every task of the level is settled (done or blocked) already.
func levelDone(tasks []*state.Task, level int) bool {
	for _, t := range tasks {
		if t.Level == level && !t.Status.Settled() {
			return false
		}
	}
	return true
}

// levelWait decides what an idle scheduler does at now: done (settled)
// when every task of the level is verified, done or blocked; else wait
// for the soonest backoff to end, or poll for a claim held elsewhere;
// else (0, false): the rest can never run. backoffs are the tasks that
// wait for their backoff, for the caller to say why nothing runs.
func levelWait(tasks []*state.Task, level int, policy gates.Policy, now time.Time, poll time.Duration) (wait time.Duration, settled bool, backoffs []*state.Task) {
	status := gates.StatusFunc(tasks)
	allSettled := true
	for _, t := range tasks {
		if t.Level != level || t.Status.AtRest() {
			continue
		}
		allSettled = false
		switch {
		case t.Status == state.Claimed:
			wait = poll // someone else's claim: its lease decides
		case policy.MayRun(t.Status, t.Attempts) && len(gates.DepsDone(t, status)) == 0:
			if t.NeedsApproval() && t.Approved == "" {
				continue // waits for a human: never in this rush
			}
			d := t.NotBefore.Sub(now)
			if d > 0 {
				backoffs = append(backoffs, t)
			}
			if d < 10*time.Millisecond {
				d = 10 * time.Millisecond
			}
			if wait == 0 || d < wait {
				wait = d
			}
		}
	}
	if allSettled {
		return 0, true, nil
	}
	return wait, false, backoffs
}

// freshDue: a background catch-up with the remote is due at now, the last
// one having ended at caughtUp and taken took (see freshEvery).
func freshDue(now, caughtUp time.Time, took time.Duration) bool {
	return now.Sub(caughtUp) >= took/2
}

// firstFew is s cut to n, the rest counted.
func firstFew(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("%d more", len(s)-n))
}
