package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/printable"
	"github.com/git-zerg/git-zerg/report"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
)

func nextCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "next",
		Usage: "ready tasks, best first, without claiming",
		Description: "A task is ready when it is pending (or failed with attempts left), its hard\n" +
			"dependencies are done and its backoff has passed. Best first: lowest level,\n" +
			"then most dependents. A feature whose epic holds it back (a hard dependency\n" +
			"not complete) has none: it says so on stderr.",
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			return runNext(e)
		},
	}
}

func runNext(e *env) error {
	cfg, err := e.config()
	if err != nil {
		return err
	}
	s, tx, feature, err := e.view()
	if err != nil {
		return err
	}
	if err := engine.EpicHold(s, feature); err != nil {
		var held *engine.Error
		if !errors.As(err, &held) || held.Kind != engine.Refused {
			return err
		}
		// Nothing is ready while the epic holds the feature back: next
		// lists nothing, as whenever no task is ready, and says why.
		fmt.Fprintf(e.stderr, "note: no task is ready: %s\nhint: %s\n", printable.String(held.Error()), printable.String(held.Hint))
		if e.json {
			return report.WriteJSON(e.stdout, report.TasksOf(nil))
		}
		return nil
	}
	ready, tasks, err := engine.ReadyIn(tx, engine.PolicyOf(cfg), e.now(), e.json)
	if err != nil {
		return err
	}
	if len(ready) == 0 {
		// stdout stays empty (a script loops until it is); a person is
		// told why.
		complete, counts, err := engine.NoneReady(tx)
		if err != nil {
			return err
		}
		if complete {
			fmt.Fprintf(e.stderr, "note: feature %s is complete: %s done\n", feature, words.Plural(counts[string(state.Done)], "task"))
		} else {
			fmt.Fprintf(e.stderr, "note: no task is ready: %s\n", words.CountsLine(counts))
		}
	}
	if !e.json {
		for _, en := range ready {
			fmt.Fprintln(e.stdout, en.ID)
		}
		return nil
	}
	return report.WriteJSON(e.stdout, report.TasksOf(tasks))
}
