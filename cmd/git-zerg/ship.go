package main

import (
	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/forge/flow"
	"github.com/git-zerg/git-zerg/report"
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

func runShip(e *env) error {
	g, err := e.engine()
	if err != nil {
		return err
	}
	res, err := flow.Ship(g)
	if res != nil && e.json && err == nil {
		if werr := report.WriteJSON(e.stdout, report.ShipOf(res)); werr != nil {
			return werr
		}
	} else if res != nil {
		report.ShipText(e.stdout, e.stderr, res)
	}
	if err != nil {
		return err
	}
	return res.Verdict()
}
