package view

import (
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/hooks"
)

// GateRun is one run of the quality gates on the feature's staging, as
// its record says: from its start to its end, passed or not (the required
// gates that failed named). A tree keeps the record of its last run only,
// so a tree gated again shows once, and only records made here count (a
// record synced in from another clone proves nothing, and shows nothing).
type GateRun struct {
	Tree   string    `json:"tree"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	Passed bool      `json:"passed"`
	Failed []string  `json:"failed,omitempty"`
}

// gateCache remembers what each record said, by the record's commit: a
// view reads the records at every change of the state, and a record never
// changes (a later run of its tree is another commit).
type gateCache map[plumbing.Hash]gateSeen

type gateSeen struct {
	run     GateRun
	feature string // "" for a record that does not count, or has no gates
}

// gateRuns lists feature's gate runs, oldest first; cache (kept between
// calls when not nil) is brought to the records there are now.
func gateRuns(s *gitstore.Store, feature string, cache gateCache) ([]GateRun, error) {
	runs := []GateRun{}
	seen := map[plumbing.Hash]bool{}
	for _, prefix := range []string{gitstore.GatesPrefix, gitstore.GatesFailedPrefix} {
		refs, err := s.RefsUnder(prefix)
		if err != nil {
			return nil, err
		}
		for name, h := range refs {
			seen[h] = true
			g, ok := cache[h]
			if !ok {
				g = readGateRun(s, h, strings.TrimPrefix(name, prefix))
				if cache != nil {
					cache[h] = g
				}
			}
			if g.feature == feature {
				runs = append(runs, g.run)
			}
		}
	}
	for h := range cache {
		if !seen[h] {
			delete(cache, h)
		}
	}
	sort.Slice(runs, func(i, j int) bool {
		if !runs[i].Start.Equal(runs[j].Start) {
			return runs[i].Start.Before(runs[j].Start)
		}
		return runs[i].Tree < runs[j].Tree
	})
	return runs, nil
}

func readGateRun(s *gitstore.Store, h plumbing.Hash, tree string) gateSeen {
	rec, ok := hooks.ReadGateRecord(s, h, tree)
	if !ok || rec.Feature == "" || rec.Gates == 0 || rec.Start.IsZero() {
		return gateSeen{}
	}
	return gateSeen{feature: rec.Feature, run: GateRun{Tree: tree, Start: rec.Start, End: rec.End, Passed: rec.Passed, Failed: rec.Failed}}
}

// sameGates tells whether two lists of runs are the same runs.
func sameGates(a, b []GateRun) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Tree != b[i].Tree || !a[i].Start.Equal(b[i].Start) || a[i].Passed != b[i].Passed {
			return false
		}
	}
	return true
}
