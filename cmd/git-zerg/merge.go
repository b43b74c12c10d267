package main

import (
	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/report"
	"github.com/git-zerg/git-zerg/rush"
)

type mergeOptions struct{ level int }

func mergeCmd(e *env) *cli.Command {
	var o mergeOptions
	return &cli.Command{
		Name:  "merge",
		Usage: "merge verified work into staging and run the quality gates",
		Description: "Merges the pinned commits of verified tasks (of level N, or of every level) into\n" +
			"zerg/<feature>/staging with a 3-way merge that touches no work tree, then runs the\n" +
			"quality gates on the result. Exit 1 on a conflict or a failed required gate.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "level", Usage: "merge only level `N`", Destination: &o.level},
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			if c.IsSet("level") && o.level < 1 {
				return usageErr("merge: --level must be at least 1")
			}
			return runMerge(e, &o)
		},
	}
}

func gatesCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "gates",
		Usage: "quality gates",
		Subcommands: []*cli.Command{{
			Name:  "run",
			Usage: "run the configured quality gates on staging",
			Description: "A tree that passed the configured gates is not gated again: the pass is recorded\n" +
				"under refs/zerg/gates/<tree id>, a commit naming the gate set and each gate's result.\n" +
				"Adding or changing a gate runs them again; a failed run is kept under\n" +
				"refs/zerg/gates-failed/<tree id>.",
			Action: func(c *cli.Context) error {
				if _, err := args(c, 0, 0); err != nil {
					return err
				}
				return runGates(e)
			},
		}},
	}
}

func runMerge(e *env, o *mergeOptions) error {
	g, err := e.engine()
	if err != nil {
		return err
	}
	g.Events = report.NewLive(e.stderr, e.errTTY).Event
	return rush.Merge(g, o.level)
}

func runGates(e *env) error {
	g, err := e.engine()
	if err != nil {
		return err
	}
	g.Events = report.NewLive(e.stderr, e.errTTY).Event
	return rush.RunGates(g)
}
