package manual

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// The page is written here as roff, from the command tree, rather than
// through urfave/cli's own man renderer: that one goes through markdown and
// a markdown library whose package initialisation (about half a millisecond
// of tables and regular expressions) every run of the program paid, man page
// or not. Built with -tags urfave_cli_no_docs, as README installs it, the
// program no longer links it at all.

// Page is the man page of app, section 1.
func Page(app *cli.App) (string, error) {
	var w roff
	name := app.Name
	w.req(".TH", strings.ToUpper(name), "1", "", name+" "+app.Version, "Git Manual")
	w.req(".SH", "NAME")
	w.text(name + " - " + app.Usage)
	w.req(".SH", "SYNOPSIS")
	usage := app.UsageText
	if usage == "" {
		usage = app.HelpName + " [global flags] <command> [flags] [args]"
	}
	w.req(".nf")
	w.text(usage)
	w.req(".fi")
	if app.Description != "" {
		w.req(".SH", "DESCRIPTION")
		w.paragraphs(app.Description)
	}
	if flags := visibleFlags(app.Flags); len(flags) > 0 {
		w.req(".SH", "GLOBAL OPTIONS")
		w.flags(flags)
	}
	w.req(".SH", "COMMANDS")
	for _, c := range app.Commands {
		w.command(c, nil)
	}
	return w.b.String(), nil
}

type roff struct{ b strings.Builder }

// req writes a request line, each argument quoted when it needs to be.
func (w *roff) req(name string, args ...string) {
	w.b.WriteString(name)
	for _, a := range args {
		w.b.WriteByte(' ')
		if a == "" || strings.ContainsAny(a, " \t") {
			w.b.WriteString(`"` + strings.ReplaceAll(escape(a), `"`, `""`) + `"`)
		} else {
			w.b.WriteString(escape(a))
		}
	}
	w.b.WriteByte('\n')
}

// text writes lines of text, none of which roff may take for a request.
func (w *roff) text(s string) {
	for _, line := range strings.Split(s, "\n") {
		line = escape(line)
		if strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") {
			line = `\&` + line
		}
		w.b.WriteString(line + "\n")
	}
}

// paragraphs writes hard-wrapped help text: blank lines part paragraphs,
// and indented lines (examples, lists of commands) keep their layout.
func (w *roff) paragraphs(s string) {
	var para, verbatim []string
	flush := func() {
		if len(para) > 0 {
			w.req(".PP")
			w.text(strings.Join(para, "\n"))
			para = nil
		}
		if len(verbatim) > 0 {
			w.req(".PP")
			w.req(".nf")
			w.req(".RS", "4")
			w.text(strings.Join(verbatim, "\n"))
			w.req(".RE")
			w.req(".fi")
			verbatim = nil
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case line[0] == ' ' || line[0] == '\t':
			if len(para) > 0 {
				flush()
			}
			verbatim = append(verbatim, strings.TrimRight(line, " \t"))
		default:
			if len(verbatim) > 0 {
				flush()
			}
			para = append(para, strings.TrimSpace(line))
		}
	}
	flush()
}

func (w *roff) command(c *cli.Command, parents []string) {
	if c.Hidden {
		return
	}
	path := append(append([]string(nil), parents...), c.Name)
	title := strings.Join(path, " ")
	if len(c.Aliases) > 0 {
		title += " (" + strings.Join(c.Aliases, ", ") + ")"
	}
	w.req(".SS", title)
	if c.ArgsUsage != "" || len(visibleFlags(c.Flags)) > 0 {
		w.req(".nf")
		line := "git zerg " + strings.Join(path, " ")
		if len(visibleFlags(c.Flags)) > 0 {
			line += " [flags]"
		}
		if c.ArgsUsage != "" {
			line += " " + c.ArgsUsage
		}
		w.text(line)
		w.req(".fi")
	}
	if c.Usage != "" {
		w.req(".PP")
		w.text(c.Usage)
	}
	if c.Description != "" {
		w.paragraphs(c.Description)
	}
	if flags := visibleFlags(c.Flags); len(flags) > 0 {
		w.flags(flags)
	}
	for _, sub := range c.Subcommands {
		w.command(sub, path)
	}
}

// flags writes one tagged paragraph per flag: its names, the placeholder of
// its value (the back-quoted word of its usage, as -h shows it), and its
// usage.
func (w *roff) flags(flags []cli.Flag) {
	for _, f := range flags {
		var names []string
		for _, n := range f.Names() {
			dash := "--"
			if len(n) == 1 {
				dash = "-"
			}
			names = append(names, `\fB`+escape(dash+n)+`\fR`)
		}
		usage := ""
		placeholder := ""
		if d, ok := f.(cli.DocGenerationFlag); ok {
			placeholder, usage = unquoteUsage(d.GetUsage())
			if !d.TakesValue() {
				placeholder = ""
			} else if placeholder == "" {
				placeholder = "value"
			}
		}
		tag := strings.Join(names, ", ")
		if placeholder != "" {
			tag += ` \fI` + escape(placeholder) + `\fR`
		}
		w.req(".TP")
		w.b.WriteString(tag + "\n")
		w.text(usage)
	}
}

func visibleFlags(flags []cli.Flag) []cli.Flag {
	var out []cli.Flag
	for _, f := range flags {
		if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
			continue
		}
		out = append(out, f)
	}
	return out
}

// escape makes s literal roff text: a backslash is roff's escape
// character, and a plain "-" may be typeset as a hyphen, which a reader
// copying an option from the page would then paste.
func escape(s string) string {
	return strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
}

// unquoteUsage takes the first back-quoted word of a usage as the name of
// the flag's value, as urfave/cli's help does, and drops the quotes.
func unquoteUsage(usage string) (name, rest string) {
	before, after, ok := strings.Cut(usage, "`")
	if !ok {
		return "", usage
	}
	name, after, ok = strings.Cut(after, "`")
	if !ok {
		return "", usage
	}
	return name, before + name + after
}
