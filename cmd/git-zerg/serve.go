package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/view"
)

type serveOptions struct {
	watchOptions
	addr   string
	public bool
}

func serveCmd(e *env) *cli.Command {
	var o serveOptions
	return &cli.Command{
		Name:      "serve",
		Usage:     "a local web page with the task graph, kept current as the state moves",
		ArgsUsage: "[FEATURE]",
		Description: "Serves the page on a loopback address (port 0: any free port; the URL printed carries\n" +
			"a secret made for this run, and without it the server answers nothing),\n" +
			"with the graph drawn by levels, live updates and a page per task with its history,\n" +
			"diffs and output. An address other machines can reach needs --public. It only reads.",
		Flags: append(watchFlags(&o.watchOptions),
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:0", Usage: "listen on `HOST:PORT`", Destination: &o.addr},
			&cli.BoolFlag{Name: "public", Usage: "allow an --addr that is not loopback", Destination: &o.public}),
		Action: func(c *cli.Context) error {
			a, err := args(c, 0, 1)
			if err != nil {
				return err
			}
			if len(a) == 1 {
				e.feature = a[0]
			}
			return runServe(e, &o)
		},
	}
}

func runServe(e *env, o *serveOptions) error {
	y, err := e.syncer(&o.watchOptions)
	if err != nil {
		return err
	}
	loopback, err := view.CheckAddr(o.addr, o.public)
	if err != nil {
		return err
	}
	s, err := e.Store()
	if err != nil {
		return err
	}
	// The page lists every feature (an epic's alone, with --epic); it
	// opens on the one chosen, else the first (none planned yet: it
	// waits for one).
	features, err := e.epicFeatures(o.epic)
	if err != nil {
		return err
	}
	feature, err := engine.ShownFeature(e.feature, e.Store)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(e.ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	l, err := net.Listen("tcp", o.addr)
	if err != nil {
		return failed("serve: cannot listen", err.Error())
	}
	src := view.NewSource(ctx, s, e.now)
	src.Only(features)
	sv := view.NewServer(ctx, src, feature)
	sv.Public = !loopback
	if !loopback {
		fmt.Fprintf(e.stderr, "git-zerg: warning: serving on %s: anyone who can reach it can read the state, the task history and the workers' output\n", l.Addr())
	}
	sv.SyncWith(ctx, y, func(err error) { fmt.Fprintf(e.stderr, "git-zerg: serve: %v\n", err) })
	// The URL carries the run's secret: without it the server answers
	// nothing, to the browser's other pages as to any local process.
	fmt.Fprintf(e.stdout, "serving %s on %s\n", feature, sv.URL(l.Addr().String()))
	return sv.Serve(l)
}
