package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
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
	return &cli.Command{
		Name:      "retry",
		Usage:     "give blocked or failed tasks a new start (→ pending)",
		ArgsUsage: "TASK...",
		Description: "Attempts start again from zero; the history keeps every earlier one. Several\n" +
			"tasks are retried together or not at all: exit 2 for an unknown id, 3 for a task\n" +
			"that is neither blocked nor failed, and then nothing is written.",
		Action: func(c *cli.Context) error {
			a, err := args(c, 1, -1)
			if err != nil {
				return err
			}
			return runRetry(e, a)
		},
	}
}

func approveCmd(e *env) *cli.Command {
	var o taskOpOptions
	return taskCmd(e, "approve", "approve a high or critical risk task so that it can be claimed", "", nil, &o, runApprove)
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
	g, err := e.engine()
	if err != nil {
		return err
	}
	t, err := g.Release(o.worker, o.task)
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
	g, err := e.engine()
	if err != nil {
		return err
	}
	t, _, err := g.Fail(engine.Failure{Worker: o.worker, Task: o.task, Reason: o.reason})
	if err != nil {
		return err
	}
	return e.printTask(t)
}

func runRetry(e *env, ids []string) error {
	g, err := e.engine()
	if err != nil {
		return err
	}
	ts, err := g.Retry(ids...)
	if err != nil {
		return err
	}
	if e.json && len(ts) == 1 {
		return writeJSON(e.stdout, taskOut(ts[0], false))
	}
	if e.json {
		out := make([]any, len(ts))
		for i, t := range ts {
			out[i] = taskOut(t, false)
		}
		return writeJSON(e.stdout, out)
	}
	for _, t := range ts {
		if err := e.printTask(t); err != nil {
			return err
		}
	}
	return nil
}

func runApprove(e *env, o *taskOpOptions) error {
	g, err := e.engine()
	if err != nil {
		return err
	}
	t, who, err := g.Approve(o.task)
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
	g, err := e.engine()
	if err != nil {
		return err
	}
	lease, err := g.Heartbeat(o.worker)
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, workerJSON{lease.Name, lease.Owner, lease.Task, lease.Since.UTC(), lease.Expires.UTC(), lease.Host, lease.PID})
	}
	fmt.Fprintf(e.stdout, "%s holds %s until %s\n", lease.Name, lease.Task, lease.Expires.UTC().Format(time.RFC3339))
	return nil
}
