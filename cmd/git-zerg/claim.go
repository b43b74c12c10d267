package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
)

type claimOptions struct {
	worker string
	task   string
}

func claimCmd(e *env) *cli.Command {
	var o claimOptions
	return &cli.Command{
		Name:      "claim",
		Usage:     "claim a task (or the best ready one) for a worker",
		ArgsUsage: "[TASK]",
		Description: "Prints the claimed task's id (the task object with --json). Exit 3 when the\n" +
			"gate refuses TASK, exit 4 when no task is ready to claim.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "worker", Aliases: []string{"w"}, Usage: "worker `NAME`", Destination: &o.worker},
		},
		Action: func(c *cli.Context) error {
			a, err := args(c, 0, 1)
			if err != nil {
				return err
			}
			if len(a) == 1 {
				o.task = a[0]
			}
			return runClaim(e, &o)
		},
	}
}

// errNoneReady is the exit-4 answer.
var errNoneReady = errors.New("nothing to claim")

func runClaim(e *env, o *claimOptions) error {
	if err := checkWorker(o.worker); err != nil {
		return err
	}
	feature, s, cfg, err := e.open()
	if err != nil {
		return err
	}
	base, err := headCommit(s)
	if err != nil {
		return err
	}
	claimed, why, err := claim(e, s, claimRequest{feature: feature, worker: o.worker, task: o.task, base: base,
		policy: policyOf(cfg), ttl: time.Duration(cfg.Locks.TTL), pid: rushPID(), started: os.Getenv("ZERG_RUSH_STARTED")})
	if err != nil {
		return err
	}
	if claimed == nil {
		return &cliError{code: exitNone, what: "nothing to claim right now", why: why}
	}
	if e.json {
		return writeJSON(e.stdout, taskOut(claimed, false))
	}
	fmt.Fprintln(e.stdout, claimed.ID())
	return nil
}

type claimRequest struct {
	feature, worker string
	task            string // "" for the best ready task
	base            string // the commit the work will be compared with
	policy          gates.Policy
	ttl             time.Duration
	pid             int // the rush process holding the claim, if any
	started         string
	// only, when set, restricts the best ready task to those it accepts
	// (a rush claims within the level it runs).
	only func(*state.Task) bool
}

// claim runs the pending → claimed transition. It returns the claimed
// task, or nil and why nothing could be claimed (exit 4).
func claim(e *env, s *gitstore.Store, r claimRequest) (*state.Task, string, error) {
	var claimed *state.Task
	var why string
	err := s.Update(e.ctx, r.feature, e.now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		if !tx.Exists() {
			return nil, notPlanned(r.feature)
		}
		x := &txn{tx: tx, now: e.now().UTC(), policy: r.policy, ttl: r.ttl}
		var msg *gitstore.Message
		var err error
		claimed, why, msg, err = x.claim(r)
		if err == nil && claimed == nil {
			// Expired leases found on the way are still worth recording.
			msg = &gitstore.Message{Subject: "expire leases in " + r.feature, Op: "expire"}
		}
		return msg, err
	})
	return claimed, why, err
}

