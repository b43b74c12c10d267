package main

import (
	"errors"
	"fmt"
	"github.com/go-git/go-git/v5/plumbing"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/proc"
	"github.com/git-zerg/git-zerg/state"
)

type doneOptions struct {
	worker string
	commit string
	task   string
}

func doneCmd(e *env) *cli.Command {
	var o doneOptions
	return &cli.Command{
		Name:      "done",
		Usage:     "check a claimed task's work and move it on",
		ArgsUsage: "TASK",
		Description: "The work is REV (default HEAD) compared with the commit the task was claimed on.\n" +
			"It must be a new commit touching only the task's files; the tool then runs the\n" +
			"verification command itself. In a worker worktree the task becomes verified (the\n" +
			"level merge makes it done); anywhere else it becomes done. A failed verification\n" +
			"records a failed attempt and exits 1; a refused gate exits 3 and writes nothing.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "worker", Aliases: []string{"w"}, Usage: "worker `NAME`", Destination: &o.worker},
			&cli.StringFlag{Name: "commit", Usage: "the work is `REV`", Destination: &o.commit},
		},
		Action: func(c *cli.Context) error {
			a, err := args(c, 1, 1)
			if err != nil {
				return err
			}
			o.task = a[0]
			return runDone(e, &o)
		},
	}
}

