package main

import (
	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/report"
)

func logCmd(e *env) *cli.Command {
	var patch bool
	var limit int
	return &cli.Command{
		Name:  "log",
		Usage: "every state transition of the feature, newest first",
		Description: "Each transition is a commit on refs/zerg/features/<feature>; -p shows it as a\n" +
			"diff of the task's stored state. On a terminal the output goes through git's pager\n" +
			"(GIT_PAGER, core.pager, PAGER, else less), as git log's does.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "patch", Aliases: []string{"p"}, Usage: "show each transition as a diff", Destination: &patch},
			&cli.IntFlag{Name: "n", Usage: "show at most `N` transitions", Destination: &limit},
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			if limit < 0 {
				return usageErr("-n must not be negative")
			}
			feature, err := e.resolveFeature()
			if err != nil {
				return err
			}
			s, err := e.Store()
			if err != nil {
				return err
			}
			log, err := report.ReadLog(s, feature, limit, patch)
			if err != nil {
				return err
			}
			if e.json {
				return report.WriteJSON(e.stdout, log)
			}
			w, done := e.pager() // a log runs long, as git's does
			defer done()
			report.WriteLogText(w, log)
			return nil
		},
	}
}
