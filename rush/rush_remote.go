package rush

import (
	"fmt"
	"strings"
	"time"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/rush/remote"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/worktree"
)

// A rush shared through a remote (rush --remote, rush.remote) runs on each
// clone that starts it, every clone a host. The remote is the arbiter of
// every transition (claims, leases, done: sync.arbiter), so no task is
// ever held by two hosts, and a verified task's pinned commit goes out in
// the same push as the transition that names it. Each level starts from
// the remote's staging; whichever host sees a level settled merges it,
// runs the gates, and moves the remote's staging by compare-and-swap; a
// host that loses that race takes the winner's staging instead of merging
// again. That is rush.schedule = "levels"; by dependencies, see
// flow_remote.go. The fetches, pushes and looks at the remote are
// rush/remote's: the rush decides what they carry.

// shared is what a rush shared with other hosts through a remote keeps
// of them and of the remote.
type shared struct {
	// link is the remote's I/O (Remote "" for none).
	link *remote.Link
	// levelSynced: the level merge just ended with this host holding the
	// remote's state and staging, so the next level starts on them without
	// asking again.
	levelSynced bool
	flowShared
}

// hostWorker is a worker's name in the shared state: worker-<n> of each
// host, told apart by the host's name.
func hostWorker(host gitstore.HostIdentity, name string) string {
	label := strings.Map(func(c rune) rune {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
			return c
		}
		return '-'
	}, host.Name)
	out := name + "." + strings.Trim(label, "-")
	if len(out) > 64 {
		out = out[:64]
	}
	return strings.TrimRight(out, ".-")
}

// remoteMerge merges a settled level on this host unless another host
// did: the level's verified work already in the remote's staging is
// recorded done; the rest is merged here, gated, and pushed with a lease on
// the staging it started from. A lost push means another host merged
// first: its staging is taken and the round starts over (its work is the
// same, so it is not merged twice).
func (r *rush) remoteMerge(level int) (stop error, err error) {
	ctx := r.g.Context()
	ref := r.mgr.StagingRef()
	polled, fetched := false, ""
	for round := 1; ; round++ {
		tip, err := r.levelMergeTip(round, polled, fetched)
		polled, fetched = false, ""
		if err != nil {
			return nil, err
		}
		tasks, err := r.snapshot(r.s)
		if err != nil {
			return nil, err
		}
		in, out, work, last, err := r.sortLevel(level, tip, tasks)
		if err != nil {
			return nil, err
		}
		if len(out) == 0 {
			return r.levelHeld(in, tip, round)
		}
		if round == 1 && last != nil && last.Host != r.s.Host().Name {
			if ok, staging := r.link.AwaitMerge(level, ref); ok {
				polled, fetched = true, staging
				continue // the host that settled the level merged it
			}
		}
		if err := r.link.FetchWork(ctx, r.s, work); err != nil {
			if round < 5 {
				continue // merged and dropped meanwhile: the staging has it now
			}
			return nil, err
		}
		if again, stop, err := r.levelPush(level, round, in, out, tip, ref); !again {
			return stop, err
		}
	}
}

// levelMergeTip is the staging a round of the level merge goes on. The
// first round goes on what this host knows; a later one on the remote's
// staging, the remote's state asked for first unless the round before
// did (polled, the staging it fetched then).
func (r *rush) levelMergeTip(round int, polled bool, fetched string) (string, error) {
	ctx := r.g.Context()
	// The first round goes on what this host knows: it saw the level
	// settled, and only this level's merge moves the staging it
	// started from. Had another host merged first, the lease on the
	// staging push says so, and the next round asks the remote.
	if round == 1 {
		return r.mgr.EnsureStaging(ctx, "")
	}
	if !polled {
		if err := r.link.Poll(true); err != nil {
			return "", err
		}
	}
	return r.link.SyncStagingFrom(ctx, r.mgr, "", fetched)
}