// workFacts gathers, from git, what the done gate needs to know about the
// work: whether it is new, the paths it touches, whether it is on the
// integration branch.
func workFacts(e *env, s *gitstore.Store, t *state.Task, rev string, mode gates.Mode) (gates.DoneFacts, error) {
	f := gates.DoneFacts{Task: t, Mode: mode}
	commit := rev
	if !plumbing.IsHash(rev) {
		c, err := s.Git.Line(e.ctx, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
		if err != nil || c == "" {
			return f, usageErr("no commit %q", rev)
		}
		commit = c
	}
	f.Commit = commit
	if commit != t.Base {
		ok, err := s.IsAncestor(e.ctx, plumbing.NewHash(t.Base), plumbing.NewHash(commit))
		if err != nil {
			return f, err
		}
		if !ok {
			return f, refused("done "+t.ID()+" refused", fmt.Sprintf("commit %s does not descend from the claim's base %s", shortHash(commit), shortHash(t.Base)))
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
		} else if err := sharedWork(e, s, &f, commit); err != nil {
			return f, err
		}
	}
	if mode == gates.Shared && f.NewCommit {
		head, err := headCommit(s)
		if err != nil {
			return f, err
		}
		if f.Reachable, err = s.IsAncestor(e.ctx, plumbing.NewHash(commit), plumbing.NewHash(head)); err != nil {
			return f, err
		}
	}
	return f, nil
}

// verify runs the task's verification command in dir, as the tool, with
// the task's timeout (default: workers.timeout).
func verify(e *env, t *state.Task, dir string, def time.Duration, env []string) (gates.Verification, error) {
	timeout := def
	if ts := t.Spec.Verification.TimeoutSeconds; ts > 0 {
		timeout = time.Duration(ts) * time.Second
	}
	res, err := proc.Run(e.ctx, proc.Spec{Command: t.Spec.Verification.Command, Dir: dir, Timeout: timeout, Env: env})
	if err != nil {
		return gates.Verification{}, err
	}
	return gates.Verification{Ran: true, ExitCode: res.ExitCode, TimedOut: res.TimedOut, Output: proc.LastLines(res.Tail, 3)}, nil
}

func runDone(e *env, o *doneOptions) error {
	if err := checkWorker(o.worker); err != nil {
		return err
	}
	s, tx, feature, err := e.view()
	if err != nil {
		return err
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	t, err := tx.Task(o.task)
	if errors.Is(err, gitstore.ErrNotFound) {
		return usageErr("no task %q in feature %s", o.task, feature)
	} else if err != nil {
		return err
	}
	now := e.now().UTC()
	if err := gates.Holder(t, "done", o.worker); err != nil {
		return err
	}
	if !trustedTask(s, feature, t) {
		return &cliError{code: exitRefused, what: "done " + t.ID() + " refused",
			why:  "its verification command was not planned or accepted on this machine",
			hint: "review it, then git zerg plan --accept " + feature}
	}
	mode := gates.Shared
	if f, w, ok := workerOfBranch(currentBranch(s)); ok && f == feature {
		mode = gates.Worktree
		if w != o.worker {
			return refused("done "+t.ID()+" refused", fmt.Sprintf("this worktree belongs to %s, not %s", w, o.worker))
		}
	}
	rev := o.commit
	if rev == "" {
		rev = "HEAD"
	}
	facts, err := workFacts(e, s, t, rev, mode)
	if err != nil {
		return err
	}
	facts.Worker, facts.Owner, facts.Now = o.worker, workerOwner(o.worker), now
	if facts.Locks, err = tx.Locks(); err != nil {
		return err
	}
	if err := gates.DoneWork(facts); err != nil {
		return err
	}
	dir := s.Top
	v, err := verify(e, t, dir, time.Duration(cfg.Workers.Timeout), nil)
	if err != nil {
		return err
	}
	to, reason := gates.Outcome(mode, v)
	final, _, err := recordDone(e, s, feature, policyOf(cfg), o.worker, facts, to, reason, nil)
	if err != nil {
		return err
	}
	if e.json {
		if err := writeJSON(e.stdout, taskOut(final, false)); err != nil {
			return err
		}
	} else if to != state.Failed {
		fmt.Fprintf(e.stdout, "%s %s %s\n", final.ID(), final.Status, shortHash(final.Commit))
	}
	if to == state.Failed {
		return failed(failedWhat(e, final), strings.TrimSpace(reason))
	}
	return nil
}

func failedWhat(e *env, t *state.Task) string {
	what := fmt.Sprintf("%s failed", t.ID())
	if t.Status == state.Blocked {
		return what + ", now blocked (attempts exhausted)"
	}
	return what + fmt.Sprintf(", retry after %s", roundDur(t.NotBefore.Sub(e.now())))
}

// recordDone records the outcome of a done whose facts were gathered: the
// gates are asked again inside the transaction, against the state as it is
// when the transaction commits.
//
// then, when set, claims the worker's next task in the same transaction
// (a rush's worker moving on); the claimed task is returned as next.
func recordDone(e *env, s *gitstore.Store, feature string, policy gates.Policy, worker string, facts gates.DoneFacts, to state.Status, reason string, then *claimRequest) (final, next *state.Task, err error) {
	err = s.Update(e.ctx, feature, e.now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		final, next = nil, nil
		x := &txn{tx: tx, now: e.now().UTC(), policy: policy}
		if then != nil {
			x.ttl = then.ttl
		}
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
		msg := &gitstore.Message{Op: "done", Task: t.ID(), Worker: t.Owner, From: string(state.Claimed)}
		if to == state.Failed {
			t.Record(x.event("done", state.Failed, worker, reason, f.Commit))
			next, notBefore := policy.AfterFailure(t, x.now)
			if next == state.Blocked {
				t.Record(x.event("block", state.Blocked, worker, "attempts exhausted", ""))
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
			t.Record(x.event("done", to, worker, "", f.Commit))
			t.Commit, t.Reason = f.Commit, ""
			msg.Subject = fmt.Sprintf("done %s (%s): %s %s", t.ID(), worker, to, shortHash(f.Commit))
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
	return final, next, err
}

// chain claims the worker's next task after msg's transition, in the same
// transaction, when then asks for it.
func (x *txn) chain(msg *gitstore.Message, then *claimRequest, next **state.Task) (*gitstore.Message, error) {
	if then == nil {
		return msg, nil
	}
	t, _, cm, err := x.claim(*then)
	if err != nil {
		var ref *gates.Refusal
		if errors.As(err, &ref) {
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
func sharedWork(e *env, s *gitstore.Store, f *gates.DoneFacts, commit string) error {
	touched, own, err := ownWork(e, s, f.Task, f.Task.Base, commit, func() ([]*state.Task, error) {
		_, tx, _, err := e.view()
		if err != nil {
			return nil, err
		}
		return tx.Tasks()
	})
	f.Touched, f.NewCommit = touched, own
	return err
}

// ownWork is the task's own work between base and commit on a shared
// branch (see gates.OwnWork); tasks gives the feature's tasks, read only
// when some commit touches paths the task does not own. fsck replays
// shared-mode done with it too.
func ownWork(e *env, s *gitstore.Store, t *state.Task, base, commit string, tasks func() ([]*state.Task, error)) (touched []string, own bool, err error) {
	out, err := s.Git.Run(e.ctx, "log", "-z", "--format=%x01%H", "--name-only", "--no-renames", base+".."+commit, "--")
	if err != nil {
		return nil, false, err
	}
	var commits []gates.CommitFiles
	all := true
	for _, chunk := range strings.Split(string(out), "\x01") {
		if chunk == "" {
			continue
		}
		hash, rest, _ := strings.Cut(chunk, "\x00")
		c := gates.CommitFiles{Commit: hash}
		for _, p := range strings.Split(strings.TrimPrefix(rest, "\n"), "\x00") {
			if p != "" {
				c.Files = append(c.Files, p)
				all = all && len(gates.Unowned(t.Spec, []string{p})) == 0
			}
		}
		commits = append(commits, c)
	}
	var others []*state.Task
	if !all {
		all, err := tasks()
		if err != nil {
			return nil, false, err
		}
		for _, o := range all {
			if o.ID() != t.ID() && (o.Status == state.Claimed || o.Status == state.Verified || o.Status == state.Done) {
				others = append(others, o)
			}
		}
	}
	touched, n := gates.OwnWork(commits, func(p string) bool {
		for _, o := range others {
			if len(gates.Unowned(o.Spec, []string{p})) == 0 {
				return true
			}
		}
		return false
	})
	return touched, n > 0, nil
}
