package engine

import (
	"sort"
	"time"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
)

// ReadyEntries is ReadyOrder on the task index: the ready tasks, best
// first, without decoding a task. It looks at every entry, as those who
// want every ready task (status, next) do anyway.
func ReadyEntries(ix *gitstore.Index, p gates.Policy, now time.Time) []*gitstore.IndexEntry {
	var out []*gitstore.IndexEntry
	all := ix.All()
	for i := range all {
		if e := &all[i]; p.ReadyFacts(readiness(e), ix.Status, now) {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		return gates.Better(out[i].Level, out[i].Dependents, out[j].Level, out[j].Dependents)
	})
	return out
}

// readiness is what the ready rule looks at in an index entry.
func readiness(e *gitstore.IndexEntry) gates.Readiness {
	return gates.Readiness{Status: e.Status, Attempts: e.Attempts, NotBefore: e.NotBefore, Unapproved: e.Unapproved, Deps: e.Deps}
}

// readyBestFirst calls yield with the ready entries, best first, until it
// returns false. The index proposes its candidates in that order (pending
// or failed, dependencies done), reading only as many as are asked for;
// the ready rule judges each.
func readyBestFirst(ix *gitstore.Index, p gates.Policy, now time.Time, yield func(*gitstore.IndexEntry) bool) {
	ix.Candidates(func(e *gitstore.IndexEntry, status func(string) state.Status) bool {
		if !p.ReadyFacts(readiness(e), status, now) {
			return true
		}
		return yield(e)
	})
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

// NoneReady says why no task of the feature is ready: complete when every
// task is done, else how many tasks are in each status (every status
// named), for a person who ran next and got nothing.
func NoneReady(tx *gitstore.Tx) (complete bool, counts map[string]int, err error) {
	ix, err := tx.Index()
	if err != nil {
		return false, nil, err
	}
	counts = ix.Counts()
	return counts[string(state.Done)] == ix.Len(), counts, nil
}
