package rush

import (
	"context"
	"errors"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/worktree"
)

// verifyCheckout is where the verification of commit runs for the slot of
// w: its verification checkout, holding the commit and nothing a worker
// left (see worktree.Manager.VerifyCheckout). Files of .worktreeinclude
// left out, or a setup that failed, are noted; the verification runs all
// the same, as the worker did.
func (r *rush) verifyCheckout(ctx context.Context, w *worktree.Worker, commit string) (string, error) {
	dir, err := r.mgr.VerifyCheckout(ctx, w.N, commit)
	var ie *worktree.IncludeError
	var se *worktree.SetupError
	switch {
	case err == nil:
	case errors.As(err, &ie):
		r.g.Note("%s: %s", w.Name, engine.IncludeNote(ie))
	case errors.As(err, &se):
		r.g.Note("%s: worktrees.setup failed in the verification checkout: %v", w.Name, err)
	default:
		return "", err
	}
	return dir, nil
}
