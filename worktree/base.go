package worktree

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// Staging follows a branch of the user's, the one the first rush ran
// from: a fix committed there after a rush failed must reach the workers
// of the next. Which branch is git's own upstream setting of the staging
// branch (branch.<staging>.remote = ".", .merge = the branch), so that
// `git status` in a staging checkout and `staging@{upstream}` say it too.

// SetBase makes staging follow branch. git takes .git/config's lock
// without waiting, so two features' rushes starting at once (an epic's,
// or two of the user's) fail each other's setting ("could not lock config
// file"); a failed write changed nothing, so it is tried again, a bounded
// number of times.
func (m *Manager) SetBase(ctx context.Context, branch string) error {
	var err error
	for attempt := 0; attempt < 8; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 10 * time.Millisecond)
		}
		_, err = m.Git.Run(ctx, "branch", "--set-upstream-to=refs/heads/"+branch, StagingBranch(m.Feature))
		var ge *gitcmd.Error
		if err == nil || !errors.As(err, &ge) || !strings.Contains(ge.Stderr, "could not lock config file") {
			return err
		}
	}
	return err
}

// Behind counts the base's commits staging lacks: one git process
// (for-each-ref's upstream tracking), as status asks it every time.
func (m *Manager) Behind(ctx context.Context) (branch string, n int, err error) {
	out, err := m.Git.Run(ctx, "for-each-ref", "--format=%(upstream)%00%(upstream:track,nobracket)", m.stagingRef())
	if err != nil {
		return "", 0, err
	}
	up, track, _ := strings.Cut(strings.TrimSpace(string(out)), "\x00")
	branch, ok := strings.CutPrefix(up, "refs/heads/")
	if !ok {
		return "", 0, nil // none, or a remote-tracking branch: not one a rush follows
	}
	for _, part := range strings.Split(track, ", ") {
		if v, ok := strings.CutPrefix(part, "behind "); ok {
			n, err = strconv.Atoi(v)
		}
	}
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
	base, err := m.resolve1(ctx, "refs/heads/"+branch)
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
