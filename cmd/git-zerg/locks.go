package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/report"
)

type lockOptions struct {
	worker string
	reason string
	ttl    time.Duration
	force  bool
}

func lockCmd(e *env) *cli.Command {
	var o lockOptions
	return &cli.Command{
		Name:      "lock",
		Usage:     "lock paths by hand, repository-wide",
		ArgsUsage: "PATH...",
		Description: "A path ending in / locks everything under it. All paths are locked, or none:\n" +
			"exit 3 when another owner holds an overlapping lock. The owner is <worker>@<host>\n" +
			"with --worker (or ZERG_WORKER), else your git user.email.",
		Flags: []cli.Flag{
			workerFlag(&o.worker),
			&cli.StringFlag{Name: "reason", Usage: "why, shown to whoever is refused", Destination: &o.reason},
			&cli.DurationFlag{Name: "ttl", Usage: "lease `DURATION` (default locks.ttl)", Destination: &o.ttl},
		},
		Action: withArgs(1, -1, func(paths []string) error { return runLock(e, paths, &o) }),
	}
}

func unlockCmd(e *env) *cli.Command {
	var o lockOptions
	return &cli.Command{
		Name:      "unlock",
		Usage:     "remove locks",
		ArgsUsage: "PATH...",
		Description: "Only the lock's owner may remove it (--worker names the owner as for lock);\n" +
			"--force breaks another owner's lock, and the state log records who did it.",
		Flags: []cli.Flag{
			workerFlag(&o.worker),
			&cli.BoolFlag{Name: "force", Usage: "break another owner's lock", Destination: &o.force},
		},
		Action: withArgs(1, -1, func(paths []string) error { return runUnlock(e, paths, &o) }),
	}
}

func locksCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "locks",
		Usage: "list the active locks of the repository",
		Action: withArgs(0, 0, func([]string) error {
			s, err := e.Store()
			if err != nil {
				return err
			}
			locks, err := (&engine.Engine{Ctx: e.ctx, Store: s, Now: e.now}).Locks()
			switch {
			case err != nil:
				return err
			case e.json:
				return report.WriteJSON(e.stdout, report.LocksOf(locks))
			case len(locks) == 0:
				fmt.Fprintln(e.stdout, "no locks")
			}
			report.LocksText(e.stdout, locks, e.now())
			return nil
		}),
	}
}

func runLock(e *env, paths []string, o *lockOptions) error {
	if err := engine.CheckLock(paths, o.ttl); err != nil {
		return err
	}
	g, err := e.repoEngine()
	if err != nil {
		return err
	}
	taken, err := g.LockAs(o.worker, paths, o.reason, o.ttl)
	if err != nil {
		return err
	}
	if e.json {
		return report.WriteJSON(e.stdout, report.LocksOf(taken))
	}
	for _, l := range taken {
		fmt.Fprintf(e.stdout, "locked %s until %s\n", l.Path, l.Expires.Format(time.RFC3339))
	}
	return nil
}

func runUnlock(e *env, paths []string, o *lockOptions) error {
	if err := engine.CheckPaths(paths); err != nil {
		return err
	}
	s, err := e.Store()
	if err != nil {
		return err
	}
	broken, err := (&engine.Engine{Ctx: e.ctx, Store: s, Now: e.now}).UnlockAs(o.worker, paths, o.force)
	if err != nil {
		return err
	}
	for _, p := range paths {
		fmt.Fprintf(e.stdout, "unlocked %s\n", p)
	}
	for _, b := range broken {
		fmt.Fprintf(e.stderr, "broke the lock on %s\n", b)
	}
	return nil
}
