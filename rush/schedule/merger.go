package schedule

import (
	"time"

	"github.com/git-zerg/git-zerg/state"
)

// MergeGrace is how long a host waits for another host's merge before
// it merges the work itself: level by level, for the host that settled a
// level (every host sees it settled, and all but one would merge, gate and
// push for nothing); by dependencies, for the host that verified the work,
// which merges it at once unless it died in between.
const MergeGrace = 3 * time.Second

// MergeQueue is the merge queue's rule on a host of a shared rush: which
// verified work this host merges now (see mergeDue). It keeps what the
// host saw at its looks at the remote, so one belongs to one rush on one
// host; it is not safe for concurrent use.
type MergeQueue struct {
	self         string
	grace        time.Duration
	seen, active map[string]time.Time // mergeDue's
	signs        map[string]string    // hostSigns as last seen
}

// NewMergeQueue is the queue of host self, whose leases live for ttl.
func NewMergeQueue(self string, ttl time.Duration) *MergeQueue {
	return &MergeQueue{self: self, grace: flowGrace(ttl), seen: map[string]time.Time{}, active: map[string]time.Time{}, signs: map[string]string{}}
}

// flowGrace is how long another host must show no sign of life before
// this one merges its verified work: half the leases' lifetime, a host
// that holds a claim renewing it every third of that, between MergeGrace
// and maxFlowGrace. Long, against a host that is alive but whose pushes
// keep losing to the others' (it looks gone while it cannot get through,
// and merging its work here too would race its own merge of it); and a
// host that dies leaves claims that wait for the whole lifetime anyway.
func flowGrace(ttl time.Duration) time.Duration {
	return min(max(ttl/2, MergeGrace), maxFlowGrace)
}

// maxFlowGrace bounds flowGrace.
const maxFlowGrace = 30 * time.Second

// look notes which hosts changed the state since the last look.
func (q *MergeQueue) look(tasks []*state.Task, leases map[string]*state.Worker, now time.Time) {
	for h, sign := range hostSigns(tasks, leases) {
		old, known := q.signs[h]
		switch {
		case !known:
			q.signs[h] = sign // what it did before this host looked is no sign of life now
		case old != sign:
			q.signs[h], q.active[h] = sign, now
		}
	}
}

// Due is what the queue merges now of the tasks named by ids (verified
// work it has not merged), and whether it has anything to do: work to
// merge, or another host's merge to take (tasks done that held, the
// staging it builds on, does not hold).
//
// Time goes by the looks at the remote (at, when the view of tasks was
// fetched), not the clock: a host that could not look (its own pushes
// kept losing to the others') does not take the others for gone.
func (q *MergeQueue) Due(tasks []*state.Task, leases map[string]*state.Worker, ids []string, held map[string]bool, at time.Time) ([]*state.Task, bool) {
	q.look(tasks, leases, at)
	byID := make(map[string]*state.Task, len(tasks))
	for _, t := range tasks {
		byID[t.ID()] = t
	}
	var verified []*state.Task
	for _, id := range ids {
		if t := byID[id]; t != nil {
			verified = append(verified, t)
		}
	}
	due := mergeDue(verified, q.self, q.seen, q.active, at, q.grace)
	return due, len(due) > 0 || Behind(tasks, held)
}

// Behind: another host merged work that held, the staging a host builds
// on, does not hold.
func Behind(tasks []*state.Task, held map[string]bool) bool {
	for _, t := range tasks {
		if t.Status == state.Done && !held[t.ID()] {
			return true
		}
	}
	return false
}

// JoinLost is what a host merges, besides its own work (mine, by task),
// after its push lost to another host's merge: every other verified task
// of tasks (the remote's state as now fetched). Under contention each
// merge that gets through then carries everyone's work, where one that
// carries only its own host's leaves the others to lose again; a host
// whose work another carried finds it in staging and has nothing left to
// push.
func JoinLost(mine []string, tasks []*state.Task) []*state.Task {
	have := make(map[string]bool, len(mine))
	for _, id := range mine {
		have[id] = true
	}
	var out []*state.Task
	for _, t := range tasks {
		if t.Status == state.Verified && !have[t.ID()] {
			out = append(out, t)
		}
	}
	return out
}

// OwnWork: every task of ids was verified on host self.
func OwnWork(tasks []*state.Task, ids []string, self string) bool {
	host := make(map[string]string, len(tasks))
	for _, t := range tasks {
		host[t.ID()] = t.Host
	}
	for _, id := range ids {
		if host[id] != self {
			return false
		}
	}
	return true
}
