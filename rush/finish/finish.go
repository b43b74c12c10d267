// Package finish is what comes after a rush: a complete feature's
// staging merged into the user's branch once its gates passed here
// (Feature), and the worktrees, worker branches and files the rush left
// removed, never work staging lacks (Cleanup). Both act on the state and
// the worktrees through engine and worktree, and on what a rush left
// running through rush.
package finish

import (
	"errors"
	"fmt"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/engine/rushmarker"
	"github.com/git-zerg/git-zerg/hooks"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
	"github.com/git-zerg/git-zerg/worktree"
)

// Finished is what finishing a feature did.
type Finished struct {
	Feature string
	Staging string // the staging branch
	Tip     string // the staging commit merged
	Merged  *worktree.Merged
	// Cleaned is the cleanup after the merge; nil when the cleanup kept
	// something (Feature's error then says what).
	Cleaned *Cleaned
}

// Feature merges a complete feature's staging into the branch checked out
// in the user's work tree, then removes its worktrees and worker branches
// (Cleanup). It refuses (kind Refused), writing nothing, a feature that is
// not complete, a staging tree the quality gates did not pass here, a
// running rush, and what MergeIntoHead refuses (uncommitted changes the
// merge would touch, a conflict, a detached HEAD). When the merge is done
// and the cleanup keeps something, the Finished comes back with the
// cleanup's error.
func Feature(g *engine.Engine) (*Finished, error) {
	s, feature := g.Store, g.Feature
	refused := func(why, hint string) error {
		return &engine.Error{Kind: engine.Refused, What: "finish " + feature + " refused", Why: why, Hint: hint}
	}
	if s.Top == "" {
		return nil, engine.UsageError("finish needs a work tree (this is a bare repository)")
	}
	// State that git-zerg did not write is replayed before its word
	// "complete" is taken: an epic's features too, not only the one a
	// command named.
	if err := g.CheckState(); err != nil {
		return nil, err
	}
	tasks, err := g.Tasks()
	if err != nil {
		return nil, err
	}
	done := words.Counts(tasks)[string(state.Done)]
	if len(tasks) == 0 || done < len(tasks) {
		return nil, refused(fmt.Sprintf("the feature is not complete: %d of %d tasks done", done, len(tasks)),
			"git zerg rush runs the rest; git zerg status shows what is left")
	}
	if pid, ok := rushAlive(g); ok {
		return nil, refused(fmt.Sprintf("a rush of %s is running (pid %d)", feature, pid), "wait for it to end")
	}
	mgr := g.Manager()
	branch := worktree.StagingBranch(feature)
	if h, err := s.ReadRef("refs/heads/" + branch); err != nil {
		return nil, err
	} else if h.IsZero() {
		return nil, refused("it has no staging branch "+branch, "git zerg rush makes it")
	}
	// The guarded read: a staging tip git-zerg did not set is judged (and
	// put back when it fails) before it can reach the user's branch.
	tip, err := mgr.EnsureStaging(g.Context(), "")
	if err != nil {
		return nil, err
	}
	tree, err := s.TreeOf(tip)
	if err != nil {
		return nil, err
	}
	if !hooks.PassedHere(s, tree, hooks.GateSet(g.Config.Gates)) {
		return nil, refused(fmt.Sprintf("the quality gates have not passed here on %s (tree %s)", branch, words.ShortHash(tree)),
			"git zerg gates run runs them on staging")
	}
	merged, err := mgr.MergeIntoHead(g.Context(), s.Top, tip, fmt.Sprintf("Merge branch '%s': finish %s", branch, feature))
	if err != nil {
		var fe *worktree.FinishError
		if errors.As(err, &fe) {
			return nil, finishRefusal(feature, branch, fe)
		}
		return nil, engine.FailedError("finish "+feature+": git merge "+branch+" failed", err.Error())
	}
	out := &Finished{Feature: feature, Staging: branch, Tip: tip, Merged: merged}
	c, err := Cleanup(g, CleanupOptions{})
	if err != nil {
		return out, err
	}
	out.Cleaned = c
	return out, nil
}

func finishRefusal(feature, branch string, fe *worktree.FinishError) error {
	e := &engine.Error{Kind: engine.Refused, What: "finish " + feature + " refused", Why: fe.Error(), Err: fe}
	switch {
	case errors.Is(fe, worktree.ErrDetached):
		e.Hint = "git switch BRANCH (the branch to finish into), then git zerg finish"
	case errors.Is(fe, worktree.ErrZergBranch):
		e.Why = fe.Branch + " is git-zerg's own branch"
		e.Hint = "git switch BRANCH (the branch to finish into), then git zerg finish"
	case errors.Is(fe, worktree.ErrConflict):
		e.Why = "merging " + branch + " into " + fe.Branch + " would conflict"
		if len(fe.Paths) > 0 {
			e.Why += " in " + fe.PathList()
		}
		e.Hint = "merge it by hand: git merge " + branch + ", then git zerg cleanup"
	case errors.Is(fe, worktree.ErrOverlap):
		e.Hint = "commit those changes or move them aside, then git zerg finish again"
	}
	return e
}

// rushAlive reports a live rush of the feature on this host.
func rushAlive(g *engine.Engine) (int, bool) {
	h, alive := rushmarker.Read(g.Store, g.Feature)
	if !alive {
		return 0, false
	}
	return h.PID, true
}
