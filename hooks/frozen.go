package hooks

import (
	"fmt"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore"
)

// frozenProblems refuses, in a worker worktree, the staged paths the
// feature's epic freezes. Such a path is usually unowned too; the frozen
// problem replaces that one, since owning it would not help: only a new
// version of the epic changes a frozen path.
func frozenProblems(s *gitstore.Store, id Identity, staged []string, out []Problem) ([]Problem, error) {
	ep, err := s.EpicOf(id.Feature)
	if err != nil || ep == nil || len(ep.Frozen) == 0 {
		return out, err
	}
	fz := gates.FrozenTouched(ep.Frozen, staged)
	if len(fz) == 0 {
		return out, nil
	}
	frozen := map[string]bool{}
	for _, p := range fz {
		frozen[p] = true
	}
	keep := out[:0]
	for _, p := range out {
		if !frozen[p.Path] {
			keep = append(keep, p)
		}
	}
	for _, p := range fz {
		keep = append(keep, Problem{Path: p,
			What: fmt.Sprintf("frozen by epic %s v%d; no task of %s may change it", ep.Name, ep.Version, id.Feature),
			Hint: "leave it out: git restore --staged -- " + shellQuoteIfNeeded(p) + "; a change to it is a new version: git zerg epic bump " + ep.Name})
	}
	return keep, nil
}
