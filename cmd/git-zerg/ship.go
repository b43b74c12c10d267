package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/printable"
)

func shipCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "ship",
		Usage: "send verified work to review on the forge; land merged pull requests",
		Description: "With forge.review = \"task\", pushes each verified task's work to zerg/<feature>/issue-<N>\n" +
			"and opens (or updates) its pull request with a \"Closes #N\" line; with \"feature\", pushes\n" +
			"staging and opens one pull request listing the tasks. The task records its PR (in review).\n" +
			"A task in review becomes done once its PR is merged, its merge commit is on the base branch\n" +
			"fetched from the remote and contains the task's work; its issue is then closed.\n" +
			"Exit 2 when no forge or review is configured, 1 when the forge or git failed,\n" +
			"3 when a task was refused (each named).",
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			return runShip(e)
		},
	}
}

type shipJSON struct {
	Feature string           `json:"feature"`
	Shipped []engine.Shipped `json:"shipped"`
	Landed  []engine.Shipped `json:"landed"`
	Waiting []engine.Shipped `json:"waiting"`
	Refused []string         `json:"refused"`
}

func runShip(e *env) error {
	g, err := e.engine()
	if err != nil {
		return err
	}
	res, err := g.Ship()
	if res != nil && e.json && err == nil {
		out := shipJSON{res.Feature, nonNilShipped(res.Shipped), nonNilShipped(res.Landed), nonNilShipped(res.Waiting), nonNil(res.Refused)}
		if werr := writeJSON(e.stdout, out); werr != nil {
			return werr
		}
	} else if res != nil {
		for _, s := range res.Landed {
			fmt.Fprintf(e.stdout, "%s done: pull request #%d merged\n", s.Task, s.PR)
		}
		for _, s := range res.Shipped {
			verb := "updated"
			if s.Opened {
				verb = "opened"
			}
			fmt.Fprintf(e.stdout, "%s in review: pull request #%d %s (%s)\n", s.Task, s.PR, verb, printable.String(s.Branch))
		}
		for _, s := range res.Waiting {
			fmt.Fprintf(e.stdout, "%s waits for pull request #%d\n", s.Task, s.PR)
		}
		for _, r := range res.Refused {
			fmt.Fprintln(e.stderr, printable.String(r))
		}
	}
	if err != nil {
		return err
	}
	if len(res.Refused) > 0 {
		return refused("ship refused for "+plural(len(res.Refused), "task"), "each named above")
	}
	return nil
}

func nonNilShipped(s []engine.Shipped) []engine.Shipped {
	if s == nil {
		return []engine.Shipped{}
	}
	return s
}
