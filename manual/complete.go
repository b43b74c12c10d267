package manual

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// Candidate is one completion: a value and what it is.
type Candidate struct{ Value, Desc string }

// Source is what only the program knows about its words.
type Source struct {
	// SetFlag is told each flag value given before the word being
	// completed, for flags (-C DIR) that change what the others list.
	SetFlag func(name, value string)
	// FlagValues lists the values of the flag named name, nil for any.
	FlagValues func(name string) []Candidate
	// Args lists the arguments of cmd, nil to let the shell complete
	// file names.
	Args func(cmd *cli.Command) []Candidate
}

// Complete returns what may follow words (the words after the program's
// name) for the word being typed, cur: commands, flags with their usage,
// flag values and arguments from src. Nothing means: let the shell complete
// file names.
func Complete(app *cli.App, src Source, words []string, cur string) []Candidate {
	var cmd *cli.Command
	flags, subs := app.Flags, app.Commands
	expect := "" // a flag waiting for its value
	positional, dashdash := 0, false
	set := func(name, value string) {
		if src.SetFlag != nil {
			src.SetFlag(name, value)
		}
	}
	for _, w := range words {
		if expect != "" {
			set(expect, w)
			expect = ""
			continue
		}
		if w == "--" {
			dashdash = true
			continue
		}
		if !dashdash && strings.HasPrefix(w, "-") && len(w) > 1 {
			name, value, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
			if f := findFlag(flags, name); f != nil && takesValue(f) {
				if hasValue {
					set(f.Names()[0], value)
				} else {
					expect = f.Names()[0]
				}
			}
			continue
		}
		if positional == 0 && len(subs) > 0 {
			if sc := findCommand(subs, w); sc != nil {
				cmd, flags, subs = sc, sc.Flags, sc.Subcommands
				continue
			}
		}
		positional++
	}
	var out []Candidate
	add := func(value, desc string) {
		if strings.HasPrefix(value, cur) {
			out = append(out, Candidate{value, desc})
		}
	}
	valuesOf := func(flag, prefix string) {
		if src.FlagValues == nil {
			return
		}
		for _, c := range src.FlagValues(flag) {
			add(prefix+c.Value, c.Desc)
		}
	}
	switch {
	case expect != "":
		valuesOf(expect, "")
	case !dashdash && strings.HasPrefix(cur, "-") && strings.Contains(cur, "="):
		name, _, _ := strings.Cut(cur, "=")
		if f := findFlag(flags, strings.TrimLeft(name, "-")); f != nil {
			valuesOf(f.Names()[0], name+"=")
		}
	case !dashdash && strings.HasPrefix(cur, "-"):
		for _, f := range flags {
			if hidden(f) {
				continue
			}
			usage := ""
			if d, ok := f.(cli.DocGenerationFlag); ok {
				usage = d.GetUsage()
			}
			for _, n := range f.Names() {
				if len(n) == 1 {
					add("-"+n, usage)
				} else {
					add("--"+n, usage)
				}
			}
		}
	case positional == 0 && len(subs) > 0:
		for _, c := range subs {
			if c.Hidden {
				continue
			}
			for _, n := range c.Names() {
				add(n, c.Usage)
			}
		}
	case cmd != nil && cmd.Name == "help":
		for _, c := range app.Commands {
			if !c.Hidden {
				add(c.Name, c.Usage)
			}
		}
	case cmd != nil && src.Args != nil:
		for _, c := range src.Args(cmd) {
			add(c.Value, c.Desc)
		}
	}
	return out
}

// Write prints cands as the completion script of shell reads them: zsh
// "value:description", fish "value<TAB>description", bash the values.
func Write(w io.Writer, shell string, cands []Candidate) {
	for _, c := range cands {
		switch shell {
		case "zsh":
			fmt.Fprintf(w, "%s:%s\n", strings.ReplaceAll(c.Value, ":", `\:`), oneLine(c.Desc))
		case "fish":
			fmt.Fprintf(w, "%s\t%s\n", c.Value, oneLine(c.Desc))
		default:
			fmt.Fprintln(w, c.Value)
		}
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func findFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

func takesValue(f cli.Flag) bool {
	d, ok := f.(cli.DocGenerationFlag)
	return ok && d.TakesValue()
}

func hidden(f cli.Flag) bool {
	if v, ok := f.(cli.VisibleFlag); ok {
		return !v.IsVisible()
	}
	return false
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// Program is what a program knows of its own words, in the terms it knows
// them: Source is built from it.
type Program struct {
	// SetFlag is as in Source.
	SetFlag func(name, value string)
	// Values are the values of the flags that take one of a few.
	Values map[string][]string
	// FeatureFlag names the flag whose values are the features; commands
	// whose arguments name a FEATURE complete them too.
	FeatureFlag string
	Features    func() []string
	// Tasks lists the tasks the command named acts on, for commands whose
	// arguments name a TASK.
	Tasks func(cmd string) []Candidate
	// Completion names the command whose argument is a shell.
	Completion string
}

// Source is the completion source of p.
func (p Program) Source() Source {
	features := func() (out []Candidate) {
		if p.Features != nil {
			for _, f := range p.Features() {
				out = append(out, Candidate{Value: f, Desc: "feature"})
			}
		}
		return out
	}
	return Source{
		SetFlag: p.SetFlag,
		FlagValues: func(name string) []Candidate {
			if name == p.FeatureFlag {
				return features()
			}
			var out []Candidate
			for _, v := range p.Values[name] {
				out = append(out, Candidate{Value: v})
			}
			return out
		},
		Args: func(cmd *cli.Command) (out []Candidate) {
			switch {
			case cmd.Name == p.Completion:
				for _, sh := range shells {
					out = append(out, Candidate{Value: sh})
				}
			case strings.Contains(cmd.ArgsUsage, "TASK"):
				if p.Tasks != nil {
					out = p.Tasks(cmd.Name)
				}
			case strings.Contains(cmd.ArgsUsage, "FEATURE"):
				out = features()
			}
			return out
		},
	}
}
