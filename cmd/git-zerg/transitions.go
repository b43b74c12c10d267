package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/printable"
	"github.com/git-zerg/git-zerg/report"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
)

// The small transitions: heartbeat, release, fail, retry, approve. Each is a
// gate from package gates and a state change applied in one transaction.

func workerFlag(dst *string) cli.Flag {
	return &cli.StringFlag{Name: "worker", Aliases: []string{"w"}, Usage: "worker `NAME`", Destination: dst}
}

func heartbeatCmd(e *env) *cli.Command {
	var worker string
	return &cli.Command{
		Name:  "heartbeat",
		Usage: "extend the worker's lease and locks",
		Description: "Exit 3 (claim lost) when the worker holds no claim any more, for instance after\n" +
			"its lease expired and the task went back to pending.",
		Flags: []cli.Flag{workerFlag(&worker)},
		Action: withArgs(0, 0, func([]string) error {
			g, err := e.workerEngine(worker)
			if err != nil {
				return err
			}
			lease, err := g.Heartbeat(worker)
			if err != nil {
				return err
			}
			if e.json {
				return report.WriteJSON(e.stdout, report.WorkerOf(lease))
			}
			fmt.Fprintf(e.stdout, "%s holds %s until %s\n", lease.Name, lease.Task, lease.Expires.UTC().Format(time.RFC3339))
			return nil
		}),
	}
}

// taskCmd is a command on one task.
func taskCmd(name, usage, description string, flags []cli.Flag, run func(task string) error) *cli.Command {
	return &cli.Command{
		Name:        name,
		Usage:       usage,
		ArgsUsage:   "TASK",
		Description: description,
		Flags:       flags,
		Action:      withArgs(1, 1, func(a []string) error { return run(a[0]) }),
	}
}

func releaseCmd(e *env) *cli.Command {
	var worker string
	return taskCmd("release", "give a claimed task back (claimed → pending)",
		"The attempt is not counted: releasing is not failing.",
		[]cli.Flag{workerFlag(&worker)}, func(task string) error {
			g, err := e.workerEngine(worker)
			if err != nil {
				return err
			}
			return e.printTask(g.Release(worker, task))
		})
}

func failCmd(e *env) *cli.Command {
	var worker, reason string
	return taskCmd("fail", "record a failed attempt (claimed → failed)",
		"The task is retried after its backoff while attempts remain, then blocked.",
		[]cli.Flag{workerFlag(&worker), &cli.StringFlag{Name: "reason", Usage: "why, in one line", Destination: &reason}},
		func(task string) error {
			if err := engine.CheckWorker(worker); err != nil {
				return err
			}
			if reason == "" {
				return usageErr("fail: --reason is required")
			}
			g, err := e.engine()
			if err != nil {
				return err
			}
			t, _, err := g.Fail(engine.Failure{Worker: worker, Task: task, Reason: reason})
			return e.printTask(t, err)
		})
}

func retryCmd(e *env) *cli.Command {
	var blocked, failed bool
	return &cli.Command{
		Name:      "retry",
		Usage:     "give blocked or failed tasks a new start (→ pending)",
		ArgsUsage: "TASK... | --blocked | --failed",
		Description: "Attempts start again from zero; the history keeps every earlier one. Several\n" +
			"tasks are retried together or not at all: exit 2 for an unknown id, 3 for a task\n" +
			"that is neither blocked nor failed, and then nothing is written. --blocked (and\n" +
			"--failed) retries every task blocked (failed) when it commits; none is no error.\n" +
			"A task's work that staging holds (its pull request closed without merge) is taken\n" +
			"out of it first, by a revert commit; when work merged since changes the same files,\n" +
			"the retry is refused (exit 1) and nothing is written.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "blocked", Usage: "retry every blocked task", Destination: &blocked},
			&cli.BoolFlag{Name: "failed", Usage: "retry every failed task", Destination: &failed},
		},
		Action: func(c *cli.Context) error {
			min := 1
			if blocked || failed {
				min = 0
			}
			a, err := args(c, min, -1)
			if err != nil {
				return err
			}
			if len(a) > 0 && (blocked || failed) {
				return usageErr("retry: name tasks or give --blocked/--failed, not both")
			}
			g, err := e.engine()
			if err != nil {
				return err
			}
			var res *engine.Retried
			if len(a) > 0 {
				res, err = g.Retry(a...)
			} else {
				var which []state.Status
				if blocked {
					which = append(which, state.Blocked)
				}
				if failed {
					which = append(which, state.Failed)
				}
				res, err = g.RetryAll(which...)
				if err == nil && len(res.Tasks) == 0 {
					fmt.Fprintf(e.stderr, "note: no task of feature %s to retry\n", g.Feature)
				}
			}
			if err != nil {
				return err
			}
			for _, id := range res.TakenOut {
				fmt.Fprintf(e.stderr, "%s: its work taken out of staging (staging at %s; the next rush gates it)\n", id, words.ShortHash(res.StagingTip))
			}
			ts := res.Tasks
			return report.WriteTransition(e.stdout, ts, e.json)
		},
	}
}

func approveCmd(e *env) *cli.Command {
	return taskCmd("approve", "approve a high or critical risk task so that it can be claimed", "An approval is this machine's, given to the task as it now is: a task changed since\n"+
		"(by a re-plan or a sync) needs approving again, and an approval that arrived by sync\n"+
		"from another clone does not count here until it is given here too.", nil, func(task string) error {
		g, err := e.engine()
		if err != nil {
			return err
		}
		t, who, err := g.Approve(task)
		if err != nil || e.json {
			return e.printTask(t, err)
		}
		if t.Approved != who {
			fmt.Fprintf(e.stdout, "%s approved here by %s (the shared state has it approved by %s)\n", t.ID(), who, printable.String(t.Approved))
			return nil
		}
		fmt.Fprintf(e.stdout, "%s approved by %s\n", t.ID(), who)
		return nil
	})
}

// workerEngine is the engine of the current feature for a command that
// names its worker.
func (e *env) workerEngine(worker string) (*engine.Engine, error) {
	if err := engine.CheckWorker(worker); err != nil {
		return nil, err
	}
	return e.engine()
}

// printTask prints the task a transition left, or returns its error.
func (e *env) printTask(t *state.Task, err error) error {
	if err != nil {
		return err
	}
	return report.WriteTransition(e.stdout, []*state.Task{t}, e.json)
}
