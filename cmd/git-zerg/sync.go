package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/forge/flow"
	"github.com/git-zerg/git-zerg/printable"
	"github.com/git-zerg/git-zerg/report"
)

type syncOptions struct {
	remote string
	tries  int
	forge  bool
}

func syncCmd(e *env) *cli.Command {
	var o syncOptions
	return &cli.Command{
		Name:      "sync",
		Usage:     "share state with a remote: fetch, merge, push",
		ArgsUsage: "[REMOTE]",
		Description: "Fetches the remote's refs/zerg/* into refs/zerg-remotes/<remote>/, merges each feature's\n" +
			"state with the local one (deterministically: every machine computes the same result),\n" +
			"and pushes the result with a compare-and-swap on the remote (--force-with-lease on the\n" +
			"exact value merged, --atomic), again when the remote moved meanwhile. REMOTE defaults to\n" +
			"sync.remote, else origin. Plain git push/fetch of refs/zerg/* works too.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "tries", Value: 5, Usage: "rounds before giving up when the remote keeps moving", Destination: &o.tries},
			&cli.BoolFlag{Name: "forge", Usage: "bring the feature's tasks in line with its issues and pull requests on the forge", Destination: &o.forge},
		},
		Action: func(c *cli.Context) error {
			a, err := args(c, 0, 1)
			if err != nil {
				return err
			}
			if len(a) == 1 {
				o.remote = a[0]
			}
			return runSync(e, &o)
		},
	}
}

func runSync(e *env, o *syncOptions) error {
	if o.forge {
		if o.remote != "" {
			return usageErr("sync --forge takes no REMOTE (the forge is forge.repo's)")
		}
		return runSyncForge(e)
	}
	s, err := e.Store()
	if err != nil {
		return err
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	g := &engine.Engine{Ctx: e.ctx, Store: s, Config: cfg, Now: e.now,
		Events: func(ev engine.Event) { fmt.Fprintln(e.stderr, printable.String(ev.Text)) }}
	res, err := g.Sync(o.remote, o.tries)
	if err != nil {
		return err
	}
	if e.json {
		return report.WriteJSON(e.stdout, report.SyncOf(res))
	}
	report.SyncText(e.stdout, res)
	return nil
}

// runSyncForge is one pass of the forge over the current feature's tasks.
func runSyncForge(e *env) error {
	g, err := e.engine()
	if err != nil {
		return err
	}
	res, err := flow.Sync(g)
	if err != nil {
		return err
	}
	if e.json {
		return report.WriteJSON(e.stdout, res)
	}
	report.SyncForgeText(e.stdout, e.stderr, res)
	return nil
}
