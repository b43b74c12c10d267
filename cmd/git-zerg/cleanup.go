package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/report"
	"github.com/git-zerg/git-zerg/rush/finish"
)

type cleanupOptions struct {
	state bool
	force bool
}

func cleanupCmd(e *env) *cli.Command {
	var o cleanupOptions
	return &cli.Command{
		Name:  "cleanup",
		Usage: "remove the feature's worktrees and worker branches",
		Description: "A worktree with uncommitted changes, or a worker branch with commits that staging\n" +
			"lacks, is kept (exit 3, naming it) unless --force. The staging branch is the result\n" +
			"and is always kept. --state also deletes the feature's refs under refs/zerg/.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "state", Usage: "also delete the feature's state refs", Destination: &o.state},
			&cli.BoolFlag{Name: "force", Usage: "discard uncommitted or unmerged worker work", Destination: &o.force},
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			return runCleanup(e, &o)
		},
	}
}

func runCleanup(e *env, o *cleanupOptions) error {
	g, err := e.engine()
	if err != nil {
		return err
	}
	g.Events = func(ev engine.Event) { fmt.Fprintln(e.stderr, ev.Text) }
	c, err := finish.Cleanup(g, finish.CleanupOptions{State: o.state, Force: o.force})
	if err != nil {
		return err
	}
	if e.json {
		return report.WriteJSON(e.stdout, report.CleanupOf(g.Feature, c))
	}
	report.CleanupText(e.stdout, g.Feature, c)
	return nil
}
