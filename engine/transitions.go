package engine

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/git-zerg/git-zerg/engine/trust"
	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
)

// The small transitions: heartbeat, release, fail, retry, approve. Each is a
// gate from package gates and a state change applied in one transaction.

// transition runs one task transition: load the task, ask the gate, apply.
func (g *Engine) transition1(taskID string, apply func(x *txn, t *state.Task) (*gitstore.Message, error)) (*state.Task, error) {
	var out *state.Task
	err := g.update(g.Policy(), g.TTL(), func(x *txn) (*gitstore.Message, error) {
		if !x.tx.Exists() {
			return nil, NotPlanned(g.Feature)
		}
		var t *state.Task
		if taskID != "" {
			var err error
			t, err = x.tx.Task(taskID)
			if errors.Is(err, gitstore.ErrNotFound) {
				return nil, noTask(g.Feature, taskID)
			} else if err != nil {
				return nil, err
			}
			t = t.Clone()
		}
		msg, err := apply(x, t)
		if err != nil || msg == nil {
			return msg, err
		}
		if t != nil {
			if err := x.tx.Put(t); err != nil {
				return nil, err
			}
		}
		out = t
		return msg, nil
	})
	return out, err
}

// Release gives a claimed task back without counting the attempt.
func (g *Engine) Release(worker, task string) (*state.Task, error) {
	return g.transition1(task, func(x *txn, t *state.Task) (*gitstore.Message, error) {
		if err := gates.Holder(t, "release", worker); err != nil {
			return nil, err
		}
		t.Record(x.event(state.OpRelease, state.Pending, worker, "released", ""))
		t.Attempts--
		t.Worker, t.Owner = "", ""
		if err := x.tx.DeleteWorker(worker); err != nil {
			return nil, err
		}
		if err := x.releaseLocks(t); err != nil {
			return nil, err
		}
		return &gitstore.Message{Subject: fmt.Sprintf("release %s (%s)", t.ID(), worker), Op: state.OpRelease, Task: t.ID(),
			Worker: t.Owner, From: string(state.Claimed), To: string(state.Pending)}, nil
	})
}

// Interrupt gives a task back after a person stopped the rush working on
// it: claimed → pending, the attempt not counted, the lease and locks
// released.
func (g *Engine) Interrupt(worker, task string, usage *state.Usage) (*state.Task, error) {
	return g.transition1(task, func(x *txn, t *state.Task) (*gitstore.Message, error) {
		if err := gates.Holder(t, "interrupt", worker); err != nil {
			return nil, err
		}
		owner := t.Owner
		ev := x.event(state.OpInterrupt, state.Pending, worker, "interrupted", "")
		ev.Usage = usage
		t.Record(ev)
		t.Attempts--
		t.Worker, t.Owner, t.NotBefore = "", "", time.Time{}
		if err := x.tx.DeleteWorker(worker); err != nil {
			return nil, err
		}
		if err := x.releaseLocks(t); err != nil {
			return nil, err
		}
		return &gitstore.Message{Subject: fmt.Sprintf("interrupt %s (%s)", t.ID(), worker), Op: state.OpInterrupt, Task: t.ID(),
			Worker: owner, From: string(state.Claimed), To: string(state.Pending), Reason: "interrupted"}, nil
	})
}

// Failure is a failed attempt to record.
type Failure struct {
	Worker, Task, Reason string
	// Block sends the task to blocked at once: the worker declared it
	// blocked, or its work was refused for good.
	Block bool
	// Then, when set, claims the worker's next task in the same
	// transaction (a rush's worker moving on).
	Then *ClaimRequest
	// Usage is what the attempt cost, when its agent said.
	Usage *state.Usage
}

