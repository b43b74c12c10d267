// Package schedule is the rush's decisions that need nothing but what they
// are given (tasks, times, configuration values): what is ready, settled,
// Hopeless, how long to wait, which host's work to merge. No git, no
// clock, no store, no process: each is tested on tables, and both of the
// rush's schedulers use them.
package schedule

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/state"
)

// inLevel: t is of level, every task being of level 0 (the whole feature,
// for the scheduler that does not go level by level).
func inLevel(t *state.Task, level int) bool { return level == 0 || t.Level == level }

// Hopeless says why no task of the level can run in this rush: each one
// that is not settled waits on a blocked task, or for an approval. "" when
// some can run (or has work to merge).
func Hopeless(tasks []*state.Task, level int) string {
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
		if !inLevel(t, level) || t.Status.Settled() {
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

// LevelSettled reports whether every task of the level is at rest
// (verified, done or blocked): nothing of it runs any more.
func LevelSettled(tasks []*state.Task, level int) bool {
	for _, t := range tasks {
		if inLevel(t, level) && !t.Status.AtRest() {
			return false
		}
	}
	return true
}

// LevelDone: every task of the level is settled (done or blocked) already.
func LevelDone(tasks []*state.Task, level int) bool {
	for _, t := range tasks {
		if inLevel(t, level) && !t.Status.Settled() {
			return false
		}
	}
	return true
}

// LevelWait decides what an idle scheduler does at now: done (settled)
// when every task of the level is verified, done or blocked; else wait
// for the soonest backoff to end, or poll for a claim held elsewhere;
// else (0, false): the rest can never run. backoffs are the tasks that
// wait for their backoff, for the caller to say why nothing runs.
func LevelWait(tasks []*state.Task, level int, policy gates.Policy, now time.Time, poll time.Duration) (wait time.Duration, settled bool, backoffs []*state.Task) {
	status := gates.StatusFunc(tasks)
	allSettled := true
	for _, t := range tasks {
		if !inLevel(t, level) || t.Status.AtRest() {
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

// Remaining is each task's longest path to the end of the feature: its own
// length plus the longest of what waits for it, a length being the task's
// estimate_minutes when the graph gives one, else the mean of the
// estimates given (1 when none is). A task that starts late on a long path
// holds up everything after it, so the scheduler starts the longest first.
func Remaining(tasks []*state.Task) map[string]float64 {
	byID := make(map[string]*state.Task, len(tasks))
	est := make(map[string]float64, len(tasks))
	sum, n := 0.0, 0
	for _, t := range tasks {
		byID[t.ID()] = t
		if m, ok := estimate(t); ok {
			est[t.ID()] = m
			sum, n = sum+m, n+1
		}
	}
	fill := 1.0
	if n > 0 {
		fill = sum / float64(n)
	}
	waiting := map[string][]string{} // task -> the tasks that depend on it
	for _, t := range tasks {
		if _, ok := est[t.ID()]; !ok {
			est[t.ID()] = fill
		}
		for _, d := range t.Deps() {
			waiting[d] = append(waiting[d], t.ID())
		}
	}
	out := make(map[string]float64, len(tasks))
	var path func(id string) float64
	path = func(id string) float64 {
		if v, ok := out[id]; ok {
			return v
		}
		out[id] = est[id] // a cycle (never planned) ends here
		longest := 0.0
		for _, w := range waiting[id] {
			if byID[w] != nil {
				longest = max(longest, path(w))
			}
		}
		out[id] = est[id] + longest
		return out[id]
	}
	for _, t := range tasks {
		path(t.ID())
	}
	return out
}

// estimate is a task's estimate_minutes (ZERG's key), when it is a
// positive number.
func estimate(t *state.Task) (float64, bool) {
	raw, ok := t.Spec.Extra["estimate_minutes"]
	if !ok {
		return 0, false
	}
	var m float64
	if json.Unmarshal(raw, &m) != nil || m <= 0 {
		return 0, false
	}
	return m, true
}

// Ready is what the flow scheduler may start now, best first: the
// tasks the policy finds ready whose every dependency is in held (the
// work the newest gated staging holds), longest remaining path first, the
// policy's order between equals.
//
// A level the graph gives a task is a floor ("never earlier"): such a task
// also waits for every task of the levels below it, as it would level by
// level.
func Ready(tasks []*state.Task, policy gates.Policy, now time.Time, held map[string]bool, paths map[string]float64) []*state.Task {
	below := map[int]bool{} // level -> every task of a lower level is held
	heldBelow := func(floor int) bool {
		if v, ok := below[floor]; ok {
			return v
		}
		below[floor] = true
		for _, t := range tasks {
			if t.Level < floor && !held[t.ID()] {
				below[floor] = false
				break
			}
		}
		return below[floor]
	}
	var out []*state.Task
next:
	for _, t := range policy.ReadyOrder(tasks, now) {
		for _, d := range t.Deps() {
			if !held[d] {
				continue next
			}
		}
		if t.Spec.Level > 1 && !heldBelow(t.Spec.Level) {
			continue
		}
		out = append(out, t)
	}
	sort.SliceStable(out, func(i, j int) bool { return paths[out[i].ID()] > paths[out[j].ID()] })
	return out
}

// Eligible is flowReady's rule on dependencies alone, for a claim
// that picks on state it has not seen yet (another machine's, as the claim
// commits on the remote): whether a task may start from a staging that
// holds the work of held, its readiness left to the claim's gate.
func Eligible(tasks []*state.Task, held map[string]bool) func(*state.Task) bool {
	unheld := 0 // the lowest level with a task whose work is not held; 0: none
	for _, t := range tasks {
		if !held[t.ID()] && (unheld == 0 || t.Level < unheld) {
			unheld = t.Level
		}
	}
	return func(t *state.Task) bool {
		for _, d := range t.Deps() {
			if !held[d] {
				return false
			}
		}
		return t.Spec.Level <= 1 || unheld == 0 || unheld >= t.Spec.Level
	}
}

// mergeDue picks what a host of a shared rush merges now among the
// verified tasks. One host merges for all: the merger, the host with the
// first name among this one (self) and those it saw change the state
// within grace. The merger takes every verified task at once; any other
// host takes only the work of a host that has shown no sign of life for
// grace, its own included (the merger merges it meanwhile). active is, by
// host, when this host last saw the state change by it (hostSigns), and
// seen when it first saw each task verified with its commit (filled in
// here at now, and emptied of what is no longer verified). A host that is
// alive keeps changing the state (claims, results, the renewals of its
// leases); one that does not for grace is taken for gone, and merging its
// work here costs nothing but a lost race if it was not.
//
// Hosts that each merged their own work raced to move the one staging: a
// merge takes a few round trips to the remote, and with three hosts most
// lost to another's and went again (9–18 lost merge pushes per host in the
// three-host benchmark; 0–3 in all with one merger).
func mergeDue(verified []*state.Task, self string, seen, active map[string]time.Time, now time.Time, grace time.Duration) []*state.Task {
	merger := self
	for h, at := range active {
		if h < merger && now.Sub(at) < grace {
			merger = h
		}
	}
	still := make(map[string]bool, len(verified))
	var due []*state.Task
	for _, t := range verified {
		key := t.ID() + "@" + t.Commit
		still[key] = true
		quiet, ok := seen[key]
		if !ok {
			quiet, seen[key] = now, now
		}
		if a := active[t.Host]; a.After(quiet) {
			quiet = a
		}
		if merger == self || now.Sub(quiet) >= grace {
			due = append(due, t)
		}
	}
	for key := range seen {
		if !still[key] {
			delete(seen, key)
		}
	}
	return due
}

// hostSigns is, by host, what the state shows of its doings: it changes
// with each transition of the host's tasks and each renewal of its leases.
func hostSigns(tasks []*state.Task, leases map[string]*state.Worker) map[string]string {
	events := map[string]int{}
	for _, t := range tasks {
		if t.Host != "" {
			events[t.Host] += len(t.History)
		}
	}
	expires := map[string]int64{}
	for _, w := range leases {
		expires[w.Host] += w.Expires.UnixNano()
	}
	out := map[string]string{}
	for h, n := range events {
		out[h] = fmt.Sprintf("%d/%d", n, expires[h])
	}
	for h, e := range expires {
		out[h] = fmt.Sprintf("%d/%d", events[h], e)
	}
	return out
}

// WholeLevelBlocked is the first level every task of which is blocked, 0
// when there is none: the rush aborts there, as a level rush does.
func WholeLevelBlocked(tasks []*state.Task) int {
	total, blocked := map[int]int{}, map[int]int{}
	for _, t := range tasks {
		total[t.Level]++
		if t.Status == state.Blocked {
			blocked[t.Level]++
		}
	}
	first := 0
	for l, n := range total {
		if n > 0 && blocked[l] == n && (first == 0 || l < first) {
			first = l
		}
	}
	return first
}

// Flow is what a rush's wall time went on: the longest chain of
// dependencies by how long each task's last run took (what no number of
// workers could shorten), and how busy the workers were.
type Flow struct {
	Wall     time.Duration
	Critical time.Duration
	Path     []string // the chain's tasks, first first
	Workers  int
	Busy     float64 // the share of Workers × Wall that runs took
}

// FlowOf is the Flow of a rush that started at since and ended wall
// later with workers: only runs that started in it count.
func FlowOf(tasks []*state.Task, since time.Time, wall time.Duration, workers int) Flow {
	f := Flow{Wall: wall, Workers: workers}
	took := map[string]time.Duration{}
	var busy time.Duration
	end := since.Add(wall)
	for _, t := range tasks {
		for _, r := range t.Runs() {
			if r.Start.Before(since) {
				continue
			}
			busy += r.Took(end)
			if r.Outcome == state.Verified || r.Outcome == state.Done {
				took[t.ID()] = r.Took(end)
			}
		}
	}
	if wall > 0 && workers > 0 {
		f.Busy = float64(busy) / float64(wall*time.Duration(workers))
	}
	byID := map[string]*state.Task{}
	for _, t := range tasks {
		byID[t.ID()] = t
	}
	best := map[string]time.Duration{} // longest chain ending at the task
	prev := map[string]string{}
	var chain func(id string, seen map[string]bool) time.Duration
	chain = func(id string, seen map[string]bool) time.Duration {
		if v, ok := best[id]; ok || seen[id] {
			return v
		}
		seen[id] = true
		var longest time.Duration
		if t := byID[id]; t != nil {
			for _, d := range t.Deps() {
				if c := chain(d, seen); c > longest {
					longest, prev[id] = c, d
				}
			}
		}
		best[id] = longest + took[id]
		return best[id]
	}
	last := ""
	for _, t := range tasks {
		if c := chain(t.ID(), map[string]bool{}); c > f.Critical {
			f.Critical, last = c, t.ID()
		}
	}
	for id := last; id != ""; id = prev[id] {
		if took[id] > 0 {
			f.Path = append([]string{id}, f.Path...)
		}
	}
	return f
}

// FreshDue: a background catch-up with the remote is due at now, the last
// one having ended at caughtUp and taken took (see freshEvery).
func FreshDue(now, caughtUp time.Time, took time.Duration) bool {
	return now.Sub(caughtUp) >= took/2
}

// firstFew is s cut to n, the rest counted.
func firstFew(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("%d more", len(s)-n))
}
