package main

import (
	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/fsck"
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
	g := &engine.Engine{Ctx: e.ctx, Store: s, Now: e.now}
	rs, err := fsck.Features(g, features, func(r *fsck.Report) { report.FsckText(e.stdout, e.stderr, r, e.json) })
	if err != nil {
		return err
	}
	if e.json {
		if err := report.WriteJSON(e.stdout, report.FsckOf(rs)); err != nil {
			return err
		}
	}
	return fsck.Verdict(rs)
}
