package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
)

func nextCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "next",
		Usage: "ready tasks, best first, without claiming",
		Description: "A task is ready when it is pending (or failed with attempts left), its hard\n" +
			"dependencies are done and its backoff has passed. Best first: lowest level,\n" +
			"then most dependents.",
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			return runNext(e)
		},
	}
}

func runNext(e *env) error {
	cfg, err := e.config()
	if err != nil {
		return err
	}
	sn, err := e.snapshot()
	if err != nil {
		return err
	}
	ready := engine.PolicyOf(cfg).ReadyOrder(sn.tasks, e.now())
	if e.json {
		out := []taskJSON{}
		for _, t := range ready {
			out = append(out, taskOut(t, false))
		}
		return writeJSON(e.stdout, out)
	}
	for _, t := range ready {
		fmt.Fprintln(e.stdout, t.ID())
	}
	return nil
}
