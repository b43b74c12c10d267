package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/report"
	"github.com/git-zerg/git-zerg/view"
	"github.com/git-zerg/git-zerg/words"
)

func statusCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "levels, tasks, workers, locks and progress of the feature",
		Description: "A feature of more than " + fmt.Sprint(report.SummaryAbove) + " tasks is summarised: counts per level and state,\n" +
			"the tasks under way, failed and blocked, and the first ready ones.\n" +
			"--all lists every task; --json always does.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Usage: "list every task, however many"},
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			return runStatus(e, c.Bool("all"))
		},
	}
}

// snapshot reads the feature's state, its tasks when asked for.
func (e *env) snapshot() (*view.Snapshot, error) {
	s, tx, _, err := e.view()
	if err != nil {
		return nil, err
	}
	return view.Read(s, tx, e.now())
}

func runStatus(e *env, all bool) error {
	// Programs polling --json are not the ones to tell about hooks, and
	// they would pay the warning's git processes on every poll; a person
	// reading the text is. Its git processes run while the state loads.
	warning := func() string { return "" }
	if !e.json {
		if s, err := e.Store(); err == nil {
			warning = e.startHooksWarning(s)
		}
	}
	if err := e.checkState(); err != nil {
		return err
	}
	sn, err := e.snapshot()
	if err != nil {
		return err
	}
	if e.json {
		return report.WriteStatusJSON(e.stdout, sn)
	}
	behind := make(chan string, 1) // its git processes run while the text is made
	if s, err := e.Store(); err == nil {
		then := "the next rush merges them in"
		if cfg, err := e.config(); err == nil && !cfg.Rush.FollowBase {
			then = "rush.follow_base = false: not merged in"
		}
		go func() {
			line := ""
			if branch, n := engine.StagingBehind(e.ctx, s, sn.Feature); n > 0 {
				line = fmt.Sprintf("staging: %s behind %s (%s)", words.Plural(n, "commit"), branch, then)
			}
			behind <- line
		}()
	} else {
		behind <- ""
	}
	return report.WriteStatusText(e.stdout, sn, report.TextOptions{
		// A person's status of a large feature reads the index, and the
		// few tasks it lists.
		Summary: !all && sn.Planned() > report.SummaryAbove,
		Policy: func() *gates.Policy {
			cfg, err := e.config()
			if err != nil {
				return nil // the summary leaves the ready tasks out rather than fail
			}
			p := engine.PolicyOf(cfg)
			return &p
		},
		Before: func() { e.printHooksWarning(warning()) },
		AfterHead: func() {
			e.printEpicReview(sn.Feature)
			if line := <-behind; line != "" {
				fmt.Fprintln(e.stdout, line)
			}
		},
	})
}
