package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

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
	s, err := gitstore.Open(e.ctx, dir)
	if err != nil {
		if errors.Is(err, gitstore.ErrNotRepo) {
			return nil, &cliError{code: exitUsage, what: "not in a git repository", why: dir,
				hint: "run git zerg inside a repository, or give -C DIR"}
		}
		return nil, err
	}
	e.store = s
	return s, nil
}

func newApp(e *env) *cli.App {
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
		Version:                version(),
		Suggest:                true,
		UseShortOptionHandling: false,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "C", Usage: "run as if started in `DIR`", Destination: &e.dir},
			&cli.StringFlag{Name: "feature", Aliases: []string{"f"}, Usage: "the feature `NAME`", Destination: &e.feature},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document on stdout", Destination: &e.globalJSON},
		},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageErr("%s", longFlags(err.Error()))
		},
		CommandNotFound: func(c *cli.Context, name string) {},
		Commands:        commands(e),
	}
	for _, c := range app.Commands {
		prepareCommand(e, c)
	}
	return app
}

// prepareCommand gives every command the same usage-error handling and a
// --json flag of its own, so `git zerg status --json` and
// `git zerg --json status` mean the same.
func prepareCommand(e *env, c *cli.Command) {
	c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
		return &cliError{code: exitUsage, what: longFlags(err.Error()), hint: "see git zerg help " + c.Name}
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
			return action(ctx)
		}
	}
	for _, sub := range c.Subcommands {
		prepareCommand(e, sub)
	}
}

// Main runs git-zerg with args and returns the exit code. main and the
// script tests both call it.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{
		ctx:    context.Background(),
		stdin:  stdin,
		stdout: stdout,
		stderr: stderr,
		now:    time.Now,
	}
	e.isTTY, e.errTTY = isTerminal(stdout), isTerminal(stderr)
	if f, ok := stdin.(*os.File); ok {
		e.inTTY = isTerminal(f)
	}
	app := newApp(e)
	args = reorderArgs(app, args)
	var unknown string
	app.CommandNotFound = func(c *cli.Context, name string) { unknown = name }
	err := app.RunContext(e.ctx, args)
	if unknown != "" {
		return exitError(stderr, &cliError{code: exitUsage, what: fmt.Sprintf("unknown command %q", unknown), hint: "git zerg help lists the commands"})
	}
	if err != nil {
		return exitError(stderr, err)
	}
	return exitOK
}

// reorderArgs moves a command's flags written after its arguments in front
// of them, so that `git zerg claim T1 --worker w1` is honoured rather than
// taking "--worker" as a task id (Go's flag package stops at the first
// argument). "--" ends flags as usual.
func reorderArgs(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	i := 1
	// Global flags up to the command name.
	globalTakes := takesValue(app.Flags)
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "-" {
		out = append(out, args[i])
		if name, hasValue := flagName(args[i]); !hasValue && globalTakes[name] && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
		i++
	}
	if i >= len(args) {
		return out
	}
	cmd := app.Command(args[i])
	out = append(out, args[i])
	i++
	for cmd != nil && len(cmd.Subcommands) > 0 && i < len(args) {
		sub := cmd.Command(args[i])
		if sub == nil {
			break
		}
		cmd = sub
		out = append(out, args[i])
		i++
	}
	if cmd == nil || cmd.SkipFlagParsing {
		return append(out, args[i:]...)
	}
	takes := takesValue(cmd.Flags)
	var flags, pos []string
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i:]...)
			break
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			flags = append(flags, a)
			if name, hasValue := flagName(a); !hasValue && takes[name] && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
			continue
		}
		pos = append(pos, a)
	}
	out = append(out, flags...)
	if len(pos) > 0 && pos[0] != "--" {
		out = append(out, "--")
	}
	return append(out, pos...)
}

func flagName(a string) (name string, hasValue bool) {
	a = strings.TrimLeft(a, "-")
	name, _, hasValue = strings.Cut(a, "=")
	return name, hasValue
}

func takesValue(fs []cli.Flag) map[string]bool {
	m := map[string]bool{}
	for _, f := range fs {
		dv, ok := f.(cli.DocGenerationFlag)
		tv := ok && dv.TakesValue()
		for _, n := range f.Names() {
			m[n] = tv
		}
	}
	return m
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb"
}

// version is the module version `go install` recorded, else the commit
// the binary was built from.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	switch {
	case rev == "":
		return "devel"
	case dirty:
		return "devel " + rev + "+changes"
	}
	return "devel " + rev
}

// flagInMessage finds a long flag as Go's flag package writes it in its
// errors, with one dash.
var flagInMessage = regexp.MustCompile(`(^|[\s:])-([A-Za-z][A-Za-z0-9-]+)`)

// longFlags writes the long flags of a parse error as users type them:
// "flag provided but not defined: --wrkers", not "-wrkers".
func longFlags(msg string) string { return flagInMessage.ReplaceAllString(msg, "$1--$2") }
