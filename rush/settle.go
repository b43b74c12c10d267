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
	"github.com/git-zerg/git-zerg/words"
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
	st := &settling{ctx: ctx, s: s, t: t, w: w, res: res, commit: commit, then: then}
	if res.interrupted {
		return r.giveBack(s, t, w, commit, res.usage())
	}
	if reason, block, failed := r.exitFailure(st); failed {
		return r.settleFail(st, reason, block)
	}
	facts, ended, next, err := r.checkedFacts(st)
	if ended {
		return next, err
	}
	return r.verifyAndRecord(st, facts)
}

// settling is a worker's exit being settled: what its transition needs.
type settling struct {
	ctx    context.Context
	s      *gitstore.Store
	t      *state.Task
	w      *worktree.Worker
	res    workResult
	commit string               // the worktree's HEAD, the worker's edits committed
	then   *engine.ClaimRequest // the worker's next task, claimed with the transition
}

// settleFail records the attempt failed (blocked when block is set), its
// commit saved under the attempt refs first.
func (r *rush) settleFail(st *settling, reason string, block bool) (*state.Task, error) {
	t := st.t
	if st.commit != "" && st.commit != t.Base {
		r.saveAttempt(st.ctx, t, st.commit)
	}
	ft, next, err := r.with(st.s).Fail(engine.Failure{Worker: st.w.Name, Task: t.ID(), Reason: reason, Block: block, Then: st.then, Usage: st.res.usage()})
	if err != nil {
		return nil, err
	}
	r.g.Emit(engine.Event{Type: engine.EvTransition, Task: t.ID(), Text: string(ft.Status) + ": " + reason, Status: ft.Status, Reason: reason})
	return next, nil
}

// exitFailure is what the worker's exit alone says of the attempt: failed
// says it failed, with its reason and whether the task is blocked. A
// worker command that cannot run stops the rush, and nothing new is
// claimed.
func (r *rush) exitFailure(st *settling) (reason string, block, failed bool) {
	res, t := st.res, st.t
	switch {
	case res.notFound:
		reason := fmt.Sprintf("worker command not found (exit %d): %s", res.exit, res.why())
		r.halt.CompareAndSwap(nil, &engine.Error{Kind: engine.Failed, What: "rush stopped: the worker command cannot run",
			Why: res.why(), Hint: "check workers.command in .zerg/config.toml, then git zerg retry " + t.ID() + " and git zerg rush --resume"})
		st.then = nil // the next task would fail the same way
		return reason, true, true
	case res.timedOut:
		return "worker timed out", false, true
	case res.stalled:
		return fmt.Sprintf("no progress for %s: no output and no change in its worktree", time.Duration(r.cfg.Workers.StallTimeout)), false, true
	case res.result != nil && res.result.IsError:
		// What the agent said goes into the shared state: no secrets in it.
		msg := proc.Scrub(res.result.Message, os.Environ())
		if msg == "" {
			msg = res.why()
		}
		return "the agent reported an error: " + msg, false, true
	case res.exit == 3:
		reason := "worker says blocked (no reason on its stderr)"
		if why := res.why(); why != "" {
			reason = "worker says blocked: " + why
		}
		return reason, true, true
	case res.exit == 4:
		return "escalation: " + res.why(), true, true
	case res.exit != 0:
		reason := fmt.Sprintf("worker exited %d", res.exit)
		if res.tail != "" {
			reason += ": " + res.tail
		} else {
			reason += " (no output on its stderr)"
		}
		return reason, false, true
	}
	return "", false, false
}

// checkedFacts is the facts of the work of a worker that exited 0, held to
// the done gates' rules. ended is the settle's end here, with next and
// err: the work refused (a failed attempt, or blocked), or a failure of
// the tool.
func (r *rush) checkedFacts(st *settling) (facts gates.DoneFacts, ended bool, next *state.Task, err error) {
	t, s, w := st.t, st.s, st.w
	facts, err = r.with(s).WorkFacts(t, st.commit, gates.Worktree)
	if err != nil {
		var ce *engine.Error
		if errors.As(err, &ce) {
			next, err = r.settleFail(st, ce.Error(), true)
			return facts, true, next, err
		}
		return facts, true, nil, err
	}
	facts.Worker, facts.Owner, facts.Now = w.Name, engine.Owner(s.Host(), w.Name), r.g.Time().UTC()
	tx, err := s.View(r.feature)
	if err != nil {
		return facts, true, nil, err
	}
	if facts.Locks, err = tx.Locks(); err != nil {
		return facts, true, nil, err
	}
	if err := gates.DoneWork(facts); err != nil {
		var ref *gates.Refusal
		if !errors.As(err, &ref) {
			return facts, true, nil, err
		}
		// No commit at all is a failed attempt; work outside the task's
		// files (or on someone's lock) is refused for good.
		block := facts.NewCommit || len(t.Spec.Owned()) == 0
		next, err = r.settleFail(st, strings.Join(ref.Reasons, "; "), block)
		return facts, true, next, err
	}
	return facts, false, nil, nil
}

// verifyAndRecord runs the task's verification on the work's commit alone
// and records the outcome: verified, or a failed attempt whose commit is
// saved. An interrupt that cut the verification short gives the task
// back; a claim lost meanwhile records nothing.
func (r *rush) verifyAndRecord(st *settling, facts gates.DoneFacts) (*state.Task, error) {
	ctx, s, t, w, res := st.ctx, st.s, st.t, st.w, st.res
	dir, err := r.verifyCheckout(ctx, w, facts.Commit)
	if err != nil {
		var ce *worktree.CheckoutError
		if errors.As(err, &ce) {
			return r.settleFail(st, ce.Error(), false)
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
	final, next, err := r.with(s).RecordDone(w.Name, facts, to, reason, res.usage(), st.then)
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
		r.g.Transition(t.ID(), "verified "+words.ShortHash(facts.Commit))
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
