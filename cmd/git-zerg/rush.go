package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/engine/notify"
	"github.com/git-zerg/git-zerg/report"
	"github.com/git-zerg/git-zerg/rush"
)

type rushOptions struct {
	workers int
	mode    string
	resume  bool
	epic    string
	remote  string
}

func rushCmd(e *env) *cli.Command {
	var o rushOptions
	return &cli.Command{
		Name:  "rush",
		Usage: "run the feature to the end with parallel workers",
		Description: "subprocess (default): each level's tasks run with up to N workers, each in its own\n" +
			"worktree on zerg/<feature>/worker-<n>; finished levels merge into zerg/<feature>/staging\n" +
			"and the quality gates run on the result. container: the same, each worker command in\n" +
			"`docker run` (image from workers.image). task: spawn nothing; print the ready batch\n" +
			"with rendered prompts as JSON for an agent that drives claim/done itself.\n" +
			"--remote REMOTE: each clone that runs the rush through REMOTE is a host of it; claims,\n" +
			"leases and locks go through the remote, and each level merges once, on the host that\n" +
			"sees it settled first.\n" +
			"Exit 1 when the rush ends with blocked tasks, a merge conflict or a failed gate.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "workers", Aliases: []string{"n"}, Usage: "parallel workers (default workers.count)", Destination: &o.workers},
			&cli.StringFlag{Name: "mode", Value: "subprocess", Usage: "subprocess, container or task", Destination: &o.mode},
			&cli.BoolFlag{Name: "resume", Usage: "continue after a crash from the state in refs", Destination: &o.resume},
			&cli.StringFlag{Name: "remote", Usage: "share the rush with the clones that run it through `REMOTE` (default rush.remote)", Destination: &o.remote},
			&cli.StringFlag{Name: "epic", Usage: "run every feature of epic `NAME` in dependency order", Destination: &o.epic},
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			if c.IsSet("workers") && o.workers < 1 {
				return usageErr("rush: --workers must be at least 1")
			}
			if o.workers > config.MaxWorkers {
				return usageErr("rush: --workers must be at most %d", config.MaxWorkers)
			}
			return runRush(e, &o)
		},
	}
}

func runRush(e *env, o *rushOptions) error {
	switch o.mode {
	case rush.ModeSubprocess, rush.ModeContainer, rush.ModeTask:
	default:
		return usageErr("rush: unknown mode %q (subprocess, container or task)", o.mode)
	}
	if o.remote != "" && (o.epic != "" || o.mode == rush.ModeTask) {
		return usageErr("rush: --remote runs one feature in subprocess or container mode")
	}
	if o.epic != "" {
		return runEpicRush(e, o)
	}
	g, err := e.engine()
	if err != nil {
		return err
	}
	// Before any worker starts: without the hooks, nothing stops a worker
	// from committing another's locked paths.
	e.mendHooks(g.Store)
	e.printHooksWarning(e.startHooksWarning(g.Store)())
	if o.mode == rush.ModeTask {
		b, err := g.Batch(o.workers)
		if err != nil {
			return err
		}
		// Task mode is for programs: its output is always the JSON document.
		return report.WriteJSON(e.stdout, report.TaskModeOf(b))
	}
	p := report.NewLive(e.stderr, e.errTTY)
	g.Events = p.Event
	interrupts, stop := rushSignals(g, p)
	defer stop()
	res, err := rush.Run(g, rush.Options{Workers: o.workers, Mode: o.mode, Resume: o.resume, Remote: o.remote, Interrupt: interrupts,
		BeforeDone: beforeDone, Idle: idle})
	if res != nil {
		report.RushText(e.stdout, e.stderr, res)
	}
	return err
}

// rushSignals sends the rush's events on to notify.command too, and turns
// SIGINT, SIGTERM and SIGHUP into the engine's interrupts. Workers run in
// process groups of their own, out of the terminal's reach: Ctrl-C comes
// here, and the engine ends them in order (their work saved, their claims
// given back). stop undoes it all once the rush returned, after the last
// notifications went out.
func rushSignals(g *engine.Engine, p *report.Live) (interrupts <-chan struct{}, stop func()) {
	n := notify.New(g.Config.Notify.Command)
	if n != nil {
		n.Failed = func(note notify.Notification, why string) { p.Note("notify %s failed: %s", note.Event, why) }
		g.Events = n.Sink(g.Events)
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	out := make(chan struct{}, 2)
	relayDone := make(chan struct{})
	go func() {
		for {
			select {
			case <-sigs:
				select {
				case out <- struct{}{}:
				default: // two pending are as good as more
				}
			case <-relayDone:
				return
			}
		}
	}()
	return out, func() {
		close(relayDone)
		signal.Stop(sigs)
		n.Wait()
	}
}