// Fail takes a claimed task to failed; it goes on to blocked when its
// attempts are exhausted or f.Block is set. The worker's next task, when
// f.Then asks for one, is returned as next.
func (g *Engine) Fail(f Failure) (out, next *state.Task, err error) {
	policy, ttl := g.Policy(), time.Duration(0)
	if f.Then != nil {
		ttl = g.TTL()
		if err := g.prepareClaim(f.Then, policy, ttl, nil); err != nil {
			return nil, nil, err
		}
	}
	err = g.update(policy, ttl, func(x *txn) (*gitstore.Message, error) {
		out, next = nil, nil
		tx := x.tx
		t, err := tx.Task(f.Task)
		if errors.Is(err, gitstore.ErrNotFound) {
			return nil, noTask(g.Feature, f.Task)
		} else if err != nil {
			return nil, err
		}
		if err := gates.Holder(t, "fail", f.Worker); err != nil {
			return nil, err
		}
		t = t.Clone()
		ev := x.event(state.OpFail, state.Failed, f.Worker, f.Reason, "")
		ev.Usage = f.Usage
		t.Record(ev)
		nextStatus, notBefore := policy.AfterFailure(t, x.now)
		if f.Block {
			nextStatus, notBefore = state.Blocked, time.Time{}
		}
		if nextStatus == state.Blocked {
			why := "attempts exhausted"
			if f.Block {
				why = f.Reason
			}
			t.Record(x.event(state.OpBlock, state.Blocked, f.Worker, why, ""))
		}
		t.NotBefore, t.Reason = notBefore, f.Reason
		if err := tx.DeleteWorker(f.Worker); err != nil {
			return nil, err
		}
		if err := x.releaseLocks(t); err != nil {
			return nil, err
		}
		if err := tx.Put(t); err != nil {
			return nil, err
		}
		out = t
		return x.chain(&gitstore.Message{Subject: fmt.Sprintf("fail %s (%s): %s", t.ID(), f.Worker, nextStatus), Op: state.OpFail, Task: t.ID(),
			Worker: t.Owner, From: string(state.Claimed), To: string(nextStatus), Reason: f.Reason}, f.Then, &next)
	})
	return out, next, err
}

// Retried is what a retry did: the tasks retried, and those whose merged
// work it took out of staging first (a pull request closed without merge
// leaves it there), staging then at StagingTip.
type Retried struct {
	Tasks      []*state.Task
	TakenOut   []string
	StagingTip string
}

// Retry gives blocked or failed tasks a new start, all in one transaction:
// when any id is unknown or its task may not be retried, nothing is
// written, so that a retry of a list never leaves half of it retried.
// A task's work that staging holds is taken out of it first.
func (g *Engine) Retry(tasks ...string) (*Retried, error) {
	return g.retryWith(func(*gitstore.Tx) ([]string, error) { return tasks, nil })
}

// RetryAll gives every task in one of the statuses (blocked, failed) a new
// start, in one transaction: the tasks in them when it commits. None is no
// error: nothing is written, and no task is returned.
func (g *Engine) RetryAll(statuses ...state.Status) (*Retried, error) {
	return g.retryWith(func(tx *gitstore.Tx) ([]string, error) {
		ix, err := tx.Index()
		if err != nil {
			return nil, err
		}
		var ids []string
		for _, en := range ix.All() {
			if slices.Contains(statuses, en.Status) {
				ids = append(ids, en.ID)
			}
		}
		return ids, nil
	})
}

// errLookAgain: a task to retry has work whose place in staging was not
// looked at before the transaction (it changed meanwhile).
var errLookAgain = errors.New("retry: look at staging again")

// retryWith retries the tasks pick names. Staging first, outside the
// transaction, which may run more than once: the tasks are checked as the
// transaction will check them, their merged work taken out (a revert made
// once: TakeOutAll finds its own, so a retry stopped between the two runs
// again to the same end; a conflict refuses the retry with nothing
// written), then the state changes, on the condition that every task it
// retries had its work looked at.
func (g *Engine) retryWith(pick func(*gitstore.Tx) ([]string, error)) (*Retried, error) {
	res := &Retried{}
	looked := map[string]string{} // task -> the commit looked for in staging
	for round := 0; ; round++ {
		tx, err := g.View()
		if err != nil {
			return nil, err
		}
		ids, err := pick(tx)
		if err != nil {
			return nil, err
		}
		if len(ids) == 0 {
			return res, nil
		}
		ts, err := g.retryable(tx, ids)
		if err != nil {
			return nil, err
		}
		var outs []*state.Task
		for _, t := range ts {
			if c, ok := looked[t.ID()]; !ok || c != t.Commit {
				outs = append(outs, t)
				looked[t.ID()] = t.Commit
			}
		}
		if len(outs) > 0 {
			out, err := g.takeOut("retry", outs, "retry it together with the tasks merged after it that change them")
			if err != nil {
				return nil, err
			}
			res.TakenOut = append(res.TakenOut, out.Reverted...)
			if len(out.Reverted) > 0 {
				res.StagingTip = out.Tip
			}
		}
		err = g.update(g.Policy(), g.TTL(), func(x *txn) (*gitstore.Message, error) {
			if !x.tx.Exists() {
				return nil, NotPlanned(g.Feature)
			}
			ids, err := pick(x.tx)
			if err != nil {
				return nil, err
			}
			res.Tasks = nil
			if len(ids) == 0 {
				return nil, nil
			}
			ts, err := g.retryable(x.tx, ids)
			if err != nil {
				return nil, err
			}
			for _, t := range ts {
				if c, ok := looked[t.ID()]; !ok || c != t.Commit {
					return nil, errLookAgain
				}
			}
			var msg *gitstore.Message
			res.Tasks, msg, err = g.retry(x, ts)
			return msg, err
		})
		if errors.Is(err, errLookAgain) && round < 3 {
			continue
		}
		if err != nil {
			return nil, err
		}
		// Only what was retried: a task taken out in an earlier round may
		// have left the list since.
		in := map[string]bool{}
		for _, t := range res.Tasks {
			in[t.ID()] = true
		}
		res.TakenOut = slices.DeleteFunc(res.TakenOut, func(id string) bool { return !in[id] })
		return res, nil
	}
}

