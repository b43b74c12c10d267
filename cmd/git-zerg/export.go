package main

import (
	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/report"
)

func exportCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "the feature's state as one tasks.json document",
		Description: "Tasks with their state history, locks and DAG levels. The output is a pure\n" +
			"function of the stored state: two machines with the same refs print the same bytes.",
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			sn, err := e.snapshot()
			if err != nil {
				return err
			}
			return report.WriteExport(e.stdout, sn)
		},
	}
}
