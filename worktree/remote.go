package worktree

import (
	"context"
)

// SetStaging moves the staging branch from old ("" for none) to commit by
// compare-and-swap, whichever way that goes: a host of a rush shared
// through a remote takes the remote's staging, and what its own staging
// held beyond it is still pinned under the work refs. With a Guard, the
// remote's staging must pass its check from the tip git-zerg last set
// here (a *ForeignError, and nothing moved, when it does not): another
// clone can push anything to the remote.
func (m *Manager) SetStaging(ctx context.Context, commit, old string) error {
	if err := m.check(); err != nil {
		return err
	}
	if m.Guard != nil {
		// Behind what this host set is no harm: a push of this host's
		// was lost, and its work is still pinned.
		if known := m.Guard.Known(); known != "" && known != commit && !m.isAncestor(ctx, commit, known) {
			if err := m.Guard.Check(ctx, known, commit); err != nil {
				return &ForeignError{Branch: StagingBranch(m.Feature) + " on the remote", Found: commit, Known: known, Why: err}
			}
		}
	}
	if _, err := m.Git.Run(ctx, "update-ref", "-m", "git-zerg: staging from the remote", m.stagingRef(), commit, old); err != nil {
		return err
	}
	return m.moved(commit)
}
