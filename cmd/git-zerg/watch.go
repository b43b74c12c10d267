package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/report"
	"github.com/git-zerg/git-zerg/view"
)

type watchOptions struct {
	once   bool
	sync   time.Duration
	remote string
}

func watchFlags(o *watchOptions) []cli.Flag {
	return []cli.Flag{
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

func runWatch(e *env, o *watchOptions) error {
	if o.sync < 0 {
		return usageErr("--sync must not be negative")
	}
	ctx, stop := signal.NotifyContext(e.ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if o.once && o.sync > 0 {
		// Once means the state as the remote has it now.
		if err := e.syncOnce(o); err != nil {
			return err
		}
	}
	_, _, feature, err := e.view()
	if err != nil {
		return err
	}
	s, _ := e.Store()
	src := view.NewSource(s, e.now)
	if o.once {
		sn, err := src.Snapshot(feature)
		if err != nil {
			return err
		}
		if e.json {
			return report.WriteJSON(e.stdout, sn)
		}
		return view.WriteText(e.stdout, sn, e.now())
	}
	out, _ := e.stdout.(*os.File)
	in := view.Keyboard(e.stdin)
	if !e.isTTY || out == nil || in == nil {
		go e.syncEvery(ctx, o, func(err error) {
			if err != nil {
				fmt.Fprintf(e.stderr, "git-zerg: watch: %v\n", err)
			}
		})
		return view.RunPlain(ctx, src, feature, e.stdout)
	}
	if in != os.Stdin {
		defer in.Close()
	}
	w := view.NewWatch(src, feature)
	// The view reads its sync outcome when it draws; the store it reads
	// with is not the one sync writes with.
	syncs := make(chan error, 1)
	go e.syncEvery(ctx, o, func(err error) {
		select {
		case syncs <- err:
		default:
		}
	})
	return w.Run(ctx, in, out, syncs)
}

// syncEvery runs `git zerg sync` in the background at the --sync interval
// (none without it), on a store of its own so the view's reads never wait
// for a fetch.
func (e *env) syncEvery(ctx context.Context, o *watchOptions, report func(error)) {
	if o.sync <= 0 {
		return
	}
	g, err := e.syncEngine(ctx)
	if err != nil {
		report(err)
		return
	}
	view.SyncEvery(ctx, o.sync, func() error {
		_, err := g.Sync(o.remote, 5)
		return err
	}, report)
}

func (e *env) syncOnce(o *watchOptions) error {
	g, err := e.syncEngine(e.ctx)
	if err != nil {
		return err
	}
	_, err = g.Sync(o.remote, 5)
	return err
}

func (e *env) syncEngine(ctx context.Context) (*engine.Engine, error) {
	cfg, err := e.config()
	if err != nil {
		return nil, err
	}
	s, err := e.Store()
	if err != nil {
		return nil, err
	}
	return engine.BackgroundSync(ctx, s, cfg, e.now)
}
