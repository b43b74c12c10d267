package main

import (
	"io"

	"github.com/urfave/cli/v2"
)

func logsCmd(e *env) *cli.Command {
	var attempt int
	var follow bool
	return &cli.Command{
		Name:      "logs",
		Usage:     "print a worker's output for a task",
		ArgsUsage: "TASK",
		Description: "Prints the log of the task's latest attempt (--attempt N for another): the worker's\n" +
			"stdout and stderr in order, each run of a checkpointed attempt after a '==' line.\n" +
			"-f follows it while the task is claimed.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "attempt", Usage: "the log of attempt `N`", Destination: &attempt},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "follow the log while the task is claimed", Destination: &follow},
		},
		Action: func(c *cli.Context) error {
			a, err := args(c, 1, 1)
			if err != nil {
				return err
			}
			if c.IsSet("attempt") && attempt < 1 {
				return usageErr("logs: --attempt must be at least 1")
			}
			g, err := e.engine()
			if err != nil {
				return err
			}
			log, err := g.OpenLog(a[0], attempt, follow)
			if err != nil {
				return err
			}
			defer log.Close()
			_, err = io.Copy(e.stdout, log)
			return err
		},
	}
}
