package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/report"
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

func runClaim(e *env, o *claimOptions) error {
	if err := engine.CheckWorker(o.worker); err != nil {
		return err
	}
	g, err := e.engine()
	if err != nil {
		return err
	}
	claimed, why, err := g.Claim(engine.ClaimRequest{Worker: o.worker, Task: o.task})
	if err != nil {
		return err
	}
	if claimed == nil {
		return &cliError{code: exitNone, what: "nothing to claim right now", why: why}
	}
	if e.json {
		return report.WriteJSON(e.stdout, report.TaskOf(claimed, false))
	}
	fmt.Fprintln(e.stdout, claimed.ID())
	return nil
}
