package rush

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/words"
	"github.com/git-zerg/git-zerg/worktree"
)

// slot returns the slot's worktree at tip. The first time, the worktree is
// added (or reused, or rescued from a crash); after that, the previous
// task's work is committed and pinned or saved, so a reset is all it takes
// — a git process instead of the dozen that checking from scratch costs.
// hasSlot reports whether this rush has set up slot n's worktree.
func (r *rush) hasSlot(n int) bool {
	r.slotsMu.Lock()
	defer r.slotsMu.Unlock()
	return r.slots[n] != nil
}

func (r *rush) slot(ctx context.Context, n int, tip string) (*worktree.Worker, error) {
	r.slotsMu.Lock()
	w := r.slots[n]
	r.slotsMu.Unlock()
	if w != nil {
		if w, err := r.reuseSlot(ctx, w, tip); w != nil || err != nil {
			return w, err
		}
	}
	w, err := r.mgr.Add(ctx, n, tip)
	var we *worktree.Error
	if errors.As(err, &we) && (errors.Is(err, worktree.ErrDirty) || errors.Is(err, worktree.ErrUnmerged)) && w == nil {
		// Leftovers of an earlier rush on this slot: keep them under a
		// ref, then start the slot afresh.
		w, err = r.rescueSlot(ctx, n, tip)
	}
	if err != nil && !r.usableSlot(n, w, err) {
		return nil, err
	}
	r.noteRepaired(WorkerName(n), w.Dir, w.Repaired)
	if r.link.Remote != "" {
		w.Name = hostWorker(r.s.Host(), w.Name)
	}
	r.slotsMu.Lock()
	if r.slots == nil {
		r.slots = map[int]*worktree.Worker{}
	}
	r.slots[n] = w
	r.slotsMu.Unlock()
	return w, nil
}

// reuseSlot resets the slot's worktree to tip for its next task. It
// returns nil (and no error) when the worktree has to be made again: it
// was broken since its last task (by any worker: they all can reach it),
// or git fails in it; what was in it is then moved aside or mended first.
func (r *rush) reuseSlot(ctx context.Context, w *worktree.Worker, tip string) (*worktree.Worker, error) {
	if err := r.mgr.Check(ctx, *w); err != nil {
		var we *worktree.Error
		if !errors.As(err, &we) {
			return nil, err
		}
		r.dropSlot(w.N) // Add mends it, or moves it aside, and says so
		return nil, nil
	}
	err := r.mgr.ResetForTask(ctx, *w, tip)
	if err == nil {
		return w, nil
	}
	aside, merr := r.mgr.MoveAside(ctx, *w)
	if merr != nil {
		return nil, err
	}
	r.g.Note("%s: git fails in worktree %s (%s): moved aside to %s, with everything in it", w.Name, w.Dir, gitReason(err), aside)
	r.dropSlot(w.N)
	return nil, nil
}

// usableSlot reports whether a worktree that Add returned with err can
// take tasks all the same, and notes what is missing from it: the rush
// carries on without a failed setup, or without files of .worktreeinclude
// left out because a symbolic link was in their way there (a worker may
// have committed it to have the user's secrets written elsewhere).
func (r *rush) usableSlot(n int, w *worktree.Worker, err error) bool {
	if w == nil {
		return false
	}
	var ie *worktree.IncludeError
	var se *worktree.SetupError
	switch {
	case errors.As(err, &ie):
		note := engine.IncludeNote(ie)
		if r.mgr.Setup != "" {
			note += "; worktrees.setup did not run there"
		}
		r.g.Note("%s: %s", WorkerName(n), note)
	case errors.As(err, &se):
		r.g.Note("%s: worktree setup failed: %v", WorkerName(n), err)
	default:
		return false
	}
	return true
}

// rescueLeftovers saves what a crashed rush left in any worker worktree of
// the feature — not only in the slots this rush will use — so that nothing
// is lost and a later cleanup has nothing to refuse.
func (r *rush) rescueLeftovers(ctx context.Context, tip string) error {
	before := time.Now()
	ws, err := r.mgr.List(ctx)
	if err != nil {
		return err
	}
	for _, w := range ws {
		// A worktree broken while the dead rush ran is mended first, so
		// that its leftovers are saved like any other's; one that cannot
		// be is moved aside whole. (One left half-made by `git worktree
		// add` was never a worker's: Add rebuilds it.)
		var rep *worktree.Repaired
		if !w.Interrupted {
			if rep, err = r.mgr.Repair(ctx, w); err != nil {
				return err
			}
		}
		if r.noteRepaired(w.Name, w.Dir, rep); rep != nil && rep.Aside != "" {
			continue
		}
		for _, p := range r.mgr.DropStaleLocks(w, before) {
			r.g.Note("%s: removed %s, left by a git process of a rush that was killed", w.Name, p)
		}
		if _, err := os.Stat(w.Dir); err != nil || w.Interrupted {
			continue // gone (git worktree prune's business) or never used (Add rebuilds it)
		}
		dirty, err := r.mgr.Dirty(ctx, w.Dir)
		if err != nil {
			r.g.Note("%s: cannot tell whether %s holds work (%v); leaving it as it is", w.Name, w.Dir, err)
			continue
		}
		if dirty {
			// A worktree that is usable but incomplete is noted when its
			// slot is first used.
			if nw, err := r.rescueSlot(ctx, w.N, tip); err != nil && nw == nil {
				return err
			}
		}
	}
	return nil
}

// rescueSlot frees a slot whose worktree holds leftovers (a crash in the
// middle of a task): they are committed and saved under a ref, then the
// worktree is reset to the level's start.
func (r *rush) rescueSlot(ctx context.Context, slot int, tip string) (*worktree.Worker, error) {
	ws, err := r.mgr.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, w := range ws {
		if w.N != slot {
			continue
		}
		head, err := r.mgr.SaveLeftovers(ctx, w, "leftovers of "+w.Name+", saved by git-zerg")
		if err != nil {
			return nil, err
		}
		// The usual case is no crash: the slot's last task of this level
		// left its work pinned (verified) or saved (failed attempt), and
		// the branch only needs to start afresh.
		kept, err := r.s.SavedCommit(ctx, r.feature, head)
		if err != nil {
			return nil, err
		}
		if kept == "" {
			ref, err := r.s.SaveAttempt(ctx, r.feature, w.Name, head[:12], head)
			if err != nil {
				return nil, err
			}
			r.g.Note("%s: saved leftovers %s under %s", w.Name, words.ShortHash(head), ref)
		}
		if err := r.mgr.ResetWorker(ctx, w, tip); err != nil {
			return nil, err
		}
		break
	}
	w, err := r.mgr.Add(ctx, slot, tip)
	if err != nil && w == nil {
		// Last resort for a branch without a worktree: its commits are in
		// no worktree to save from, so save the branch tip itself.
		if h, herr := r.mgr.BranchTip(ctx, slot); herr == nil && h != "" {
			if _, err := r.s.SaveAttempt(ctx, r.feature, WorkerName(slot), h[:12], h); err != nil {
				return nil, err
			}
			if err := r.mgr.ResetBranch(ctx, slot, tip); err != nil {
				return nil, err
			}
			return r.mgr.Add(ctx, slot, tip)
		}
		return nil, err
	}
	return w, nil
}
