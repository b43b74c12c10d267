package worktree

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// Staging follows a branch of the user's, the one the first rush ran
// from: a fix committed there after a rush failed must reach the workers
// of the next. Which branch is git's own upstream setting of the staging
// branch (branch.<staging>.remote = ".", .merge = the branch), so that
// `git status` in a staging checkout and `staging@{upstream}` say it too.

// Base is the branch staging follows and the commit it is at, "" when it
// follows none.
func (m *Manager) Base(ctx context.Context) (branch, commit string, err error) {
	up := StagingBranch(m.Feature) + "@{upstream}"
	out, err := m.Git.Run(ctx, "rev-parse", "--verify", "-q", "--symbolic-full-name", up)
	if err != nil {
		if gitcmd.ExitCode(err) > 0 {
			return "", "", nil // no upstream set
		}
		return "", "", err
	}
	ref := strings.TrimSpace(string(out))
	branch, ok := strings.CutPrefix(ref, "refs/heads/")
	if !ok {
		return "", "", nil // a remote-tracking branch: not one a rush follows
	}
	commit, err = m.resolve1(ctx, ref)
	if err != nil || commit == "" {
		return "", "", err
	}
	return branch, commit, nil
}

// SetBase makes staging follow branch.
func (m *Manager) SetBase(ctx context.Context, branch string) error {
	_, err := m.Git.Run(ctx, "branch", "--set-upstream-to=refs/heads/"+branch, StagingBranch(m.Feature))
	return err
}

// Behind counts the base's commits staging lacks.
func (m *Manager) Behind(ctx context.Context) (branch string, n int, err error) {
	branch, base, err := m.Base(ctx)
	if err != nil || branch == "" {
		return branch, 0, err
	}
	out, err := m.Git.Run(ctx, "rev-list", "--count", "refs/heads/"+StagingBranch(m.Feature)+".."+base)
	if err != nil {
		return branch, 0, err
	}
	n, err = strconv.Atoi(strings.TrimSpace(string(out)))
	return branch, n, err
}

// FollowBase merges the base's commits that staging lacks into staging:
// one merge commit made in the object store alone and one compare-and-swap
// of the branch, the user's checkout untouched. It returns the tip to
// build on and how many commits came in. A conflict is a *Conflict naming
// the base branch (as Task) and the files; staging does not move.
func (m *Manager) FollowBase(ctx context.Context) (tip string, took int, err error) {
	tip, err = m.EnsureStaging(ctx, "")
	if err != nil {
		return "", 0, err
	}
	branch, n, err := m.Behind(ctx)
	if err != nil || n == 0 {
		return tip, 0, err
	}
	_, base, err := m.Base(ctx)
	if err != nil {
		return "", 0, err
	}
	next, err := m.MergeCommits(ctx, []string{StagingBranch(m.Feature), branch}, []string{tip, base},
		fmt.Sprintf("merge %s into staging", branch))
	if err != nil {
		return "", 0, err
	}
	if _, err := m.Git.Run(ctx, "update-ref", "-m", "git-zerg: staging follows "+branch, m.stagingRef(), next, tip); err != nil {
		return "", 0, fmt.Errorf("move %s: %w", StagingBranch(m.Feature), err)
	}
	return next, n, m.moved(next)
}
