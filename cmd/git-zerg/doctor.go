package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/doctor"
	"github.com/git-zerg/git-zerg/printable"
	"github.com/git-zerg/git-zerg/report"
)

func doctorCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check what a rush, the hooks and finish need, and say how to fix what is wrong",
		Description: "One line per check: `ok  NAME: DETAIL`, or `fix NAME: DETAIL; fix: HOW`. Exit 0 when\n" +
			"every check is ok, 1 when one needs a fix. The checks: git's version, the git identity,\n" +
			"the hooks (here and in the worker worktrees), the worker command and its script, the\n" +
			"forge token, stale locks, the staging branch against the current branch, and trust of\n" +
			"the feature's tasks. It writes nothing.",
		Action: withArgs(0, 0, func([]string) error { return runDoctor(e) }),
	}
}

func runDoctor(e *env) error {
	s, err := e.Store()
	if err != nil {
		return err
	}
	r, err := doctor.Run(doctor.Options{Ctx: e.ctx, Store: s, Feature: e.feature, Now: e.now, Getenv: os.Getenv})
	if err != nil {
		return err
	}
	if e.json {
		if err := report.WriteJSON(e.stdout, r); err != nil {
			return err
		}
	} else {
		for _, c := range r.Checks {
			// Details quote paths, branch names and settings.
			fmt.Fprintln(e.stdout, printable.String(c.Line()))
		}
	}
	if !r.OK {
		n := 0
		for _, c := range r.Checks {
			if !c.OK {
				n++
			}
		}
		what := fmt.Sprintf("doctor: %d checks need a fix", n)
		if n == 1 {
			what = "doctor: 1 check needs a fix"
		}
		return &cliError{code: exitFailed, what: what}
	}
	return nil
}
