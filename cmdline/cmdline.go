// Package cmdline is what a urfave/cli program needs around its command
// tree and that urfave does not do: flags written after the arguments, "did
// you mean" for mistyped names, flag names as users type them in parse
// errors, subcommands named in help, and the version the binary was built
// at. It knows no command of its own.
package cmdline

import (
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/lazy"
	"github.com/git-zerg/git-zerg/levels"
)

// SubcommandsHelpTemplate is urfave's command help with the subcommands
// listed from the command itself: urfave's own template lists them only
// once the command has been set up to run, so `help CMD` (which never runs
// it) would not name them.
const SubcommandsHelpTemplate = `NAME:
   {{template "helpNameTemplate" .}}

USAGE:
   {{.HelpName}} <command> [command options] [args]{{if .Description}}

DESCRIPTION:
   {{template "descriptionTemplate" .}}{{end}}

COMMANDS:{{range .VisibleCommands}}
   {{join .Names ", "}}{{"\t"}}{{.Usage}}{{end}}{{if .VisibleFlags}}

OPTIONS:{{template "visibleFlagTemplate" .}}{{end}}
`

// Reorder moves a command's flags written after its arguments in front of
// them, so that `prog claim T1 --worker w1` is honoured rather than taking
// "--worker" as an argument (Go's flag package stops at the first
// argument), and the app's global flags written after the command name
// (`prog status -f NAME`) in front of the command, unless the command has
// a flag of that name itself. "--" ends flags as usual; a command that
// skips flag parsing gets its words as they are.
func Reorder(app *cli.App, args []string) []string {
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
	path := []string{args[i]}
	i++
	for cmd != nil && len(cmd.Subcommands) > 0 && i < len(args) {
		sub := cmd.Command(args[i])
		if sub == nil {
			break
		}
		cmd = sub
		path = append(path, args[i])
		i++
	}
	if cmd == nil || cmd.SkipFlagParsing {
		return append(append(out, path...), args[i:]...)
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
			name, hasValue := flagName(a)
			own, isOwn := takes[name]
			global, isGlobal := globalTakes[name]
			if !isOwn && isGlobal {
				out = append(out, a)
				if !hasValue && global && i+1 < len(args) {
					i++
					out = append(out, args[i])
				}
				continue
			}
			flags = append(flags, a)
			if !hasValue && own && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
			continue
		}
		pos = append(pos, a)
	}
	out = append(append(out, path...), flags...)
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
		tv := flagTakesValue(f)
		for _, n := range f.Names() {
			m[n] = tv
		}
	}
	return m
}

// flagTakesValue reports whether f is followed by a value (--worker W), not a
// switch (--force).
func flagTakesValue(f cli.Flag) bool {
	d, ok := f.(cli.DocGenerationFlag)
	return ok && d.TakesValue()
}

// undefinedFlag finds the flag name in the flag package's error for a
// flag that does not exist.
var undefinedFlag = &lazy.Value[*regexp.Regexp]{Build: func() *regexp.Regexp { return regexp.MustCompile(`^flag provided but not defined: -+(\S+)`) }} // compiled on first use, not at every start

// FlagSuggestion is "; did you mean --workers?" when err is the flag
// package's error for a mistyped flag of flags, else "".
func FlagSuggestion(err error, flags []cli.Flag) string {
	m := undefinedFlag.Get().FindStringSubmatch(err.Error())
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
// of the visible cmds, or "".
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

// flagInMessage finds a long flag as Go's flag package writes it in its
// errors, with one dash.
var flagInMessage = &lazy.Value[*regexp.Regexp]{Build: func() *regexp.Regexp { return regexp.MustCompile(`(^|[\s:])-([A-Za-z][A-Za-z0-9-]+)`) }} // compiled on first use, not at every start

// LongFlags writes the long flags of a parse error as users type them:
// "flag provided but not defined: --wrkers", not "-wrkers".
func LongFlags(msg string) string { return flagInMessage.Get().ReplaceAllString(msg, "$1--$2") }

// CommandName is the full name of the command c runs ("gates run"), from
// its context chain.
func CommandName(c *cli.Context) string {
	name := c.Command.Name
	for _, p := range c.Lineage()[1:] {
		if p.Command != nil && p.Command.Name != "" && p.Command.Name != c.App.Name {
			name = p.Command.Name + " " + name
		}
	}
	return name
}

// Version is the module version `go install` recorded, else the commit
// the binary was built from.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return version(bi)
}

func version(bi *debug.BuildInfo) string {
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

// Named is the command args name exactly (after the global flags), when
// running it needs no other command of app: a command's help, parsing and
// "did you mean" for its subcommands and flags all come from the command
// itself. Nil when args name no command, or a command that reads the whole
// tree (whole, e.g. help, completion and the man page). A start that builds
// and sets up one command instead of fifty is what a hook or a claim pays
// for at every run.
func Named(app *cli.App, args []string, whole ...string) *cli.Command {
	globalTakes := takesValue(app.Flags)
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "-" {
		if args[i] == "--" {
			return nil
		}
		if name, hasValue := flagName(args[i]); !hasValue && globalTakes[name] {
			i++
		}
		i++
	}
	if i >= len(args) {
		return nil
	}
	for _, w := range whole {
		if args[i] == w {
			return nil
		}
	}
	for _, c := range app.Commands {
		for _, n := range c.Names() {
			if n == args[i] {
				return c
			}
		}
	}
	return nil
}
