package main

import (
	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/levels"
)

func schemaCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "schema",
		Usage: "print the JSON Schema of task-graph.json",
		Description: "A JSON Schema (draft 2020-12) for editors: save it and point the graph's \"$schema\"\n" +
			"or the editor's settings at it. It says what validate --strict says about each key and\n" +
			"value; rules across the graph (dependencies, cycles, overlapping files) are validate's.",
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			_, err := e.stdout.Write(levels.Schema())
			return err
		},
	}
}
