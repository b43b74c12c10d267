package engine

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/engine/replay"
	"github.com/git-zerg/git-zerg/engine/trust"
	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/proc"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
	"github.com/git-zerg/git-zerg/worktree"
)

// DoneRequest asks for the claimed → verified/done transition of Task.
type DoneRequest struct {
	Worker string
	Task   string
	// Rev is the work (default HEAD where the engine's store was opened).
	Rev string
}

// Done checks a claimed task's work against the facts and moves it on: in
// a worker worktree to verified, anywhere else to done. A failed
// verification records a failed attempt and returns the task with an
// error of kind Failed; a refused gate writes nothing.
func (g *Engine) Done(r DoneRequest) (*state.Task, error) {
	s, feature := g.Store, g.Feature
	tx, err := g.View()
	if err != nil {
		return nil, err
	}
	t, err := tx.Task(r.Task)
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, noTask(feature, r.Task)
	} else if err != nil {
		return nil, err
	}
	now := g.Time().UTC()
	if err := gates.Holder(t, "done", r.Worker); err != nil {
		return nil, err
	}
	if err := g.checkTrust("done "+t.ID()+" refused", t); err != nil {
		return nil, err
	}
	mode := gates.Shared
	if f, w, ok := worktree.WorkerOf(CurrentBranch(s)); ok && f == feature {
		mode = gates.Worktree
		if w != r.Worker {
			return nil, RefusedError("done "+t.ID()+" refused", fmt.Sprintf("this worktree belongs to %s, not %s", w, r.Worker))
		}
	}
	rev := r.Rev
	if rev == "" {
		rev = "HEAD"
	}
	facts, err := g.WorkFacts(t, rev, mode)
	if err != nil {
		return nil, err
	}
	facts.Worker, facts.Owner, facts.Now = r.Worker, Owner(g.Store.Host(), r.Worker), now
	if facts.Locks, err = tx.Locks(); err != nil {
		return nil, err
	}
	if err := gates.DoneWork(facts); err != nil {
		return nil, err
	}
	to, reason, err := g.verifyCommit(t, facts.Commit, mode)
	if err != nil {
		return nil, err
	}
	final, _, err := g.RecordDone(r.Worker, facts, to, reason, nil, nil)
	if err != nil {
		return nil, err
	}
	if to == state.Failed {
		return final, FailedError(g.failedWhat(final), strings.TrimSpace(reason))
	}
	return final, nil
}

func (g *Engine) failedWhat(t *state.Task) string {
	what := fmt.Sprintf("%s failed", t.ID())
	if t.Status == state.Blocked {
		return what + ", now blocked (attempts exhausted)"
	}
	return what + fmt.Sprintf(", retry after %s", words.Duration(t.NotBefore.Sub(g.Time())))
}

// WorkFacts gathers, from git, what the done gate needs to know about the
// work: whether it is new, the paths it touches, whether it is on the
// integration branch.
func (g *Engine) WorkFacts(t *state.Task, rev string, mode gates.Mode) (gates.DoneFacts, error) {
	s := g.Store
	f := gates.DoneFacts{Task: t, Mode: mode}
	if err := g.frozenFacts(&f); err != nil {
		return f, err
	}
	commit := rev
	if !plumbing.IsHash(rev) {
		c, err := Git(s).Line(g.Context(), "rev-parse", "--verify", "--quiet", rev+"^{commit}")
		if err != nil || c == "" {
			return f, UsageError("no commit %q", rev)
		}
		commit = c
	}
	f.Commit = commit
	if commit != t.Base {
		ok, err := s.IsAncestor(g.Context(), plumbing.NewHash(t.Base), plumbing.NewHash(commit))
		if err != nil {
			return f, err
		}
		if !ok {
			return f, RefusedError("done "+t.ID()+" refused", fmt.Sprintf("commit %s does not descend from the claim's base %s", words.ShortHash(commit), words.ShortHash(t.Base)))
		}
		f.NewCommit = true
	}
	if f.NewCommit {
		if mode == gates.Worktree {
			// A worker branch holds nothing but the worker's own commits.
			// A rename touches both paths, and the task must own both.
			paths, err := s.ChangedPaths(plumbing.NewHash(t.Base), plumbing.NewHash(commit))
			if err != nil {
				return f, err
			}
			f.Touched = paths
		} else if err := g.sharedWork(&f, commit); err != nil {
			return f, err
		}
	}
	if mode == gates.Shared && f.NewCommit {
		head, err := HeadCommit(s)
		if err != nil {
			return f, err
		}
		if f.Reachable, err = s.IsAncestor(g.Context(), plumbing.NewHash(commit), plumbing.NewHash(head)); err != nil {
			return f, err
		}
	}
	return f, nil
}

