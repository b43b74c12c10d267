package rush

import (
	"context"
	"errors"
	"fmt"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/worktree"
)

// A worker can break its own worktree, or another's, with plain file
// commands: delete it, or point its .git file elsewhere. That is the
// attempt's failure, never the rush's: the attempt fails with a reason
// naming the worktree, what can be saved is saved, the slot is made again
// for its next task, and the other slots go on.

// brokenAttempt ends t's attempt on the broken worktree w (why says what
// is wrong with it), and returns the worker's next task.
func (r *rush) brokenAttempt(ctx context.Context, s *gitstore.Store, t *state.Task, w *worktree.Worker, why error, res workResult, then *engine.ClaimRequest) (*state.Task, error) {
	commit := r.saveBroken(ctx, t, w)
	r.dropSlot(w.N)
	r.putBackInfo(t, res.log)
	if commit != "" && commit != t.Base {
		r.saveAttempt(ctx, t, commit)
	}
	reason := fmt.Sprintf("%v; the slot's worktree is made again", why)
	ft, next, err := r.with(s).Fail(engine.Failure{Worker: w.Name, Task: t.ID(), Reason: reason, Then: then, Usage: res.usage()})
	if err != nil {
		return nil, err
	}
	r.g.Emit(engine.Event{Type: engine.EvTransition, Task: t.ID(), Text: string(ft.Status) + ": " + reason, Status: ft.Status, Reason: reason})
	return next, nil
}

// saveBroken keeps what a broken worktree holds, and returns the commit to
// save: the worktree is mended and its leftovers committed as usual when
// it can be; else it is moved aside whole, for a person to look at, and
// the commit is what the worker committed on its branch.
func (r *rush) saveBroken(ctx context.Context, t *state.Task, w *worktree.Worker) string {
	rep, err := r.mgr.Repair(ctx, *w)
	if err != nil {
		r.g.Note("%s: could not mend %s (%v)", w.Name, w.Dir, err)
	}
	r.noteRepaired(w.Name, w.Dir, rep)
	if err == nil && (rep == nil || !rep.Gone && rep.Aside == "") {
		c, err := r.commitLeftovers(ctx, t, w)
		if err == nil {
			return c
		}
		// git fails in it all the same (an index the worker corrupted, say):
		// its files are kept where no slot will use them.
		aside, merr := r.mgr.MoveAside(ctx, *w)
		if merr != nil {
			r.g.Note("%s: could not move %s aside (%v)", w.Name, w.Dir, merr)
		} else if aside != "" {
			r.g.Note("%s: moved %s aside to %s, with everything in it (git fails in it: %s)", w.Name, w.Dir, aside, gitReason(err))
		}
	}
	tip, err := r.mgr.BranchTip(ctx, w.N)
	if err != nil {
		return ""
	}
	return tip
}

// noteRepaired tells what Repair (or Add) did to a broken worktree.
func (r *rush) noteRepaired(worker, dir string, rep *worktree.Repaired) {
	switch {
	case rep == nil:
	case rep.Gone:
		r.g.Note("%s: worktree %s is gone: made again when its slot is next used", worker, dir)
	case rep.Aside != "":
		r.g.Note("%s: worktree %s was broken (%s): moved aside to %s, with everything in it", worker, dir, rep.Problem, rep.Aside)
	default:
		r.g.Note("%s: worktree %s was broken (%s): mended", worker, dir, rep.Problem)
	}
}

// dropSlot forgets the slot's worktree: its next task adds it again.
func (r *rush) dropSlot(n int) {
	r.slotsMu.Lock()
	delete(r.slots, n)
	r.slotsMu.Unlock()
}

// gitReason is what a failed git command said, without the command.
func gitReason(err error) string {
	var ge *gitcmd.Error
	if errors.As(err, &ge) {
		return ge.Reason()
	}
	return err.Error()
}
