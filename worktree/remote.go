package worktree

import (
	"context"
)

// SetStaging moves the staging branch from old ("" for none) to commit by
// compare-and-swap, whichever way that goes: a host of a rush shared
// through a remote takes the remote's staging as it is, and what its own
// staging held beyond it is still pinned under the work refs.
func (m *Manager) SetStaging(ctx context.Context, commit, old string) error {
	if err := m.check(); err != nil {
		return err
	}
	_, err := m.Git.Run(ctx, "update-ref", "-m", "git-zerg: staging from the remote", m.stagingRef(), commit, old)
	return err
}