// verifyCommit runs the task's verification on commit alone, in a
// checkout of its own: not where done was run, whose files the commit may
// lack (untracked, ignored, or other agents' work under way in a shared
// checkout) and which is not the tool's to clean. The checkout gets what a
// worker worktree gets besides the commit: the files .worktreeinclude
// names, and what worktrees.setup makes.
func (g *Engine) verifyCommit(t *state.Task, commit string, mode gates.Mode) (state.Status, string, error) {
	dir, remove, err := g.Manager().TempCheckout(g.Context(), commit)
	var ce *worktree.CheckoutError
	var ie *worktree.IncludeError
	var se *worktree.SetupError
	switch {
	case err == nil:
	case errors.As(err, &ce):
		return state.Failed, ce.Error(), nil
	case errors.As(err, &ie):
		g.Note("%s", IncludeNote(ie))
	case errors.As(err, &se):
		g.Note("worktrees.setup failed in the verification checkout: %v", err)
	default:
		return "", "", err
	}
	defer remove()
	v, err := g.Verify(t, dir, []string{"ZERG_WORKTREE=" + dir})
	if err != nil {
		return "", "", err
	}
	to, reason := gates.Outcome(mode, v)
	return to, reason, nil
}

// Verify runs the task's verification command in dir, as the tool, with
// the task's timeout (default: workers.timeout). The command must be one
// this machine planned or accepted, checked now: a graph synced in since
// the rush started must not get its commands run.
func (g *Engine) Verify(t *state.Task, dir string, env []string) (gates.Verification, error) {
	if err := g.checkTrust("verification of "+t.ID()+" refused", t); err != nil {
		return gates.Verification{}, err
	}
	timeout := time.Duration(g.Config.Workers.Timeout)
	if ts := t.Spec.Verification.TimeoutSeconds; ts > 0 {
		timeout = time.Duration(ts) * time.Second
	}
	res, err := proc.Run(g.RunContext(), proc.Spec{Command: t.Spec.Verification.Command, Dir: dir, Timeout: timeout, Env: env,
		Unset: Withheld(g.Config.Workers.PassEnv)})
	if err != nil {
		return gates.Verification{}, err
	}
	return gates.Verification{Ran: true, ExitCode: res.ExitCode, TimedOut: res.TimedOut, Output: proc.LastLines(res.Tail, 3)}, nil
}

