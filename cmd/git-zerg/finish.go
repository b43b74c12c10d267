package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/epic"
	"github.com/git-zerg/git-zerg/report"
	"github.com/git-zerg/git-zerg/rush/finish"
	"github.com/git-zerg/git-zerg/words"
)

func finishCmd(e *env) *cli.Command {
	var epicName string
	return &cli.Command{
		Name:  "finish",
		Usage: "merge a complete feature's staging into the current branch, then clean up",
		Description: "A fast-forward when the branch has nothing staging lacks, else a merge commit, made by\n" +
			"git merge in your checkout. Refused (exit 3, writing nothing) when the feature is not\n" +
			"complete, when the quality gates have not passed here on staging's tree, when the merge\n" +
			"would conflict, or when uncommitted changes (untracked and ignored files too) are in\n" +
			"paths the merge changes; changes elsewhere stay as they are. Then removes the feature's\n" +
			"worktrees and worker branches as git zerg cleanup does. --epic NAME finishes every\n" +
			"feature of the epic in its order, stopping at the first that cannot finish.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "epic", Usage: "finish every feature of epic `NAME`, in dependency order", Destination: &epicName},
		},
		Action: withArgs(0, 0, func([]string) error { return runFinish(e, epicName) }),
	}
}

func runFinish(e *env, epicName string) error {
	if epicName != "" {
		if e.feature != "" {
			return usageErr("finish: --epic and -f name what to finish twice; give one")
		}
		g, err := e.repoEngine()
		if err != nil {
			return err
		}
		g.Events = func(ev engine.Event) { fmt.Fprintln(e.stderr, ev.Text) }
		docs := []report.Finish{}
		done, err := epic.Finish(g, epicName, func(f *finish.Finished) {
			if e.json {
				docs = append(docs, report.FinishOf(f))
			} else {
				report.FinishText(e.stdout, f)
			}
		})
		if e.json {
			if werr := report.WriteJSON(e.stdout, docs); werr != nil {
				return werr
			}
		} else if err == nil {
			fmt.Fprintf(e.stdout, "finished epic %s: %s\n", epicName, words.Plural(len(done), "feature"))
		}
		return err
	}
	g, err := e.engine()
	if err != nil {
		return err
	}
	g.Events = func(ev engine.Event) { fmt.Fprintln(e.stderr, ev.Text) }
	f, err := finish.Feature(g)
	if f != nil {
		if e.json {
			if werr := report.WriteJSON(e.stdout, report.FinishOf(f)); werr != nil {
				return werr
			}
		} else {
			report.FinishText(e.stdout, f)
		}
	}
	return err
}
