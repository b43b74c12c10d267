package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// ErrStagingAhead: staging has commits the commit it was to move up to
// lacks; moving it would drop them.
var ErrStagingAhead = errors.New("staging has commits that are not in the target")

// AdvanceStaging moves the staging branch up to commit: created there when
// missing, fast-forwarded when behind, never moved back or sideways
// (ErrStagingAhead). Task mode gates its shared branch this way.
func (m *Manager) AdvanceStaging(ctx context.Context, commit string) error {
	if err := m.check(); err != nil {
		return err
	}
	ref := m.stagingRef()
	cur, err := m.resolve1(ctx, ref)
	if err != nil {
		return err
	}
	switch {
	case cur == "":
		if _, err := m.Git.Run(ctx, "update-ref", "-m", "git-zerg: staging at HEAD for task-mode gates", ref, commit, ""); err != nil {
			return err
		}
		return m.moved(commit)
	case cur == commit:
		return nil
	}
	_, err = m.Git.Run(ctx, "merge-base", "--is-ancestor", cur, commit)
	switch gitcmd.ExitCode(err) {
	case -1:
		if err != nil {
			return err
		}
		if _, err := m.Git.Run(ctx, "update-ref", "-m", "git-zerg: staging up to HEAD for task-mode gates", ref, commit, cur); err != nil {
			return err
		}
		return m.moved(commit)
	case 1:
		return fmt.Errorf("%s: %w", StagingBranch(m.Feature), ErrStagingAhead)
	}
	return err
}

// UndoMerge moves staging back from tip, a merge of git-zerg's whose
// gates failed, to old, where it was before: what the next merge builds
// on must have passed. Compare-and-swap from tip: a move since is left.
func (m *Manager) UndoMerge(ctx context.Context, old, tip string) error {
	if err := m.check(); err != nil {
		return err
	}
	if _, err := m.Git.Run(ctx, "update-ref", "-m", "git-zerg: staging back before a merge whose gates failed", m.stagingRef(), old, tip); err != nil {
		return err
	}
	return m.moved(old)
}

// Prune forgets worktrees whose directories are gone.
func (m *Manager) Prune(ctx context.Context) error {
	worktreeMu.Lock()
	defer worktreeMu.Unlock()
	_, err := m.worktreeGit(ctx, "prune")
	return err
}

// RemoveStaging removes the gates' scratch checkout (<Root>/staging): it
// holds nothing of anyone's. It returns the directory when there was one
// to remove.
func (m *Manager) RemoveStaging(ctx context.Context) (string, error) {
	dir := filepath.Join(m.Root, "staging")
	if _, err := os.Stat(dir); err != nil {
		return "", nil
	}
	worktreeMu.Lock()
	defer worktreeMu.Unlock()
	if _, err := m.worktreeGit(ctx, "remove", "--force", dir); err != nil {
		return "", err
	}
	return dir, nil
}

// Supported checks that git worktree works in the repository at all.
func Supported(ctx context.Context, git *gitcmd.Runner) error {
	_, err := worktreeGit(ctx, git, "list", "--porcelain")
	return err
}

// BranchTip is the commit of worker n's branch, "" when it has none.
func (m *Manager) BranchTip(ctx context.Context, n int) (string, error) {
	return m.resolve1(ctx, "refs/heads/"+workerBranch(m.Feature, n))
}

// ResetBranch points worker n's branch at commit, for a branch that has no
// worktree to reset in (its tip saved first by the caller).
func (m *Manager) ResetBranch(ctx context.Context, n int, commit string) error {
	_, err := m.Git.Run(ctx, "update-ref", "-m", "git-zerg: start worker afresh", "refs/heads/"+workerBranch(m.Feature, n), commit)
	return err
}