// claim runs the claim gate and records pending → claimed within a
// transaction: on its own, or right after a worker's previous task settled,
// so that a rush's worker moves on in one state commit instead of two.
func (x *txn) claim(r claimRequest) (claimed *state.Task, why string, msg *gitstore.Message, err error) {
	tx := x.tx
	owner := workerOwner(r.worker)
	if _, err := x.expireLeases(); err != nil {
		return nil, "", nil, err
	}
	ws, err := tx.Workers()
	if err != nil {
		return nil, "", nil, err
	}
	held := ""
	if w, ok := ws[r.worker]; ok {
		held = w.Task
	}
	locks, err := tx.Locks()
	if err != nil {
		return nil, "", nil, err
	}
	facts := gates.ClaimFacts{Status: x.statusOf, Worker: r.worker, Owner: owner, Held: held, Locks: locks, Now: x.now}
	var t *state.Task
	if r.task != "" {
		t, err = tx.Task(r.task)
		if errors.Is(err, gitstore.ErrNotFound) {
			return nil, "", nil, usageErr("no task %q in feature %s", r.task, r.feature)
		} else if err != nil {
			return nil, "", nil, err
		}
		facts.Task = t
		if err := r.policy.Claim(facts); err != nil {
			return nil, "", nil, err
		}
	} else {
		if held != "" {
			return nil, "", nil, refused("claim refused", fmt.Sprintf("worker %s already holds %s", r.worker, held))
		}
		tasks, err := tx.Tasks()
		if err != nil {
			return nil, "", nil, err
		}
		for _, cand := range r.policy.ReadyOrder(tasks, x.now) {
			if r.only != nil && !r.only(cand) {
				continue
			}
			facts.Task = cand
			if err := r.policy.Claim(facts); err == nil {
				t = cand
				break
			} else if why == "" {
				why = err.Error()
			}
		}
		if t == nil {
			if why == "" {
				why = waitingFor(tasks, r.policy, x.now)
			}
			return nil, why, nil, nil
		}
	}
	t = t.Clone()
	if t.Status == state.Failed {
		t.Record(x.event("backoff", state.Pending, "", "backoff over", ""))
	}
	t.Record(x.event("claim", state.Claimed, r.worker, "", ""))
	t.Worker, t.Owner, t.Base, t.Commit, t.Reason = r.worker, owner, r.base, "", ""
	t.NotBefore = time.Time{}
	t.Attempts++
	if err := tx.Put(t); err != nil {
		return nil, "", nil, err
	}
	lease := &state.Worker{Name: r.worker, Owner: owner, Task: t.ID(), Since: x.now, Expires: x.now.Add(r.ttl),
		Host: gitstore.Hostname(), PID: r.pid, Started: r.started}
	if err := tx.PutWorker(lease); err != nil {
		return nil, "", nil, err
	}
	if err := x.takeLocks(t, owner, lease.Expires); err != nil {
		return nil, "", nil, err
	}
	return t, "", &gitstore.Message{Subject: fmt.Sprintf("claim %s (%s)", t.ID(), r.worker), Op: "claim", Task: t.ID(),
		Worker: owner, From: string(t.History[len(t.History)-2].To), To: string(state.Claimed)}, nil
}

// waitingFor explains why no task is ready, naming what the next task
// waits for.
func waitingFor(tasks []*state.Task, p gates.Policy, now time.Time) string {
	counts := map[state.Status]int{}
	status := gates.StatusFunc(tasks)
	var backoff, approval, deps []string
	for _, t := range tasks {
		counts[t.Status]++
		waiting := t.Status == state.Pending || p.Retryable(t)
		switch {
		case !waiting:
		case now.Before(t.NotBefore):
			backoff = append(backoff, fmt.Sprintf("%s backs off until %s", t.ID(), t.NotBefore.UTC().Format(time.RFC3339)))
		case t.NeedsApproval() && t.Approved == "":
			approval = append(approval, t.ID()+" needs approve")
		case len(gates.DepsDone(t, status)) > 0:
			deps = append(deps, t.ID())
		}
	}
	if counts[state.Done] == len(tasks) {
		return "the feature is complete"
	}
	var why []string
	if n := counts[state.Claimed]; n > 0 {
		why = append(why, fmt.Sprintf("%d claimed", n))
	}
	why = append(why, firstFew(backoff, 3)...)
	why = append(why, firstFew(approval, 3)...)
	if len(deps) > 0 {
		why = append(why, fmt.Sprintf("%d waiting for dependencies (%s)", len(deps), strings.Join(firstFew(deps, 5), ", ")))
	}
	if n := counts[state.Blocked]; n > 0 {
		why = append(why, fmt.Sprintf("%d blocked", n))
	}
	if len(why) == 0 {
		return "no pending task"
	}
	return strings.Join(why, "; ")
}

func firstFew(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("%d more", len(s)-n))
}

func notPlanned(feature string) error {
	return &cliError{code: exitUsage, what: fmt.Sprintf("feature %q is not planned", feature), hint: "git zerg features lists the planned ones"}
}

// rushPID is the pid of the rush that runs this worker, if any: it is the
// process whose death frees the claim on --resume.
func rushPID() int {
	if v := os.Getenv("ZERG_RUSH_PID"); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return 0
}
