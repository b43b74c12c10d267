package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/state"
)

type logsOptions struct {
	attempt int
	follow  bool
}

func logsCmd(e *env) *cli.Command {
	var o logsOptions
	return &cli.Command{
		Name:      "logs",
		Usage:     "print a worker's output for a task",
		ArgsUsage: "TASK",
		Description: "Prints the log of the task's latest attempt (--attempt N for another): the worker's\n" +
			"stdout and stderr in order, each run of a checkpointed attempt after a '==' line.\n" +
			"-f follows it while the task is claimed.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "attempt", Usage: "the log of attempt `N`", Destination: &o.attempt},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "follow the log while the task is claimed", Destination: &o.follow},
		},
		Action: func(c *cli.Context) error {
			a, err := args(c, 1, 1)
			if err != nil {
				return err
			}
			if c.IsSet("attempt") && o.attempt < 1 {
				return usageErr("logs: --attempt must be at least 1")
			}
			return runLogs(e, a[0], &o)
		},
	}
}

func runLogs(e *env, task string, o *logsOptions) error {
	g, err := e.engine()
	if err != nil {
		return err
	}
	path, err := g.LogPath(task, o.attempt)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.Copy(e.stdout, f); err != nil {
		return err
	}
	if !o.follow {
		return nil
	}
	// Followed while a worker may still write: the state says when it is
	// over, and what is left in the file is printed then.
	for {
		t, err := g.Task(task)
		if err != nil {
			return err
		}
		if t.Status != state.Claimed {
			_, err := io.Copy(e.stdout, f)
			return err
		}
		select {
		case <-e.ctx.Done():
			return nil
		case <-time.After(250 * time.Millisecond):
		}
		if _, err := io.Copy(e.stdout, f); err != nil {
			return fmt.Errorf("follow %s: %w", path, err)
		}
	}
}
