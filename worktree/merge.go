package worktree

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// Pin is a task's verified commit, to be merged into staging.
type Pin struct {
	Task   string
	Commit string
}

// Conflict is a pin that does not merge cleanly into staging.
type Conflict struct {
	Task   string
	Commit string   // the pinned commit, resolved
	Files  []string // the conflicted paths, as git-merge-tree lists them
}

// Error lets a caller return the conflict as it is.
func (c *Conflict) Error() string {
	return fmt.Sprintf("merge conflict: task %s does not merge into staging: %s",
		c.Task, strings.Join(c.Files, ", "))
}

// MergeResult is the outcome of a level merge.
type MergeResult struct {
	Old      string    // staging tip the merge started from
	Tip      string    // staging tip afterwards (Old when nothing moved)
	Tree     string    // the tree of Tip, the key for gate results
	Merged   []string  // tasks merged, in order
	Skipped  []string  // tasks whose commit staging already had
	Conflict *Conflict // the first conflict; staging did not move
}

// Merge merges the pinned commits into the staging branch one by one, in
// order, as a 3-way merge in the object store (`git merge-tree
// --write-tree`, then `git commit-tree` with two parents, message "merge
// <task> into staging"), and moves refs/heads/zerg/<f>/staging once, with a
// compare-and-swap from the old tip to the new. No work tree, index or HEAD
// is read or written.
//
// staging is the tip the caller expects staging at (empty: wherever it is
// now). A pin whose commit staging already has is skipped. The level is all
// or nothing: at the first conflict Merge returns a nil error and
// MergeResult.Conflict (also an error, for callers that want to return it),
// and staging does not move. If staging is not at the expected tip, or
// moves while the merge runs, Merge returns ErrStagingMoved and writes no
// ref. Merge refuses (ErrCheckedOut) while the staging branch is checked
// out in a worktree, as git fetch does, since moving it would change that
// checkout under its user.
func (m *Manager) Merge(ctx context.Context, staging string, pins []Pin) (MergeResult, error) {
	var res MergeResult
	if err := m.check(); err != nil {
		return res, err
	}
	ref := m.stagingRef()
	revs := []string{ref}
	if staging != "" {
		revs = append(revs, staging)
	}
	for _, p := range pins {
		revs = append(revs, p.Commit)
	}
	c, err := m.resolve(ctx, revs...)
	if err != nil {
		return res, err
	}
	actual := c[0]
	if actual == "" {
		return res, ErrNoStaging
	}
	res.Old, c = actual, c[1:]
	if staging != "" {
		if c[0] == "" {
			return res, fmt.Errorf("expected staging %q: %w", staging, ErrBadRevision)
		}
		res.Old, c = c[0], c[1:]
		if res.Old != actual {
			return res, ErrStagingMoved
		}
	}
	for i, p := range pins {
		if c[i] == "" {
			return res, fmt.Errorf("task %s: commit %q: %w", p.Task, p.Commit, ErrBadRevision)
		}
	}
	list, err := m.entries(ctx)
	if err != nil {
		return res, err
	}
	for _, e := range list {
		if e.branch == ref {
			return res, fmt.Errorf("%s in %s: %w", StagingBranch(m.Feature), e.dir, ErrCheckedOut)
		}
	}

	call := gitcmd.Call{Env: m.identity()}
	cur := res.Old
	for i, p := range pins {
		commit := c[i]
		_, err := m.Git.Run(ctx, "merge-base", "--is-ancestor", commit, cur)
		if err == nil {
			res.Skipped = append(res.Skipped, p.Task)
			continue
		}
		if gitcmd.ExitCode(err) != 1 { // 1: not an ancestor
			return res, err
		}
		out, err := m.Git.Run(ctx, "merge-tree", "--write-tree", "--no-messages", "--name-only", "-z", cur, commit)
		fields := gitcmd.Split(out, 0)
		switch code := gitcmd.ExitCode(err); {
		case code == 1 && len(fields) > 0:
			res.Tip, res.Tree, res.Merged = res.Old, "", nil
			res.Conflict = &Conflict{Task: p.Task, Commit: commit, Files: uniq(fields[1:])}
			return res, nil
		case err != nil:
			return res, err
		case len(fields) == 0:
			return res, fmt.Errorf("git merge-tree: no tree for task %s", p.Task)
		}
		res.Tree = fields[0]
		task := p.Task
		if task == "" {
			task = commit
		}
		next, err := m.Git.RunWith(ctx, call, "commit-tree", res.Tree, "-p", cur, "-p", commit,
			"-m", "merge "+task+" into staging")
		if err != nil {
			return res, err
		}
		cur = strings.TrimSpace(string(next))
		res.Merged = append(res.Merged, p.Task)
	}
	res.Tip = cur
	if cur == res.Old {
		tree, err := m.Git.Line(ctx, "rev-parse", "--verify", "-q", cur+"^{tree}")
		if err != nil {
			return res, err
		}
		res.Tree = tree
		return res, nil
	}
	if beforeCAS != nil {
		beforeCAS()
	}
	_, err = m.Git.Run(ctx, "update-ref", "-m", "git-zerg: merge level into staging", ref, cur, res.Old)
	if err != nil {
		// Tell a lost compare-and-swap from other failures by looking.
		if now, rerr := m.resolve1(ctx, ref); rerr == nil && now != res.Old {
			res.Tip, res.Tree, res.Merged, res.Skipped = res.Old, "", nil, nil
			return res, errors.Join(ErrStagingMoved, err)
		}
		return res, err
	}
	return res, m.moved(cur)
}

// beforeCAS, when set by a test, runs just before staging is moved.
var beforeCAS func()

func uniq(s []string) []string {
	seen := make(map[string]bool, len(s))
	out := make([]string, 0, len(s))
	for _, x := range s {
		if x != "" && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// StagingFree returns ErrCheckedOut when the staging branch is checked out
// in some worktree: moving it would change that checkout under its user.
func (m *Manager) StagingFree(ctx context.Context) error {
	list, err := m.entries(ctx)
	if err != nil {
		return err
	}
	ref := m.stagingRef()
	for _, e := range list {
		if e.branch == ref {
			return fmt.Errorf("%s in %s: %w", StagingBranch(m.Feature), e.dir, ErrCheckedOut)
		}
	}
	return nil
}

// StagingRef is the full ref name of the staging branch.
func (m *Manager) StagingRef() string { return m.stagingRef() }
