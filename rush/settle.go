package rush

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/proc"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/worktree"
)

// refuse blocks a claimed task before its worker runs, and returns the
// worker's next task.
func (r *rush) refuse(s *gitstore.Store, t *state.Task, w *worktree.Worker, reason string, then *engine.ClaimRequest) (*state.Task, error) {
	ft, next, err := r.with(s).Fail(engine.Failure{Worker: w.Name, Task: t.ID(), Reason: reason, Block: true, Then: then})
	if err != nil {
		return nil, err
	}
	r.g.Emit(engine.Event{Type: engine.EvTransition, Task: t.ID(), Text: string(ft.Status) + ": " + reason, Status: ft.Status, Reason: reason})
	return next, nil
}

// settle turns the worker's exit into a transition, checked by the gates.
// The worker's next task, claimed in the same transaction when then is
// set, is returned.
func (r *rush) settle(ctx context.Context, s *gitstore.Store, t *state.Task, w *worktree.Worker, res workResult, then *engine.ClaimRequest) (*state.Task, error) {
	r.link.Prefetch()
	over, reached := r.spend(res.usage(), r.cfg)
	if reached != nil {
		r.g.Emit(engine.Event{Type: engine.EvBudget, Text: reached.What})
	}
	if over {
		then = nil // the budget is spent: nothing new is claimed
	}
	if err := r.mgr.Check(ctx, *w); err != nil {
		var we *worktree.Error
		if !errors.As(err, &we) {
			return nil, err
		}
		return r.brokenAttempt(ctx, s, t, w, err, res, then)
	}
	// Whatever the exit, the worker's edits are kept: committed on its
	// branch (and saved under a ref when the attempt fails). What the
	// worker's ignore rules hide is left out: the verification, run on the
	// commit alone, judges without it.
	commit, err := r.commitLeftovers(ctx, t, w)
	if err != nil {
		return r.brokenAttempt(ctx, s, t, w, fmt.Errorf("worktree %s: git fails in it: %s", w.Dir, gitReason(err)), res, then)
	}
	r.putBackInfo(t, res.log)
	fail := func(reason string, block bool) (*state.Task, error) {
		if commit != "" && commit != t.Base {
			r.saveAttempt(ctx, t, commit)
		}
		ft, next, err := r.with(s).Fail(engine.Failure{Worker: w.Name, Task: t.ID(), Reason: reason, Block: block, Then: then, Usage: res.usage()})
		if err != nil {
			return nil, err
		}
		r.g.Emit(engine.Event{Type: engine.EvTransition, Task: t.ID(), Text: string(ft.Status) + ": " + reason, Status: ft.Status, Reason: reason})
		return next, nil
	}
	switch {
	case res.interrupted:
		return r.giveBack(s, t, w, commit, res.usage())
	case res.notFound:
		reason := fmt.Sprintf("worker command not found (exit %d): %s", res.exit, res.why())
		r.halt.CompareAndSwap(nil, &engine.Error{Kind: engine.Failed, What: "rush stopped: the worker command cannot run",
			Why: res.why(), Hint: "check workers.command in .zerg/config.toml, then git zerg retry " + t.ID() + " and git zerg rush --resume"})
		then = nil // the next task would fail the same way
		return fail(reason, true)
	case res.timedOut:
		return fail("worker timed out", false)
	case res.stalled:
		return fail(fmt.Sprintf("no progress for %s: no output and no change in its worktree", time.Duration(r.cfg.Workers.StallTimeout)), false)
	case res.result != nil && res.result.IsError:
		// What the agent said goes into the shared state: no secrets in it.
		msg := proc.Scrub(res.result.Message, os.Environ())
		if msg == "" {
			msg = res.why()
		}
		return fail("the agent reported an error: "+msg, false)
	case res.exit == 3:
		reason := "worker says blocked (no reason on its stderr)"
		if why := res.why(); why != "" {
			reason = "worker says blocked: " + why
		}
		return fail(reason, true)
	case res.exit == 4:
		return fail("escalation: "+res.why(), true)
	case res.exit != 0:
		reason := fmt.Sprintf("worker exited %d", res.exit)
		if res.tail != "" {
			reason += ": " + res.tail
		} else {
			reason += " (no output on its stderr)"
		}
		return fail(reason, false)
	}
	facts, err := r.with(s).WorkFacts(t, commit, gates.Worktree)
	if err != nil {
		var ce *engine.Error
		if errors.As(err, &ce) {
			return fail(ce.Error(), true)
		}
		return nil, err
	}
	facts.Worker, facts.Owner, facts.Now = w.Name, engine.Owner(s.Host(), w.Name), r.g.Time().UTC()
	tx, err := s.View(r.feature)
	if err != nil {
		return nil, err
	}
	if facts.Locks, err = tx.Locks(); err != nil {
		return nil, err
	}
	if err := gates.DoneWork(facts); err != nil {
		var ref *gates.Refusal
		if !errors.As(err, &ref) {
			return nil, err
		}
		// No commit at all is a failed attempt; work outside the task's
		// files (or on someone's lock) is refused for good.
		block := facts.NewCommit || len(t.Spec.Owned()) == 0
		return fail(strings.Join(ref.Reasons, "; "), block)
	}
	dir, err := r.verifyCheckout(ctx, w, facts.Commit)
	if err != nil {
		var ce *worktree.CheckoutError
		if errors.As(err, &ce) {
			return fail(ce.Error(), false)
		}
		return nil, err
	}
	env, _, _ := r.workerEnv(t, w)
	v, err := r.with(s).Verify(t, dir, append(env, "ZERG_WORKTREE="+dir))
	if err != nil {
		return nil, err
	}
	to, reason := gates.Outcome(gates.Worktree, v)
	if to == state.Failed && r.stopping() {
		// Cut short by the interrupt: not the work's failure.
		return r.giveBack(s, t, w, facts.Commit, res.usage())
	}
	if to == state.Failed {
		r.saveAttempt(ctx, t, facts.Commit)
	}
	final, next, err := r.with(s).RecordDone(w.Name, facts, to, reason, res.usage(), then)
	if err != nil {
		var ref *gates.Refusal
		if errors.As(err, &ref) {
			r.g.Transition(t.ID(), "claim lost: "+strings.Join(ref.Reasons, "; "))
			return nil, nil
		}
		return nil, err
	}
	if to == state.Failed {
		r.g.Transition(t.ID(), string(final.Status)+": "+reason)
	} else {
		r.g.Transition(t.ID(), "verified "+engine.ShortHash(facts.Commit))
	}
	return next, nil
}