// retryable reads the tasks and checks that each may be retried: all or
// none, the error naming every id that is unknown, or every task that may
// not be retried. The tasks are clones, to change.
func (g *Engine) retryable(tx *gitstore.Tx, tasks []string) ([]*state.Task, error) {
	var out []*state.Task
	var unknown, why []string
	seen := map[string]bool{}
	for _, id := range tasks {
		if seen[id] {
			return nil, UsageError("task %q given twice", id)
		}
		seen[id] = true
		t, err := tx.Task(id)
		if errors.Is(err, gitstore.ErrNotFound) {
			unknown = append(unknown, id)
			continue
		} else if err != nil {
			return nil, err
		}
		t = t.Clone()
		if err := gates.Retry(t); err != nil {
			var r *gates.Refusal
			if len(tasks) == 1 || !errors.As(err, &r) {
				return nil, err
			}
			why = append(why, t.ID()+": "+strings.Join(r.Reasons, ", "))
			continue
		}
		out = append(out, t)
	}
	switch {
	case len(unknown) == 1 && len(tasks) == 1:
		return nil, noTask(g.Feature, unknown[0])
	case len(unknown) > 0:
		return nil, &Error{Kind: Usage, What: fmt.Sprintf("no task %s in feature %s", quoteList(unknown), g.Feature),
			Why: "nothing retried", Hint: "git zerg status lists the tasks"}
	case len(why) > 0:
		return nil, &Error{Kind: Refused, What: "retry refused", Why: strings.Join(why, "; ") + "; nothing retried"}
	}
	return out, nil
}

// retry records the new start of tasks retryable let through.
func (g *Engine) retry(x *txn, out []*state.Task) ([]*state.Task, *gitstore.Message, error) {
	who := g.UserIdentity()
	from := string(out[0].Status)
	for _, t := range out {
		if string(t.Status) != from {
			from = ""
		}
		t.Record(x.event(state.OpRetry, state.Pending, "", "retry by "+who, ""))
		t.Attempts, t.NotBefore, t.Reason, t.Worker, t.Owner = 0, time.Time{}, "", "", ""
		// A new start is reviewed anew: the old pull request is history.
		t.PR = 0
		if err := x.tx.Put(t); err != nil {
			return nil, nil, err
		}
	}
	ids := make([]string, len(out))
	for i, t := range out {
		ids[i] = t.ID()
	}
	// The message names the first task; log shows the others as
	// "also", as it does for any commit that changes several tasks.
	return out, &gitstore.Message{Subject: "retry " + strings.Join(ids, " "), Op: state.OpRetry, Task: ids[0], Worker: who,
		From: from, To: string(state.Pending)}, nil
}

func quoteList(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = strconv.Quote(id)
	}
	return strings.Join(q, ", ")
}

