package engine

import (
	"errors"
	"fmt"

	"github.com/git-zerg/git-zerg/worktree"
)

// StageHead readies task mode's gates. Task mode commits to the current
// branch, while the gates run on the staging branch (in a worktree of their
// own, cached by tree): staging is moved up to HEAD, created there when
// missing, fast-forwarded when behind, never moved back or sideways.
func (g *Engine) StageHead() error {
	if g.Store.Top == "" {
		return usageErr("claude-gates needs a work tree (this is a bare repository)")
	}
	head, err := HeadCommit(g.Store)
	if err != nil {
		return err
	}
	err = g.Manager().AdvanceStaging(g.ctx(), head)
	if errors.Is(err, worktree.ErrStagingAhead) {
		branch := worktree.StagingBranch(g.Feature)
		return &Error{Kind: Refused, What: "gates refused",
			Why:  fmt.Sprintf("%s has commits that HEAD lacks: the gates would not run on the work of this branch", branch),
			Hint: "merge " + branch + " into this branch, or run git zerg gates run to gate staging as it is"}
	}
	return err
}
