package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
)

// The small transitions: heartbeat, release, fail, retry, approve. Each is a
// gate from package gates and a state change applied in one transaction.

type taskOpOptions struct {
	worker string
	reason string
	task   string
}

func heartbeatCmd(e *env) *cli.Command {
	var o taskOpOptions
	return &cli.Command{
		Name:  "heartbeat",
		Usage: "extend the worker's lease and locks",
		Description: "Exit 3 (claim lost) when the worker holds no claim any more, for instance after\n" +
			"its lease expired and the task went back to pending.",
		Flags: []cli.Flag{workerFlag(&o.worker)},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			return runHeartbeat(e, &o)
		},
	}
}

func workerFlag(dst *string) cli.Flag {
	return &cli.StringFlag{Name: "worker", Aliases: []string{"w"}, Usage: "worker `NAME`", Destination: dst}
}

func taskCmd(e *env, name, usage, description string, flags []cli.Flag, o *taskOpOptions, run func(*env, *taskOpOptions) error) *cli.Command {
	return &cli.Command{
		Name:        name,
		Usage:       usage,
		ArgsUsage:   "TASK",
		Description: description,
		Flags:       flags,
		Action: func(c *cli.Context) error {
			a, err := args(c, 1, 1)
			if err != nil {
				return err
			}
			o.task = a[0]
			return run(e, o)
		},
	}
}

func releaseCmd(e *env) *cli.Command {
	var o taskOpOptions
	return taskCmd(e, "release", "give a claimed task back (claimed → pending)",
		"The attempt is not counted: releasing is not failing.",
		[]cli.Flag{workerFlag(&o.worker)}, &o, runRelease)
}

func failCmd(e *env) *cli.Command {
	var o taskOpOptions
	return taskCmd(e, "fail", "record a failed attempt (claimed → failed)",
		"The task is retried after its backoff while attempts remain, then blocked.",
		[]cli.Flag{workerFlag(&o.worker), &cli.StringFlag{Name: "reason", Usage: "why, in one line", Destination: &o.reason}},
		&o, runFail)
}

func retryCmd(e *env) *cli.Command {
	var o taskOpOptions
	return taskCmd(e, "retry", "give a blocked or failed task a new start (→ pending)",
		"Attempts start again from zero; the history keeps every earlier one.", nil, &o, runRetry)
}

func approveCmd(e *env) *cli.Command {
	var o taskOpOptions
	return taskCmd(e, "approve", "approve a high or critical risk task so that it can be claimed", "", nil, &o, runApprove)
}

// transition runs one task transition: load the task, ask the gate, apply.
func (e *env) transition(taskID string, apply func(x *txn, t *state.Task) (*gitstore.Message, error)) (*state.Task, error) {
	feature, s, cfg, err := e.open()
	if err != nil {
		return nil, err
	}
	var out *state.Task
	err = s.Update(e.ctx, feature, e.now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		if !tx.Exists() {
			return nil, notPlanned(feature)
		}
		x := &txn{tx: tx, now: e.now().UTC(), policy: policyOf(cfg), ttl: time.Duration(cfg.Locks.TTL)}
		var t *state.Task
		if taskID != "" {
			t, err = tx.Task(taskID)
			if errors.Is(err, gitstore.ErrNotFound) {
				return nil, usageErr("no task %q in feature %s", taskID, feature)
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
			if err := tx.Put(t); err != nil {
				return nil, err
			}
		}
		out = t
		return msg, nil
	})
	return out, err
}

func (e *env) printTask(t *state.Task) error {
	if e.json {
		return writeJSON(e.stdout, taskOut(t, false))
	}
	fmt.Fprintf(e.stdout, "%s %s\n", t.ID(), t.Status)
	return nil
}

func runRelease(e *env, o *taskOpOptions) error {
	if err := checkWorker(o.worker); err != nil {
		return err
	}
	t, err := e.transition(o.task, func(x *txn, t *state.Task) (*gitstore.Message, error) {
		if err := gates.Holder(t, "release", o.worker); err != nil {
			return nil, err
		}
		t.Record(x.event("release", state.Pending, o.worker, "released", ""))
		t.Attempts--
		t.Worker, t.Owner = "", ""
		if err := x.tx.DeleteWorker(o.worker); err != nil {
			return nil, err
		}
		if err := x.releaseLocks(t); err != nil {
			return nil, err
		}
		return &gitstore.Message{Subject: fmt.Sprintf("release %s (%s)", t.ID(), o.worker), Op: "release", Task: t.ID(),
			Worker: t.Owner, From: string(state.Claimed), To: string(state.Pending)}, nil
	})
	if err != nil {
		return err
	}
	return e.printTask(t)
}

func runFail(e *env, o *taskOpOptions) error {
	if err := checkWorker(o.worker); err != nil {
		return err
	}
	if o.reason == "" {
		return usageErr("fail: --reason is required")
	}
	feature, s, cfg, err := e.open()
	if err != nil {
		return err
	}
	t, _, err := recordFailure(e, s, feature, policyOf(cfg), o.worker, o.task, o.reason, false, nil)
	if err != nil {
		return err
	}
	return e.printTask(t)
}