// Approve lets a high or critical risk task be claimed; who approved is
// returned with it. An approval is this machine's, given to the task as it
// now is: the task must be the one planned or accepted here, the approval
// is recorded here with its digest (a changed task needs one again), and a
// task that the shared state has approved by another clone is approved
// here without a second transition.
func (g *Engine) Approve(task string) (*state.Task, string, error) {
	who := g.UserIdentity()
	tr, err := trust.Open(g.Store, g.Feature)
	if err != nil {
		return nil, "", err
	}
	var seen *state.Task
	t, err := g.transition1(task, func(x *txn, t *state.Task) (*gitstore.Message, error) {
		seen = t
		if e := checkTrusted(tr, "approve "+t.ID()+" refused", t, g.Feature); e != nil {
			return nil, e
		}
		if t.Approved != "" && !tr.ApprovedHere(t) {
			// Approved in the shared state by another clone: the gate, as
			// if it were not, decides; the state needs no second approval.
			here := *t
			here.Approved = ""
			return nil, gates.Approve(&here)
		}
		if err := gates.Approve(t); err != nil {
			return nil, err
		}
		t.Record(x.event(state.OpApprove, t.Status, "", "approved by "+who, ""))
		t.Approved = who
		return &gitstore.Message{Subject: fmt.Sprintf("approve %s (%s risk)", t.ID(), t.Spec.Risk), Op: state.OpApprove,
			Task: t.ID(), Worker: who, From: string(t.Status), To: string(t.Status)}, nil
	})
	if err != nil {
		return nil, "", err
	}
	if t == nil {
		t = seen
	}
	if err := trust.Approve(g.Store, g.Feature, t); err != nil {
		// The trust file changed since the check above: refused as that
		// check refuses.
		var de *trust.DistrustError
		if errors.As(err, &de) {
			return nil, "", untrusted("approve "+t.ID()+" refused", de.Why, g.Feature)
		}
		return nil, "", err
	}
	return t, who, nil
}

// Heartbeat extends a worker's lease and its task's locks by the TTL. An
// error of kind Refused ("claim lost") says the worker holds no claim any
// more: its lease expired, which is recorded on the way, or it never had
// one.
func (g *Engine) Heartbeat(worker string) (*state.Worker, error) {
	lease, lost, err := g.RenewLease(worker, g.TTL())
	if err != nil {
		return nil, err
	}
	if lost != "" {
		return nil, RefusedError("claim lost", lost)
	}
	return lease, nil
}

// RenewLease is Heartbeat by ttl, a lost claim said in lost instead of
// an error: a rush renews its workers' leases in the background, and
// what it settles decides what a lost claim means.
func (g *Engine) RenewLease(worker string, ttl time.Duration) (*state.Worker, string, error) {
	var lease *state.Worker
	lost := ""
	feature := g.Feature
	err := g.update(gates.DefaultPolicy, ttl, func(x *txn) (*gitstore.Message, error) {
		tx := x.tx
		if !tx.Exists() {
			return nil, NotPlanned(feature)
		}
		lease, lost = nil, ""
		ws, err := tx.Workers()
		if err != nil {
			return nil, err
		}
		w, ok := ws[worker]
		if ok && !x.now.Before(w.Expires) {
			lost = fmt.Sprintf("the lease of %s on %s expired at %s", worker, w.Task, w.Expires.UTC().Format(time.RFC3339))
		} else if !ok {
			lost = fmt.Sprintf("worker %s holds no claim", worker)
		}
		if lost != "" {
			// Record the expiries we found, then answer "claim lost".
			if _, err := x.expireLeases(); err != nil {
				return nil, err
			}
			return &gitstore.Message{Subject: "expire leases", Op: state.OpExpire}, nil
		}
		w2 := *w
		w2.Expires = x.now.Add(ttl)
		if err := tx.PutWorker(&w2); err != nil {
			return nil, err
		}
		locks, err := tx.Locks()
		if err != nil {
			return nil, err
		}
		renewed := make([]state.Lock, 0, len(locks))
		for _, l := range locks {
			if l.Feature == feature && l.Task == w.Task && l.Owner == w.Owner {
				l.Expires = w2.Expires
			}
			if l.Active(x.now) {
				renewed = append(renewed, l)
			}
		}
		tx.SetLocks(renewed)
		lease = &w2
		return &gitstore.Message{Subject: fmt.Sprintf("heartbeat %s (%s)", w.Task, worker), Op: state.OpHeartbeat,
			Task: w.Task, Worker: w.Owner}, nil
	})
	return lease, lost, err
}
