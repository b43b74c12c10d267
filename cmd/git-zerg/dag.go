package main

import (
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/report"
)

type dagOptions struct{ format, epic string }

func dagCmd(e *env) *cli.Command {
	var o dagOptions
	return &cli.Command{
		Name:  "dag",
		Usage: "the task graph by level, with states",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text, mermaid, dot or json", Destination: &o.format},
			&cli.StringFlag{Name: "epic", Usage: "the features of epic `NAME` instead of a feature's tasks", Destination: &o.epic},
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			return runDag(e, &o)
		},
	}
}

func runDag(e *env, o *dagOptions) error {
	format := o.format
	if e.json {
		format = "json"
	}
	if !slices.Contains(report.DagFormats, format) {
		return usageErr("dag: unknown format %q (text, mermaid, dot or json)", format)
	}
	if o.epic != "" {
		return runEpicDag(e, o.epic, format)
	}
	sn, err := e.snapshot()
	if err != nil {
		return err
	}
	return report.WriteDag(e.stdout, sn, format)
}

func mermaidID(id string) string { return report.MermaidID(id) }
