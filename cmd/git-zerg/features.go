package main

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/printable"
	"github.com/git-zerg/git-zerg/state"
)

func useCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:      "use",
		Usage:     "choose the current feature",
		ArgsUsage: "FEATURE",
		Action: func(c *cli.Context) error {
			a, err := args(c, 1, 1)
			if err != nil {
				return err
			}
			return runUse(e, a[0])
		},
	}
}

func runUse(e *env, name string) error {
	if err := levels.ValidFeatureName(name); err != nil {
		return badFeatureName(name, err)
	}
	s, err := e.Store()
	if err != nil {
		return err
	}
	if _, err := s.View(name); errors.Is(err, gitstore.ErrNotFound) {
		return &cliError{code: exitUsage, what: fmt.Sprintf("feature %q is not planned", name), hint: "git zerg features lists the planned ones"}
	} else if err != nil {
		return err
	}
	if err := s.SetCurrentFeature(name); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "using %s\n", name)
	return nil
}

func featuresCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "features",
		Usage: "list the planned features with their progress",
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			return runFeatures(e)
		},
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
	names, err := s.Features()
	if err != nil {
		return err
	}
	cur := s.CurrentFeature()
	out := []featureJSON{}
	for _, n := range names {
		tx, err := s.View(n)
		if err != nil {
			return err
		}
		tasks, err := tx.Tasks()
		if err != nil {
			return err
		}
		counts := countStatuses(tasks)
		out = append(out, featureJSON{n, n == cur, len(tasks), counts[string(state.Done)], counts[string(state.Done)] == len(tasks), counts})
	}
	if e.json {
		return writeJSON(e.stdout, out)
	}
	if len(out) == 0 {
		fmt.Fprintln(e.stderr, "no feature planned (git zerg plan --graph FILE)")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	for _, f := range out {
		mark := " "
		if f.Current {
			mark = "*"
		}
		fmt.Fprintf(tw, "%s %s\t%d/%d done\t%s\n", mark, printable.String(f.Feature), f.Done, f.Tasks, countsLine(f.Counts))
	}
	return tw.Flush()
}

func countStatuses(tasks []*state.Task) map[string]int { return engine.CountStatuses(tasks) }

func countsLine(m map[string]int) string { return engine.CountsLine(m) }
