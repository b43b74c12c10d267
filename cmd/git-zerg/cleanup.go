package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/report"
)

type cleanupOptions struct {
	state bool
	force bool
}

func cleanupCmd(e *env) *cli.Command {
	var o cleanupOptions
	return &cli.Command{
		Name:  "cleanup",
		Usage: "remove the feature's worktrees and worker branches",
		Description: "A worktree with uncommitted changes, or a worker branch with commits that staging\n" +
			"lacks, is kept (exit 3, naming it) unless --force. The staging branch is the result\n" +
			"and is always kept. --state also deletes the feature's refs under refs/zerg/.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "state", Usage: "also delete the feature's state refs", Destination: &o.state},
			&cli.BoolFlag{Name: "force", Usage: "discard uncommitted or unmerged worker work", Destination: &o.force},
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			return runCleanup(e, &o)
		},
	}
}

type cleanupJSON struct {
	Feature     string   `json:"feature"`
	Worktrees   []string `json:"worktrees"`
	Branches    []string `json:"branches"`
	Staging     string   `json:"staging_checkout,omitempty"`
	Directories []string `json:"directories"`
}

func runCleanup(e *env, o *cleanupOptions) error {
	g, err := e.engine()
	if err != nil {
		return err
	}
	g.Events = func(ev engine.Event) { fmt.Fprintln(e.stderr, ev.Text) }
	c, err := g.Cleanup(engine.CleanupOptions{State: o.state, Force: o.force})
	if err != nil {
		return err
	}
	if e.json {
		return report.WriteJSON(e.stdout, cleanupJSON{g.Feature, orEmpty(c.Worktrees), orEmpty(c.Branches), c.Staging, orEmpty(c.Dirs)})
	}
	var parts []string
	if n := len(c.Worktrees); n > 0 {
		parts = append(parts, report.Plural(n, "worktree"))
	}
	if n := len(c.Branches); n > 0 {
		parts = append(parts, report.Plural(n, "worker branch"))
	}
	if c.Staging != "" {
		parts = append(parts, "the gates' staging checkout")
	}
	if n := len(c.Dirs); n > 0 {
		parts = append(parts, report.Plural(n, "empty directory"))
	}
	if len(parts) == 0 {
		fmt.Fprintf(e.stdout, "cleaned up %s: nothing to remove\n", g.Feature)
		return nil
	}
	fmt.Fprintf(e.stdout, "cleaned up %s: removed %s\n", g.Feature, joinAnd(parts))
	return nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// joinAnd is "a, b and c".
func joinAnd(parts []string) string {
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
