package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/report"
)

func useCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:      "use",
		Usage:     "choose the current feature",
		ArgsUsage: "FEATURE",
		Action: withArgs(1, 1, func(a []string) error {
			if err := engine.UseFeature(a[0], e.Store); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "using %s\n", a[0])
			return nil
		}),
	}
}

func featuresCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:   "features",
		Usage:  "list the planned features with their progress",
		Action: withArgs(0, 0, func([]string) error { return runFeatures(e) }),
	}
}

func runFeatures(e *env) error {
	s, err := e.Store()
	if err != nil {
		return err
	}
	fs, err := engine.Features(s)
	if err != nil {
		return err
	}
	if len(fs) == 0 && !e.json {
		fmt.Fprintln(e.stderr, "no feature planned (git zerg plan --graph FILE)")
		return nil
	}
	return report.WriteFeatures(e.stdout, fs, e.json)
}
