package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/epic"
	"github.com/git-zerg/git-zerg/report"
	"github.com/git-zerg/git-zerg/view"
)

type watchOptions struct {
	once   bool
	sync   time.Duration
	remote string
	epic   string
}

func watchFlags(o *watchOptions) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "epic", Usage: "show the features of epic `NAME`, in its order, starting at the first not complete", Destination: &o.epic},
		&cli.DurationFlag{Name: "sync", Usage: "run sync in the background every `INTERVAL` (a rush on another host)", Destination: &o.sync},
		&cli.StringFlag{Name: "remote", Usage: "the `REMOTE` --sync shares state with (default: sync.remote, else origin)", Destination: &o.remote},
	}
}

func watchCmd(e *env) *cli.Command {
	var o watchOptions
	return &cli.Command{
		Name:      "watch",
		Usage:     "a live full-screen view of the feature's tasks, workers and output",
		ArgsUsage: "[FEATURE]",
		Description: "Redraws as the feature's ref moves. Keys: up/down select a task, enter or l opens its log\n" +
			"(q back), tab or f switches feature, q quits. Not on a terminal, it prints the state\n" +
			"again at each change; --once prints it once (--json: as JSON). It only reads.",
		Flags: append(watchFlags(&o),
			&cli.BoolFlag{Name: "once", Usage: "print the state once and exit", Destination: &o.once}),
		Action: func(c *cli.Context) error {
			a, err := args(c, 0, 1)
			if err != nil {
				return err
			}
			if len(a) == 1 {
				e.feature = a[0]
			}
			return runWatch(e, &o)
		},
	}
}

// epicFeatures is the features of epic, in its order, for the views to
// list alone (nil when epic is ""); the view opens on the first that is
// not complete unless a feature was named.
func (e *env) epicFeatures(name string) ([]string, error) {
	if name == "" {
		return nil, nil
	}
	g, err := e.repoEngine()
	if err != nil {
		return nil, err
	}
	features, first, err := epic.ViewOrder(g, name)
	if err != nil {
		return nil, err
	}
	if e.feature == "" {
		e.feature = first
	}
	return features, nil
}

// syncer is the background sync the flags ask for.
func (e *env) syncer(o *watchOptions) (*view.Syncer, error) {
	y := &view.Syncer{Store: e.Store, Config: e.config, Now: e.now, Interval: o.sync, Remote: o.remote}
	return y, y.Check()
}

func runWatch(e *env, o *watchOptions) error {
	y, err := e.syncer(o)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(e.ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if o.once && o.sync > 0 {
		if err := y.Once(e.ctx); err != nil {
			return err
		}
	}
	features, err := e.epicFeatures(o.epic)
	if err != nil {
		return err
	}
	_, _, feature, err := e.view()
	if err != nil {
		return err
	}
	s, _ := e.Store()
	src := view.NewSource(ctx, s, e.now)
	src.Only(features)
	if !o.once {
		return view.Live(ctx, src, feature, e.stdin, e.stdout, e.isTTY, y, func(err error) {
			fmt.Fprintf(e.stderr, "git-zerg: watch: %v\n", err)
		})
	}
	sn, err := src.Snapshot(feature)
	if err != nil {
		return err
	}
	if e.json {
		return report.WriteJSON(e.stdout, sn)
	}
	return view.WriteText(e.stdout, sn, e.now())
}