// RecordDone records the outcome of a done whose facts were gathered: the
// gates are asked again inside the transaction, against the state as it is
// when the transaction commits.
//
// then, when set, claims the worker's next task in the same transaction
// (a rush's worker moving on); the claimed task is returned as next.
func (g *Engine) RecordDone(worker string, facts gates.DoneFacts, to state.Status, reason string, usage *state.Usage, then *ClaimRequest) (final, next *state.Task, err error) {
	policy, ttl := g.Policy(), time.Duration(0)
	if then != nil {
		ttl = g.TTL()
		if err := g.prepareClaim(then, policy, ttl, nil); err != nil {
			return nil, nil, err
		}
	}
	feature := g.Feature
	err = g.update(policy, ttl, func(x *txn) (*gitstore.Message, error) {
		final, next = nil, nil
		tx := x.tx
		t, err := tx.Task(facts.Task.ID())
		if err != nil {
			return nil, err
		}
		f := facts
		f.Task = t
		if f.Locks, err = tx.Locks(); err != nil {
			return nil, err
		}
		if err := gates.DoneWork(f); err != nil {
			return nil, err
		}
		t = t.Clone()
		msg := &gitstore.Message{Op: state.OpDone, Task: t.ID(), Worker: t.Owner, From: string(state.Claimed)}
		if to == state.Failed {
			ev := x.event(state.OpDone, state.Failed, worker, reason, f.Commit)
			ev.Usage = usage
			t.Record(ev)
			next, notBefore := policy.AfterFailure(t, x.now)
			if next == state.Blocked {
				t.Record(x.event(state.OpBlock, state.Blocked, worker, "attempts exhausted", ""))
			}
			t.NotBefore, t.Reason = notBefore, reason
			msg.Subject = fmt.Sprintf("done %s (%s): %s", t.ID(), worker, next)
			msg.To, msg.Reason = string(next), reason
			if err := x.releaseLocks(t); err != nil {
				return nil, err
			}
		} else {
			if to == state.Verified {
				// The worker branch moves on to the next task: the pin keeps
				// the verified commit reachable until the level merge.
				tx.SetRef(pinRef(feature, t.ID()), f.Commit)
			}
			ev := x.event(state.OpDone, to, worker, "", f.Commit)
			ev.Usage = usage
			t.Record(ev)
			t.Commit, t.Reason = f.Commit, ""
			msg.Subject = fmt.Sprintf("done %s (%s): %s %s", t.ID(), worker, to, words.ShortHash(f.Commit))
			msg.To = string(to)
			// A verified task keeps its locks until the level merge makes it
			// done: its files are not free while its work is unmerged.
			if to == state.Done {
				if err := x.releaseLocks(t); err != nil {
					return nil, err
				}
			}
		}
		if err := tx.DeleteWorker(worker); err != nil {
			return nil, err
		}
		if err := tx.Put(t); err != nil {
			return nil, err
		}
		final = t
		return x.chain(msg, then, &next)
	})
	if err == nil && final != nil && to != state.Failed {
		// Its verification passed here, just now: the merge need not run
		// it again.
		trust.RecordVerified(g.Store, g.Feature, final, facts.Commit)
	}
	return final, next, err
}

// chain claims the worker's next task after msg's transition, in the same
// transaction, when then asks for it.
func (x *txn) chain(msg *gitstore.Message, then *ClaimRequest, next **state.Task) (*gitstore.Message, error) {
	if then == nil {
		return msg, nil
	}
	t, _, cm, err := x.claim(*then)
	if err != nil {
		if nothingToClaim(err) {
			return msg, nil // nothing to chain: the scheduler will look again
		}
		return nil, err
	}
	if t != nil {
		*next = t
		msg.Subject += "; then " + cm.Subject
	}
	return msg, nil
}

// sharedWork finds the task's own work on a branch it shares with other
// workers: the commits since its base, less those that are wholly other
// tasks' work (see gates.OwnWork).
func (g *Engine) sharedWork(f *gates.DoneFacts, commit string) error {
	touched, own, err := replay.OwnWork(g.Context(), g.Store, f.Task, f.Task.Base, commit, g.Tasks)
	f.Touched, f.NewCommit = touched, own
	return err
}

// pinRef keeps a verified commit reachable until the level merge.
func pinRef(feature, task string) string { return gitstore.WorkRef(feature, task) }

// IncludeNote names every file of .worktreeinclude left out of a worktree,
// and the link in the way of each: a rush's slots note it too.
func IncludeNote(ie *worktree.IncludeError) string {
	parts := make([]string, 0, len(ie.Skipped))
	for _, u := range ie.Skipped {
		parts = append(parts, fmt.Sprintf("%s (%s is a symbolic link)", u.Path, u.Link))
	}
	return fmt.Sprintf("not copied from %s into %s, so as not to write through a symbolic link: %s",
		worktree.IncludeFile, ie.Dir, strings.Join(parts, ", "))
}
