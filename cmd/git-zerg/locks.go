package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/printable"
	"github.com/git-zerg/git-zerg/state"
)

type lockOptions struct {
	reason string
	ttl    time.Duration
	force  bool
	paths  []string
}

func lockCmd(e *env) *cli.Command {
	var o lockOptions
	return &cli.Command{
		Name:      "lock",
		Usage:     "lock paths by hand, repository-wide",
		ArgsUsage: "PATH...",
		Description: "A path ending in / locks everything under it. All paths are locked, or none:\n" +
			"exit 3 when another owner holds an overlapping lock.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "reason", Usage: "why, shown to whoever is refused", Destination: &o.reason},
			&cli.DurationFlag{Name: "ttl", Usage: "lease `DURATION` (default locks.ttl)", Destination: &o.ttl},
		},
		Action: func(c *cli.Context) error {
			a, err := args(c, 1, -1)
			if err != nil {
				return err
			}
			o.paths = a
			return runLock(e, &o)
		},
	}
}

func unlockCmd(e *env) *cli.Command {
	var o lockOptions
	return &cli.Command{
		Name:        "unlock",
		Usage:       "remove locks",
		ArgsUsage:   "PATH...",
		Description: "--force breaks another owner's lock; the state log records who did it.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "force", Usage: "break another owner's lock", Destination: &o.force},
		},
		Action: func(c *cli.Context) error {
			a, err := args(c, 1, -1)
			if err != nil {
				return err
			}
			o.paths = a
			return runUnlock(e, &o)
		},
	}
}

func locksCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "locks",
		Usage: "list the active locks of the repository",
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			return runLocks(e)
		},
	}
}

func checkPaths(paths []string) error {
	seen := map[string]bool{}
	for _, p := range paths {
		if err := levels.CheckPath(p); err != nil {
			return usageErr("bad path %q (%v)", p, err)
		}
		if seen[p] {
			return usageErr("path %q given twice", p)
		}
		seen[p] = true
	}
	return nil
}

func runLock(e *env, o *lockOptions) error {
	if err := checkPaths(o.paths); err != nil {
		return err
	}
	if o.ttl < 0 {
		return usageErr("--ttl must be positive")
	}
	s, err := e.Store()
	if err != nil {
		return err
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	ttl := o.ttl
	if ttl == 0 {
		ttl = time.Duration(cfg.Locks.TTL)
	}
	owner := e.userIdentity()
	var taken []state.Lock
	err = s.Update(e.ctx, "", e.now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		now := e.now().UTC()
		locks, err := tx.Locks()
		if err != nil {
			return nil, err
		}
		var why []string
		for _, p := range o.paths {
			if err := gates.Lock(p, owner, locks, now); err != nil {
				why = append(why, err.(*gates.Refusal).Reasons...)
			}
		}
		if len(why) > 0 {
			return nil, refused("lock refused", strings.Join(why, "; "))
		}
		keep := engine.ActiveLocks(locks, now)
		taken = nil
		for _, p := range o.paths {
			// Re-locking one's own path renews it.
			kept := keep[:0]
			for _, l := range keep {
				if !(l.Path == p && l.Owner == owner) {
					kept = append(kept, l)
				}
			}
			keep = kept
			l := state.Lock{Path: p, Owner: owner, Reason: o.reason, Created: now, Expires: now.Add(ttl)}
			keep = append(keep, l)
			taken = append(taken, l)
		}
		tx.SetLocks(keep)
		return &gitstore.Message{Subject: "lock " + strings.Join(o.paths, " "), Op: "lock", Worker: owner, Reason: o.reason}, nil
	})
	if err != nil {
		return err
	}
	if e.json {
		return writeJSON(e.stdout, locksOut(taken))
	}
	for _, l := range taken {
		fmt.Fprintf(e.stdout, "locked %s until %s\n", l.Path, l.Expires.Format(time.RFC3339))
	}
	return nil
}

func runUnlock(e *env, o *lockOptions) error {
	if err := checkPaths(o.paths); err != nil {
		return err
	}
	s, err := e.Store()
	if err != nil {
		return err
	}
	who := e.userIdentity()
	var broken []string
	err = s.Update(e.ctx, "", e.now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		now := e.now().UTC()
		locks, err := tx.Locks()
		if err != nil {
			return nil, err
		}
		want := map[string]bool{}
		for _, p := range o.paths {
			want[p] = true
		}
		found := map[string]bool{}
		broken = nil
		var keep []state.Lock
		for _, l := range locks {
			if !l.Active(now) {
				continue
			}
			if !want[l.Path] {
				keep = append(keep, l)
				continue
			}
			if err := gates.Unlock(l, who, o.force, now); err != nil {
				// One line naming the path once: the refusal has no task.
				if r, ok := err.(*gates.Refusal); ok {
					return nil, refused("unlock "+l.Path+" refused", strings.Join(r.Reasons, "; "))
				}
				return nil, err
			}
			found[l.Path] = true
			if l.Owner != who {
				broken = append(broken, fmt.Sprintf("%s held by %s", l.Path, l.Owner))
			}
		}
		for _, p := range o.paths {
			if !found[p] {
				return nil, usageErr("%s is not locked", p)
			}
		}
		tx.SetLocks(keep)
		msg := &gitstore.Message{Subject: "unlock " + strings.Join(o.paths, " "), Op: "unlock", Worker: who}
		if len(broken) > 0 {
			msg.Subject = "unlock --force " + strings.Join(o.paths, " ")
			msg.Reason = "broken by " + who + ": " + strings.Join(broken, ", ")
		}
		return msg, nil
	})
	if err != nil {
		return err
	}
	for _, p := range o.paths {
		fmt.Fprintf(e.stdout, "unlocked %s\n", p)
	}
	for _, b := range broken {
		fmt.Fprintf(e.stderr, "broke the lock on %s\n", b)
	}
	return nil
}

func runLocks(e *env) error {
	s, err := e.Store()
	if err != nil {
		return err
	}
	tx, err := s.View("")
	if err != nil {
		return err
	}
	all, err := tx.Locks()
	if err != nil {
		return err
	}
	locks := engine.ActiveLocks(all, e.now())
	if e.json {
		return writeJSON(e.stdout, locksOut(locks))
	}
	printLocks(e, locks)
	return nil
}

func printLocks(e *env, locks []state.Lock) {
	now := e.now()
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	for _, l := range locks {
		what := l.Reason
		if l.Task != "" {
			what = l.Feature + "/" + l.Task
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\texpires in %s\n", printable.String(l.Path), printable.String(l.Owner), printable.String(what), roundDur(l.Expires.Sub(now)))
	}
	tw.Flush()
}