// recordFailure takes a claimed task to failed; it goes on to blocked when
// its attempts are exhausted or block is set (the worker declared it
// blocked, or its work was refused for good).
//
// then, as in recordDone, claims the worker's next task in the same
// transaction.
func recordFailure(e *env, s *gitstore.Store, feature string, policy gates.Policy, worker, taskID, reason string, block bool, then *claimRequest) (out, next *state.Task, err error) {
	err = s.Update(e.ctx, feature, e.now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		out, next = nil, nil
		x := &txn{tx: tx, now: e.now().UTC(), policy: policy}
		if then != nil {
			x.ttl = then.ttl
		}
		t, err := tx.Task(taskID)
		if errors.Is(err, gitstore.ErrNotFound) {
			return nil, usageErr("no task %q in feature %s", taskID, feature)
		} else if err != nil {
			return nil, err
		}
		if err := gates.Holder(t, "fail", worker); err != nil {
			return nil, err
		}
		t = t.Clone()
		t.Record(x.event("fail", state.Failed, worker, reason, ""))
		nextStatus, notBefore := policy.AfterFailure(t, x.now)
		if block {
			nextStatus, notBefore = state.Blocked, time.Time{}
		}
		if nextStatus == state.Blocked {
			why := "attempts exhausted"
			if block {
				why = reason
			}
			t.Record(x.event("block", state.Blocked, worker, why, ""))
		}
		t.NotBefore, t.Reason = notBefore, reason
		if err := tx.DeleteWorker(worker); err != nil {
			return nil, err
		}
		if err := x.releaseLocks(t); err != nil {
			return nil, err
		}
		if err := tx.Put(t); err != nil {
			return nil, err
		}
		out = t
		return x.chain(&gitstore.Message{Subject: fmt.Sprintf("fail %s (%s): %s", t.ID(), worker, nextStatus), Op: "fail", Task: t.ID(),
			Worker: t.Owner, From: string(state.Claimed), To: string(nextStatus), Reason: reason}, then, &next)
	})
	return out, next, err
}

func runRetry(e *env, o *taskOpOptions) error {
	t, err := e.transition(o.task, func(x *txn, t *state.Task) (*gitstore.Message, error) {
		if err := gates.Retry(t); err != nil {
			return nil, err
		}
		from := t.Status
		t.Record(x.event("retry", state.Pending, "", "retry by "+e.userIdentity(), ""))
		t.Attempts, t.NotBefore, t.Reason, t.Worker, t.Owner = 0, time.Time{}, "", "", ""
		return &gitstore.Message{Subject: "retry " + t.ID(), Op: "retry", Task: t.ID(), Worker: e.userIdentity(),
			From: string(from), To: string(state.Pending)}, nil
	})
	if err != nil {
		return err
	}
	return e.printTask(t)
}

func runApprove(e *env, o *taskOpOptions) error {
	who := e.userIdentity()
	t, err := e.transition(o.task, func(x *txn, t *state.Task) (*gitstore.Message, error) {
		if err := gates.Approve(t); err != nil {
			return nil, err
		}
		t.Record(x.event("approve", t.Status, "", "approved by "+who, ""))
		t.Approved = who
		return &gitstore.Message{Subject: fmt.Sprintf("approve %s (%s risk)", t.ID(), t.Spec.Risk), Op: "approve",
			Task: t.ID(), Worker: who, From: string(t.Status), To: string(t.Status)}, nil
	})
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, taskOut(t, false))
	}
	fmt.Fprintf(e.stdout, "%s approved by %s\n", t.ID(), who)
	return nil
}

func runHeartbeat(e *env, o *taskOpOptions) error {
	if err := checkWorker(o.worker); err != nil {
		return err
	}
	feature, s, cfg, err := e.open()
	if err != nil {
		return err
	}
	lease, lost, err := renewLease(e, s, feature, o.worker, time.Duration(cfg.Locks.TTL))
	if err != nil {
		return err
	}
	if lost != "" {
		return refused("claim lost", lost)
	}
	if e.json {
		return writeJSON(e.stdout, workerJSON{lease.Name, lease.Owner, lease.Task, lease.Since.UTC(), lease.Expires.UTC(), lease.Host, lease.PID})
	}
	fmt.Fprintf(e.stdout, "%s holds %s until %s\n", lease.Name, lease.Task, lease.Expires.UTC().Format(time.RFC3339))
	return nil
}

// renewLease extends a worker's lease and its task's locks by ttl. lost
// says why the worker holds no claim any more (its lease expired, which is
// recorded on the way, or it never had one).
func renewLease(e *env, s *gitstore.Store, feature, worker string, ttl time.Duration) (*state.Worker, string, error) {
	var lease *state.Worker
	lost := ""
	err := s.Update(e.ctx, feature, e.now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		if !tx.Exists() {
			return nil, notPlanned(feature)
		}
		x := &txn{tx: tx, now: e.now().UTC(), policy: gates.DefaultPolicy, ttl: ttl}
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
			return &gitstore.Message{Subject: "expire leases", Op: "expire"}, nil
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
		return &gitstore.Message{Subject: fmt.Sprintf("heartbeat %s (%s)", w.Task, worker), Op: "heartbeat",
			Task: w.Task, Worker: w.Owner}, nil
	})
	return lease, lost, err
}
