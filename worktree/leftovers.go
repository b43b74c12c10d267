package worktree

import (
	"context"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// commit commits the index of worktree dir with message, as git-zerg.
// Git's auto maintenance waits for the rush's end (it would run in the
// middle of one, at git's whim), and no hook may refuse or change what
// git-zerg keeps of a worker's work.
func (m *Manager) commit(ctx context.Context, dir, message string) error {
	_, err := m.at(dir).RunWith(ctx, gitcmd.Call{Env: m.identity()}, "-c", "maintenance.auto=false", "commit", "-q", "--no-verify", "-m", message)
	return err
}

// CommitLeftovers commits whatever the worker left uncommitted in its
// worktree (untracked files too; what its ignore rules hide stays out) as
// git-zerg, with message. Nothing to commit is no error. The caller reads
// the worktree's HEAD afterwards, without a git process.
func (m *Manager) CommitLeftovers(ctx context.Context, w Worker, message string) error {
	wt := m.at(w.Dir)
	// Stage everything, then commit; "nothing to commit" is git's exit 1
	// with an index equal to HEAD. Two git processes whether or not the
	// worker committed, instead of asking `status` first.
	if _, err := wt.Run(ctx, "add", "-A"); err != nil {
		return err
	}
	err := m.commit(ctx, w.Dir, message)
	if err == nil || gitcmd.ExitCode(err) != 1 {
		return err
	}
	if _, derr := wt.Run(ctx, "diff", "--cached", "--quiet"); derr != nil {
		return err // staged changes and still no commit: a real failure
	}
	return nil
}

// SaveLeftovers commits what a worktree holds, if anything (what a rush
// that crashed mid-task left in it), as git-zerg with message, and
// returns its HEAD: the commit to keep before the worktree is reset.
func (m *Manager) SaveLeftovers(ctx context.Context, w Worker, message string) (head string, err error) {
	wt := m.at(w.Dir)
	if st, _ := wt.Run(ctx, "status", "--porcelain", "-z", "--untracked-files=all"); len(st) > 0 {
		if _, err := wt.Run(ctx, "add", "-A"); err != nil {
			return "", err
		}
		if err := m.commit(ctx, w.Dir, message); err != nil {
			return "", err
		}
	}
	return wt.Line(ctx, "rev-parse", "HEAD")
}

// ResetWorker moves the worker's branch and worktree to commit, dropping
// its uncommitted changes: callers save them first (SaveLeftovers).
// Ignored and untracked files stay.
func (m *Manager) ResetWorker(ctx context.Context, w Worker, commit string) error {
	_, err := m.at(w.Dir).Run(ctx, "reset", "-q", "--hard", commit)
	return err
}

// ResetForTask readies a worker's worktree for its next task at commit:
// reset, then untracked files removed. The last task's work is committed
// and kept by then; what its verification left (logs, scratch files) is
// not the next task's work, and without the clean its leftover commit
// would carry them, and refuse them as unowned. Ignored files (.env from
// .worktreeinclude, build caches) stay.
func (m *Manager) ResetForTask(ctx context.Context, w Worker, commit string) error {
	if err := m.ResetWorker(ctx, w, commit); err != nil {
		return err
	}
	_, err := m.at(w.Dir).Run(ctx, "clean", "-q", "-f", "-d")
	return err
}
