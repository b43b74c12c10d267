package engine

import (
	"sort"
	"time"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
)

// ReadyEntries is ReadyOrder on the task index: the ready tasks, best
// first, without decoding a task.
func ReadyEntries(ix *gitstore.Index, p gates.Policy, now time.Time) []*gitstore.IndexEntry {
	var out []*gitstore.IndexEntry
	for i := range ix.Entries {
		e := &ix.Entries[i]
		if p.ReadyFacts(Readiness(e), ix.Status, now) {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		return gates.Better(out[i].Level, out[i].Dependents, out[j].Level, out[j].Dependents)
	})
	return out
}

// Readiness is what the ready rule looks at in an index entry.
func Readiness(e *gitstore.IndexEntry) gates.Readiness {
	return gates.Readiness{Status: e.Status, Attempts: e.Attempts, NotBefore: e.NotBefore, Unapproved: e.Unapproved, Deps: e.Deps}
}

// readyBestFirst calls yield with the ready entries, best first, until it
// returns false. The first few are found by a scan each: a claim nearly
// always takes the first, and sorting thousands of ready tasks to take one
// would cost more than the rest of the choice.
func readyBestFirst(ix *gitstore.Index, p gates.Policy, now time.Time, yield func(*gitstore.IndexEntry) bool) {
	var ready []*gitstore.IndexEntry
	for i := range ix.Entries {
		e := &ix.Entries[i]
		if p.ReadyFacts(Readiness(e), ix.Status, now) {
			ready = append(ready, e)
		}
	}
	for k := 0; k < 4 && len(ready) > 0; k++ {
		best := 0
		for i := 1; i < len(ready); i++ {
			// Strictly better: among equals the earliest in plan order
			// stays, as in the stable sort.
			if gates.Better(ready[i].Level, ready[i].Dependents, ready[best].Level, ready[best].Dependents) {
				best = i
			}
		}
		if !yield(ready[best]) {
			return
		}
		ready = append(ready[:best], ready[best+1:]...)
	}
	sort.SliceStable(ready, func(i, j int) bool {
		return gates.Better(ready[i].Level, ready[i].Dependents, ready[j].Level, ready[j].Dependents)
	})
	for _, e := range ready {
		if !yield(e) {
			return
		}
	}
}

// ReadyIn lists a feature snapshot's ready tasks, best first, from its
// index; with tasks, each task is read too (ids alone need no decoding).
func ReadyIn(tx *gitstore.Tx, p gates.Policy, now time.Time, tasks bool) ([]*gitstore.IndexEntry, []*state.Task, error) {
	if _, err := tx.Meta(); err != nil {
		return nil, nil, err
	}
	ix, err := tx.Index()
	if err != nil {
		return nil, nil, err
	}
	ready := ReadyEntries(ix, p, now)
	if !tasks {
		return ready, nil, nil
	}
	// Read one by one while they are few, else all at once through the
	// task cache.
	if len(ready) > readOneByOne {
		if _, err := tx.Tasks(); err != nil {
			return nil, nil, err
		}
	}
	out := make([]*state.Task, 0, len(ready))
	for _, en := range ready {
		t, err := tx.Task(en.ID)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, t)
	}
	return ready, out, nil
}

// readOneByOne is how many tasks are cheaper to read one by one (a shard
// tree and a blob each) than all through the task cache.
const readOneByOne = 100
