package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/report"
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
	_, tx, _, err := e.view()
	if err != nil {
		return err
	}
	ready, tasks, err := engine.ReadyIn(tx, engine.PolicyOf(cfg), e.now(), e.json)
	if err != nil {
		return err
	}
	if !e.json {
		for _, en := range ready {
			fmt.Fprintln(e.stdout, en.ID)
		}
		return nil
	}
	return report.WriteJSON(e.stdout, report.TasksOf(tasks))
}
