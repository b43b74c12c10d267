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
	"github.com/git-zerg/git-zerg/levels"
)

// subcommandsHelpTemplate is urfave's command help with the subcommands
// listed from the command itself.
const subcommandsHelpTemplate = `NAME:
   {{template "helpNameTemplate" .}}

USAGE:
   {{.HelpName}} <command> [command options] [args]{{if .Description}}

DESCRIPTION:
   {{template "descriptionTemplate" .}}{{end}}

COMMANDS:{{range .VisibleCommands}}
   {{join .Names ", "}}{{"\t"}}{{.Usage}}{{end}}{{if .VisibleFlags}}

OPTIONS:{{template "visibleFlagTemplate" .}}{{end}}
`

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
			return usageErr("%s", longFlags(err.Error())+flagSuggestion(err, e.appFlags))
		},
		CommandNotFound: func(c *cli.Context, name string) {},
		Commands:        commands(e),
	}
	e.appFlags = app.Flags
	for _, c := range app.Commands {
		prepareCommand(e, c, "")
	}
	return app
}

// needsWorkTree are the commands that work in a work tree: they run
// commands there, create worktrees beside it, or judge work by its HEAD. In
// a bare repository each is refused before it writes anything.
var needsWorkTree = map[string]bool{
	"plan": true, "rush": true, "claim": true, "done": true, "merge": true,
	"gates run": true, "cleanup": true,
}

// checkWorkTree refuses a bare repository; a directory that is no
// repository at all is left for the command to report.
func (e *env) checkWorkTree(name string) error {
	s, err := e.Store()
	if err != nil || s.Top != "" {
		return nil
	}
	return &cliError{code: exitUsage, what: name + " needs a work tree (this is a bare repository)",
		hint: "run it in a clone: git clone " + s.GitDir + " DIR"}
}

// undefinedFlag finds the flag name in the flag package's error for a
// flag that does not exist.
var undefinedFlag = regexp.MustCompile(`^flag provided but not defined: -+(\S+)`)

// flagSuggestion is "; did you mean --workers?" for a mistyped flag of
// flags, or "".
func flagSuggestion(err error, flags []cli.Flag) string {
	m := undefinedFlag.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	var names []string
	for _, f := range flags {
		for _, n := range f.Names() {
			if len(n) > 1 && n != "help" {
				names = append(names, n)
			}
		}
	}
	if s := levels.Closest(m[1], names); s != "" {
		return "; did you mean --" + s + "?"
	}
	return ""
}

// commandSuggestion is "; did you mean status?" for a mistyped name of one
// of cmds, or "".
func commandSuggestion(name string, cmds []*cli.Command) string {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	if s := levels.Closest(name, names); s != "" {
		return "; did you mean " + s + "?"
	}
	return ""
}

// prepareCommand gives every command the same usage-error handling and a
// --json flag of its own, so `git zerg status --json` and
// `git zerg --json status` mean the same.
func prepareCommand(e *env, c *cli.Command, parent string) {
	name := strings.TrimSpace(parent + " " + c.Name)
	c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
		return &cliError{code: exitUsage, what: longFlags(err.Error()) + flagSuggestion(err, c.Flags), hint: "see git zerg help " + c.Name}
	}
	// urfave's own template for a command with subcommands lists them only
	// once the command has been set up to run, so `git zerg help hooks`
	// (which never runs it) would not name them.
	if len(c.Subcommands) > 0 && c.CustomHelpTemplate == "" {
		c.CustomHelpTemplate = subcommandsHelpTemplate
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
			if needsWorkTree[name] {
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
	e.isTTY, e.errTTY = isTerminal(stdout), isTerminal(stderr)
	if f, ok := stdin.(*os.File); ok {
		e.inTTY = isTerminal(f)
	}
	app := newApp(e)
	args = reorderArgs(app, args)
	var unknown, parent string
	among := app.Commands
	app.CommandNotFound = func(c *cli.Context, name string) {
		unknown = name
		// A subcommand's context names its parent ("hooks instal").
		if c != nil && c.Command != nil && len(c.Command.Subcommands) > 0 && c.Command.Name != app.Name {
			parent, among = c.Command.Name, c.Command.Subcommands
		}
	}
	err := app.RunContext(e.ctx, args)
	if unknown != "" {
		what, hint := fmt.Sprintf("unknown command %q", unknown), "git zerg help lists the commands"
		if parent != "" {
			what = fmt.Sprintf("%s: unknown command %q", parent, unknown)
			hint = "git zerg help " + parent + " lists its commands"
		}
		return exitError(stderr, &cliError{code: exitUsage, what: what + commandSuggestion(unknown, among), hint: hint})
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
