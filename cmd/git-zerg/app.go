package main

import (
	"context"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/cmdline"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitstore"
)

// env is what a command runs with: streams, clock and a store opened on
// first use. Tests build one from buffers.
type env struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	isTTY  bool // stdout is a terminal
	inTTY  bool // stdin is a terminal: someone may answer a question
	errTTY bool // stderr is a terminal: progress may redraw a live line
	now    func() time.Time

	dir        string // -C
	feature    string // -f
	json       bool   // --json, before or after the command
	globalJSON bool
	appFlags   []cli.Flag

	store *gitstore.Store
}

// Store opens the repository around the working directory.
func (e *env) Store() (*gitstore.Store, error) {
	if e.store != nil {
		return e.store, nil
	}
	dir := e.dir
	if dir == "" {
		dir = "."
	}
	s, err := engine.OpenStore(e.ctx, dir)
	if err != nil {
		return nil, err
	}
	e.store = s
	return s, nil
}

func newApp(e *env, args ...string) *cli.App {
	app := &cli.App{
		Name:      "git-zerg",
		HelpName:  "git zerg",
		Usage:     "run a task graph with parallel workers, state kept in git",
		UsageText: "git zerg [global flags] <command> [flags] [args]",
		Reader:    e.stdin,
		Writer:    e.stdout,
		ErrWriter: e.stderr,
		// Errors become exit codes in exitError, and nowhere else.
		ExitErrHandler:         func(*cli.Context, error) {},
		Version:                cmdline.Version(),
		Suggest:                true,
		UseShortOptionHandling: false,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "C", Usage: "run as if started in `DIR`", Destination: &e.dir},
			&cli.StringFlag{Name: "feature", Aliases: []string{"f"}, Usage: "the feature `NAME`", Destination: &e.feature},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document on stdout", Destination: &e.globalJSON},
		},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageErr("%s", cmdline.LongFlags(err.Error())+cmdline.FlagSuggestion(err, e.appFlags))
		},
		CommandNotFound: func(c *cli.Context, name string) {},
	}
	e.appFlags = app.Flags
	if onlyVersion(args) {
		// The version is printed before any command is looked at.
		return app
	}
	app.Commands = commands(e)
	if c := cmdline.Named(app, args, wholeTree...); c != nil {
		app.Commands = []*cli.Command{c}
	}
	for _, c := range app.Commands {
		prepareCommand(e, c, "")
	}
	return app
}

// onlyVersion tells `git zerg --version` (or -v), which needs no command
// tree: building the fifty commands would be most of what it does.
func onlyVersion(args []string) bool {
	if len(args) < 2 {
		return false
	}
	for _, a := range args[1:] {
		if a != "--version" && a != "-v" {
			return false
		}
	}
	return true
}

// wholeTree are the commands that read the whole command tree: the app
// is built with every command for them (and for no command, or a mistyped
// one), with just the command named for the others.
var wholeTree = []string{"help", "h", "man", "install-man", "completion", "__complete"}

// needsWorkTree are the commands that work in a work tree: they run
// commands there, create worktrees beside it, or judge work by its HEAD. In
// a bare repository each is refused before it writes anything.
func needsWorkTree(name string) bool {
	switch name {
	case "plan", "rush", "claim", "done", "merge", "gates run", "cleanup", "finish":
		return true
	}
	return false
}

// checkWorkTree refuses a bare repository; a directory that is no
// repository at all is left for the command to report.
func (e *env) checkWorkTree(name string) error {
	s, err := e.Store()
	if err != nil {
		return nil
	}
	return engine.CheckWorkTree(s, name)
}

// prepareCommand gives every command the same usage-error handling and a
// --json flag of its own, so `git zerg status --json` and
// `git zerg --json status` mean the same.
func prepareCommand(e *env, c *cli.Command, parent string) {
	name := strings.TrimSpace(parent + " " + c.Name)
	c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
		return &cliError{code: exitUsage, what: cmdline.LongFlags(err.Error()) + cmdline.FlagSuggestion(err, c.Flags), hint: "see git zerg help " + c.Name}
	}
	if len(c.Subcommands) > 0 && c.CustomHelpTemplate == "" {
		c.CustomHelpTemplate = cmdline.SubcommandsHelpTemplate
	}
	hasJSON := false
	for _, f := range c.Flags {
		if f.Names()[0] == "json" {
			hasJSON = true
		}
	}
	if !hasJSON {
		c.Flags = append(c.Flags, &cli.BoolFlag{Name: "json", Usage: "print one JSON document on stdout"})
	}
	// The command's own --json and the global one are separate flags (a
	// shared destination would be reset when the command's flags are set
	// up); the action sees either.
	if action := c.Action; action != nil {
		c.Action = func(ctx *cli.Context) error {
			e.json = e.globalJSON || ctx.Bool("json")
			if needsWorkTree(name) {
				if err := e.checkWorkTree(name); err != nil {
					return err
				}
			}
			return action(ctx)
		}
	}
	for _, sub := range c.Subcommands {
		prepareCommand(e, sub, name)
	}
}

// clock is the time every command goes by. The test binary replaces it
// with one that honours ZERG_CLOCK_OFFSET, which the hooks and workers it
// starts inherit, so tests move time forward instead of sleeping; the real
// binary has no such switch.
var clock = time.Now

// beforeDone is rush.Options.BeforeDone: the test binary sets it to run
// the command ZERG_TEST_BEFORE_DONE names, so that a script can stop (or
// kill) a rush between a merge batch's gates and its state commit; the
// real binary has no such switch.
var beforeDone func(tasks []string)

// idle is rush.Options.Idle: the test binary sets it when
// ZERG_TEST_IDLE names the socket of a benchmark's virtual clock, which
// the stand-in workers wait on; the real binary has no such switch.
var idle func(running int, merging bool) <-chan struct{}

// Main runs git-zerg with args and returns the exit code. main and the
// script tests both call it.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{
		ctx:    context.Background(),
		stdin:  stdin,
		stdout: stdout,
		stderr: stderr,
		now:    clock,
	}
	e.isTTY, e.errTTY = cmdline.IsTerminal(stdout), cmdline.IsTerminal(stderr)
	if f, ok := stdin.(*os.File); ok {
		e.inTTY = cmdline.IsTerminal(f)
	}
	u, err := cmdline.Run(e.ctx, newApp(e, args...), args)
	if u != nil {
		what, hint := u.Message("git zerg")
		return exitError(stderr, &cliError{code: exitUsage, what: what, hint: hint})
	}
	if err != nil {
		return exitError(stderr, err)
	}
	return exitOK
}

// withArgs is an action that takes min to max arguments (max -1: any).
func withArgs(min, max int, run func(a []string) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		a, err := args(c, min, max)
		if err != nil {
			return err
		}
		return run(a)
	}
}
