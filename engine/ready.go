package engine

import (
	"sort"
	"time"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore"
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
