package engine

import (
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/worktree"
)

// An epic's frozen paths and its holds (epic_hold.go) are read here, in
// the core, not handed in by package epic through an option: a done is
// judged on the frozen paths and a claim on the holds, and an option that
// every opener of an engine (a command, a hook, each copy a rush makes)
// had to remember would let work through wherever one forgot it. What is
// read is the store's record of the epic (gitstore.EpicOf); the epic
// commands themselves are in package epic.

// frozenOf returns the paths the feature's epic freezes and who freezes
// them ("epic shop v2"); none when the feature is in no epic.
func frozenOf(s *gitstore.Store, feature string) (frozen []string, by string, err error) {
	ep, err := s.EpicOf(feature)
	if err != nil || ep == nil || len(ep.Frozen) == 0 {
		return nil, "", err
	}
	return ep.Frozen, fmt.Sprintf("epic %s v%d", ep.Name, ep.Version), nil
}

// frozenFacts adds the epic's frozen paths to the facts a done is judged
// on: the gate stays pure, and the epic is read once per done.
func (g *Engine) frozenFacts(f *gates.DoneFacts) error {
	frozen, by, err := frozenOf(g.Store, g.Feature)
	f.Frozen, f.FrozenBy = frozen, by
	return err
}

// RefuseFrozen keeps work that changes a frozen path out of staging, even
// when it was verified before the path was frozen (an epic bump between a
// done and the level merge): the task is blocked with the paths named, and
// the level stops as a conflict would stop it.
func (g *Engine) RefuseFrozen(pins []worktree.Pin) (stop error, err error) {
	frozen, by, err := frozenOf(g.Store, g.Feature)
	if err != nil || len(frozen) == 0 {
		return nil, err
	}
	tx, err := g.Store.View(g.Feature)
	if err != nil {
		return nil, err
	}
	for _, p := range pins {
		t, err := tx.Task(p.Task)
		if err != nil {
			return nil, err
		}
		if t.Base == "" || !plumbing.IsHash(p.Commit) {
			continue
		}
		paths, err := g.Store.ChangedPaths(plumbing.NewHash(t.Base), plumbing.NewHash(p.Commit))
		if err != nil {
			return nil, err
		}
		fz := gates.FrozenTouched(frozen, paths)
		if len(fz) == 0 {
			continue
		}
		reason := fmt.Sprintf("changes paths frozen by %s: %s", by, strings.Join(fz, ", "))
		err = g.Store.Update(g.Context(), g.Feature, g.Time, func(tx *gitstore.Tx) (*gitstore.Message, error) {
			x := &txn{tx: tx, now: g.Time().UTC(), policy: g.Policy()}
			t, err := tx.Task(p.Task)
			if err != nil {
				return nil, err
			}
			if t.Status != state.Verified {
				return nil, nil
			}
			t = t.Clone()
			t.Record(x.event(state.OpMerge, state.Blocked, t.Worker, reason, p.Commit))
			t.Reason = reason
			if err := x.releaseLocks(t); err != nil {
				return nil, err
			}
			return &gitstore.Message{Subject: fmt.Sprintf("merge %s: frozen paths", t.ID()), Op: state.OpMerge, Task: t.ID(),
				From: string(state.Verified), To: string(state.Blocked), Reason: reason}, tx.Put(t)
		})
		if err != nil {
			return nil, err
		}
		g.Transition(p.Task, "blocked: "+reason)
		return FailedError(fmt.Sprintf("merge of %s into staging refused", p.Task), reason), nil
	}
	return nil, nil
}
