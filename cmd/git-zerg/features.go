package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/printable"
	"github.com/git-zerg/git-zerg/state"
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

type featureJSON struct {
	Feature  string         `json:"feature"`
	Current  bool           `json:"current"`
	Tasks    int            `json:"tasks"`
	Done     int            `json:"done"`
	Complete bool           `json:"complete"`
	Counts   map[string]int `json:"counts"`
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
	if e.json {
		out := []featureJSON{}
		for _, f := range fs {
			out = append(out, featureJSON{f.Name, f.Current, f.Tasks, f.Done, f.Complete, f.Counts})
		}
		return writeJSON(e.stdout, out)
	}
	if len(fs) == 0 {
		fmt.Fprintln(e.stderr, "no feature planned (git zerg plan --graph FILE)")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	for _, f := range fs {
		mark := " "
		if f.Current {
			mark = "*"
		}
		fmt.Fprintf(tw, "%s %s\t%d/%d done\t%s\n", mark, printable.String(f.Name), f.Done, f.Tasks, countsLine(f.Counts))
	}
	return tw.Flush()
}

func countStatuses(tasks []*state.Task) map[string]int { return engine.CountStatuses(tasks) }

func countsLine(m map[string]int) string { return engine.CountsLine(m) }
