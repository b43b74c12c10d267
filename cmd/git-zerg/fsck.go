package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/printable"
	"github.com/git-zerg/git-zerg/report"
)

type fsckOptions struct {
	all bool
}

func fsckCmd(e *env) *cli.Command {
	var o fsckOptions
	return &cli.Command{
		Name:  "fsck",
		Usage: "replay the state history and check that every transition was legal",
		Description: "Walks the feature's state commits from the first and, for each task a commit\n" +
			"changed, checks that it moved only by legal transitions whose gates held in the\n" +
			"state before (dependencies done, approval, work that exists and touches only the\n" +
			"task's files), that its history only grew, and that clocks advance. A state ref\n" +
			"moved back since the last fsck is reported too. Exit 1 when anything is wrong.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Usage: "check every planned feature", Destination: &o.all},
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			return runFsck(e, &o)
		},
	}
}

type fsckJSON struct {
	OK       bool              `json:"ok"`
	Features []fsckFeatureJSON `json:"features"`
}

type fsckFeatureJSON struct {
	Feature  string            `json:"feature"`
	Tip      string            `json:"tip"`
	Commits  int               `json:"commits"`
	Problems []fsckProblemJSON `json:"problems"`
}

type fsckProblemJSON struct {
	Commit  string `json:"commit"`
	Task    string `json:"task,omitempty"`
	Message string `json:"message"`
}

func runFsck(e *env, o *fsckOptions) error {
	s, err := e.Store()
	if err != nil {
		return err
	}
	var features []string
	if o.all {
		if features, err = s.Features(); err != nil {
			return err
		}
	} else {
		f, err := e.resolveFeature()
		if err != nil {
			return err
		}
		features = []string{f}
	}
	out := fsckJSON{OK: true, Features: []fsckFeatureJSON{}}
	total := 0
	var bad []string
	for _, feature := range features {
		g := &engine.Engine{Ctx: e.ctx, Store: s, Feature: feature, Now: e.now}
		r, err := g.Fsck()
		if err != nil {
			return err
		}
		problems := r.Problems
		fj := fsckFeatureJSON{Feature: feature, Tip: r.Tip, Commits: r.Commits, Problems: []fsckProblemJSON{}}
		for _, p := range problems {
			fj.Problems = append(fj.Problems, fsckProblemJSON{p.Commit, p.Task, p.Msg})
		}
		out.Features = append(out.Features, fj)
		if len(problems) > 0 {
			out.OK = false
			total += len(problems)
			bad = append(bad, feature)
		}
		if !e.json {
			for _, p := range problems {
				fmt.Fprintln(e.stdout, printable.String(p.String()))
			}
			if len(problems) == 0 {
				fmt.Fprintf(e.stdout, "%s: %d state commits, every transition legal\n", feature, r.Commits)
			}
		}
		if r.Moved {
			fmt.Fprintf(e.stderr, "hint: if %s was moved on purpose, remove %s\n", gitstore.FeatureRef(feature), r.SeenFile)
		}
		for _, p := range problems {
			if p.Unchecked {
				fmt.Fprintln(e.stderr, "hint: work done on another machine can be checked once its commits are fetched here")
				break
			}
		}
	}
	if e.json {
		if err := report.WriteJSON(e.stdout, out); err != nil {
			return err
		}
	}
	if total > 0 {
		what := fmt.Sprintf("fsck found %d problem", total)
		if total > 1 {
			what += "s"
		}
		return failed(what, "in feature "+strings.Join(bad, ", "))
	}
	return nil
}