// saveAttempt keeps a failed attempt's commit reachable, so nothing a
// worker did is lost when its branch moves on.
func (r *rush) saveAttempt(ctx context.Context, t *state.Task, commit string) {
	if _, err := r.s.SaveAttempt(ctx, r.feature, t.ID(), strconv.Itoa(t.AttemptNumber()), commit); err != nil {
		// The commit is still on the worker branch until its next reset.
		r.g.Note("%s: could not save attempt %d (%v)", t.ID(), t.AttemptNumber(), err)
	}
}

// commitLeftovers commits whatever the worker left uncommitted in its
// worktree, and returns the worktree's HEAD.
func (r *rush) commitLeftovers(ctx context.Context, t *state.Task, w *worktree.Worker) (string, error) {
	msg := fmt.Sprintf("%s: %s\n\nCommitted by git-zerg: %s left these changes uncommitted.", t.ID(), t.Spec.Title, w.Name)
	if err := r.mgr.CommitLeftovers(ctx, *w, msg); err != nil {
		return "", err
	}
	// A handle of its own: a look at a HEAD the worker controls shares
	// nothing with the rush's stores.
	ws, err := gitstore.Open(ctx, w.Dir)
	if err != nil {
		return "", err
	}
	defer ws.Drop()
	return engine.HeadCommit(ws)
}

// giveBack returns an interrupted task to pending without counting the
// attempt; what its worker made is saved under the attempt refs first.
func (r *rush) giveBack(s *gitstore.Store, t *state.Task, w *worktree.Worker, commit string, usage *state.Usage) (*state.Task, error) {
	if commit != "" && commit != t.Base {
		r.saveAttempt(r.g.Context(), t, commit)
	}
	if _, err := r.with(s).Interrupt(w.Name, t.ID(), usage); err != nil {
		return nil, err
	}
	if r.stopped.Load() {
		r.g.Transition(t.ID(), "interrupted: given back, the attempt not counted")
	} else {
		r.g.Transition(t.ID(), "given back, the attempt not counted: the rush stopped")
	}
	return nil, nil
}