// sortLevel sorts the level's verified work by whether the staging at tip
// has it already (in) or not (out, with work: the refs to fetch it from).
// last is the task of the level verified last, nil when none is.
func (r *rush) sortLevel(level int, tip string, tasks []*state.Task) (in, out []worktree.Pin, work map[string]string, last *state.Task, err error) {
	work = map[string]string{}
	var verified []*state.Task
	var commits []string
	for _, t := range tasks {
		if t.Level != level || t.Status != state.Verified {
			continue
		}
		if last == nil || lastAt(t).After(lastAt(last)) {
			last = t
		}
		verified = append(verified, t)
		commits = append(commits, t.Commit)
	}
	merged, err := r.s.InHistory(r.g.Context(), tip, commits)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	for _, t := range verified {
		p := worktree.Pin{Task: t.ID(), Commit: t.Commit}
		if merged[t.Commit] {
			in = append(in, p)
		} else {
			out = append(out, p)
			work[gitstore.WorkRef(r.feature, t.ID())] = t.Commit
		}
	}
	return in, out, work, last, nil
}

// levelHeld is the level merge's end when the staging at tip holds all of
// the level's work: what it holds recorded done, and the staging gated
// here.
func (r *rush) levelHeld(in []worktree.Pin, tip string, round int) (stop error, err error) {
	if len(in) > 0 {
		// Usually already recorded by the host that merged; its
		// push also dropped the pins.
		if err := r.g.RecordMerged(in, pinIDs(in), tip); err != nil {
			return nil, err
		}
	}
	r.levelSynced = round > 1
	// Another host's gate record does not count here: the gates
	// run on this machine once per tree.
	return runQualityGates(r.g, r.mgr, true)
}

// levelPush merges out onto the staging at tip, gates it here, and pushes
// it with in and out recorded done, leased on tip. again is a push that
// lost the lease to another host's merge: the round is to run again.
func (r *rush) levelPush(level, round int, in, out []worktree.Pin, tip, ref string) (again bool, stop, err error) {
	res, stop, err := mergeOnly(r.g, r.mgr, out)
	if stop != nil || err != nil {
		return false, stop, err
	}
	// Gated before it goes out: a staging that did not pass is never
	// built on, here or elsewhere.
	if stop, err := runQualityGates(r.g, r.mgr, false); stop != nil || err != nil {
		return false, stop, err
	}
	all := append(in, out...)
	lost, err := r.link.PushMerged(r.g, all, pinIDs(all), res.Tip, ref, tip)
	if err != nil {
		return false, nil, err
	}
	if lost {
		if round >= 20 {
			return false, nil, engine.RefusedError("level merge gave up", fmt.Sprintf("the staging on %s kept moving for %d rounds", r.link.Remote, round))
		}
		r.g.Note("level %d: the remote moved while this host merged it; looking again", level)
		return true, nil, nil
	}
	r.levelSynced = true // the remote's staging and state are this host's own
	// The gate record goes out for the record (it stands in for the
	// gates only where it was made), with the pins dropped.
	extra := map[string]string{}
	if rec, _ := r.s.ReadRef(gitstore.GatesRef(res.Tree)); !rec.IsZero() {
		extra[gitstore.GatesRef(res.Tree)] = rec.String()
	}
	// Nobody waits for this push: it goes on while the next level starts.
	r.link.DropPins(all, extra)
	return false, nil, nil
}

func pinIDs(pins []worktree.Pin) []string {
	ids := make([]string, len(pins))
	for i, p := range pins {
		ids[i] = p.Task
	}
	return ids
}

// lastAt is when the task's last transition happened.
func lastAt(t *state.Task) time.Time {
	if len(t.History) == 0 {
		return time.Time{}
	}
	return t.History[len(t.History)-1].At
}

// heldBy is the task worker holds in the local state, nil when none (or
// when the lease is another clone's under this one's name).
func heldBy(s *gitstore.Store, feature, worker string) *state.Task {
	tx, err := s.View(feature)
	if err != nil {
		return nil
	}
	ws, err := tx.Workers()
	if err != nil || ws[worker] == nil || !s.Host().Holds(ws[worker]) {
		return nil
	}
	t, err := tx.Task(ws[worker].Task)
	if err != nil || t.Status != state.Claimed || t.Worker != worker {
		return nil
	}
	return t
}
