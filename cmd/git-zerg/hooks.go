package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine/setup"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/hooks"
	"github.com/git-zerg/git-zerg/manual"
	"github.com/git-zerg/git-zerg/printable"
	"github.com/git-zerg/git-zerg/report"
)

func hooksCmd(e *env) *cli.Command {
	var binary string
	return &cli.Command{
		Name:  "hooks",
		Usage: "install, remove or show git-zerg's git hooks",
		Description: "The hooks go where git runs hooks from (core.hooksPath, else the hooks directory\n" +
			"shared by every worktree). A hook already there is kept as <name>.zerg-legacy and\n" +
			"runs first; uninstall puts it back exactly as it was.",
		Subcommands: []*cli.Command{
			{
				Name:  "install",
				Usage: "install the pre-commit and pre-push hooks (again: changes nothing)",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "binary", Usage: "run git-zerg at `PATH` (default: this executable); PATH is searched when it is gone",
						Destination: &binary},
				},
				Action: withArgs(0, 0, func([]string) error { return changeHooks(e, false, binary) }),
			},
			{
				Name:   "uninstall",
				Usage:  "remove the hooks and restore the ones they replaced",
				Action: withArgs(0, 0, func([]string) error { return changeHooks(e, true, "") }),
			},
			{
				Name:   "status",
				Usage:  "show which hooks are installed",
				Action: withArgs(0, 0, func([]string) error { return runHooksStatus(e) }),
			},
		},
	}
}

func hookCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:   "hook",
		Usage:  "what the installed git hooks run",
		Hidden: true,
		Subcommands: []*cli.Command{
			{
				Name:   "pre-commit",
				Usage:  "refuse staged paths the committer may not change (exit 1)",
				Action: withArgs(0, -1, func([]string) error { return runHookPreCommit(e) }),
			},
			{
				Name:      "pre-push",
				Usage:     "refuse pushes of locked paths or of ungated staging (exit 1); reads git's lines on stdin",
				ArgsUsage: "[REMOTE [URL]]",
				Action: withArgs(0, 2, func(a []string) error {
					a = append(a, "", "")
					return runHookPrePush(e, a[0], a[1])
				}),
			},
		},
	}
}

func initCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "set up git-zerg in this repository",
		Description: "Checks git (2.38 or later) and worktree support, writes .zerg/config.toml when\n" +
			"it is absent, and installs the hooks. Running it again changes nothing.",
		Action: withArgs(0, 0, func([]string) error { return runInit(e) }),
	}
}

// changeHooks installs the hooks, running git-zerg at binary ("" for this
// executable), or uninstalls them, and prints what it did.
func changeHooks(e *env, uninstall bool, binary string) error {
	s, err := e.Store()
	if err != nil {
		return err
	}
	changes, err := setup.ChangeHooks(e.ctx, s, uninstall, binary)
	for _, c := range changes {
		fmt.Fprintln(e.stdout, c)
	}
	return err
}

func runHooksStatus(e *env) error {
	s, err := e.Store()
	if err != nil {
		return err
	}
	r, err := hooks.StatusIn(e.ctx, s)
	if err != nil {
		return err
	}
	if e.json {
		return report.WriteJSON(e.stdout, r)
	}
	return report.HooksText(e.stdout, r)
}

// hookRun is a run of a git hook in the directory git-zerg runs in.
func (e *env) hookRun() hooks.Run {
	return setup.HookRun(e.ctx, e.workDir(), e.Store, e.now())
}

// workDir is the directory git-zerg runs in (-C).
func (e *env) workDir() string {
	if e.dir == "" {
		return "."
	}
	return e.dir
}

func runHookPreCommit(e *env) error { return hookRefusal(e, e.hookRun().CheckCommit(e.ctx)) }

func runHookPrePush(e *env, remote, url string) error {
	return hookRefusal(e, e.hookRun().CheckPush(e.ctx, e.stdin, remote, url, setup.HookGateSet(e.Store)))
}

// hookRefusal prints each problem of a refused commit or push on its own
// line; the refusal itself is exit 1.
func hookRefusal(e *env, err error) error {
	var r *hooks.Refusal
	if errors.As(err, &r) {
		for _, p := range r.Problems {
			fmt.Fprintf(e.stderr, "git-zerg: %s\n", printable.String(p.String()))
		}
	}
	return err
}

func runInit(e *env) error {
	s, err := e.Store()
	if err != nil {
		return err
	}
	v, err := setup.Check(e.ctx, s)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s: ok (%d.%d or later needed), worktrees: ok\n", v, setup.MinGit[0], setup.MinGit[1])
	if wrote, err := setup.WriteConfig(s.Top); err != nil {
		return err
	} else if wrote {
		fmt.Fprintln(e.stdout, "wrote .zerg/config.toml (commit it to share the settings)")
	} else {
		fmt.Fprintln(e.stdout, "kept .zerg/config.toml (already there)")
	}
	if err := changeHooks(e, false, ""); err != nil {
		return err
	}
	e.printHooksWarning(e.startHooksWarning(s)())
	if found, ok := manual.Finds("git-zerg"); ok && found == "" {
		fmt.Fprintln(e.stderr, "note: git zerg --help opens man git-zerg, not installed yet: git zerg install-man installs it")
	}
	return nil
}

// startHooksWarning starts working out the hooks warning while the caller
// does its own work (hooks.StartWarning); the function it returns waits
// for it.
func (e *env) startHooksWarning(s *gitstore.Store) func() string { return hooks.StartWarning(e.ctx, s) }

// mendHooks puts the hooks back where a hook manager's install left git
// not running them (hooks.Mend), saying so on stderr; what it cannot mend
// is left to the warning that follows, never a failure of the command.
func (e *env) mendHooks(s *gitstore.Store) {
	why, _, err := hooks.Mend(e.ctx, s, "")
	switch {
	case err != nil:
		fmt.Fprintf(e.stderr, "warning: hooks: %s: %v\n", why, err)
	case why != "":
		fmt.Fprintf(e.stderr, "hooks: %s: git-zerg's hooks put back, after the hooks that were there\n", why)
	}
}

// printHooksWarning prints the warning line, when there is one, on stderr:
// stdout may be a JSON document.
func (e *env) printHooksWarning(w string) {
	if w != "" {
		fmt.Fprintf(e.stderr, "warning: %s\n", w)
	}
}
