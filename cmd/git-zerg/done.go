package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/report"
	"github.com/git-zerg/git-zerg/words"
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

func runDone(e *env, o *doneOptions) error {
	if err := engine.CheckWorker(o.worker); err != nil {
		return err
	}
	g, err := e.engine()
	if err != nil {
		return err
	}
	final, err := g.Done(engine.DoneRequest{Worker: o.worker, Task: o.task, Rev: o.commit})
	if final == nil {
		return err
	}
	if e.json {
		if werr := report.WriteJSON(e.stdout, report.TaskOf(final, false)); werr != nil {
			return werr
		}
	} else if err == nil {
		fmt.Fprintf(e.stdout, "%s %s %s\n", final.ID(), final.Status, words.ShortHash(final.Commit))
	}
	return err
}
