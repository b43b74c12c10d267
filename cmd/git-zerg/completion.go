package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/state"
)

// The man page and shell completion. git turns `git zerg --help` into
// `man git-zerg`; the completion scripts plug into git's own completion of
// bash, zsh and fish, which hand `git zerg ...` to a function of ours, and
// ask the binary (`git zerg __complete`) what fits, task ids and features
// included.

func manCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:   "man",
		Usage:  "print the man page (git zerg --help opens it as man git-zerg)",
		Hidden: true,
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			page, err := c.App.ToManWithSection(1)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(e.stdout, page)
			return err
		},
	}
}

var completionScripts = map[string]string{"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion}

func completionCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script for git zerg",
		ArgsUsage: "bash|zsh|fish",
		Description: "bash: git zerg completion bash > ~/.local/share/bash-completion/completions/git-zerg\n" +
			"zsh:  git zerg completion zsh > ~/.zfunc/_git-zerg   (with fpath+=(~/.zfunc) before compinit)\n" +
			"fish: git zerg completion fish > ~/.config/fish/completions/git-zerg.fish\n" +
			"Each works with git's own completion for `git zerg ...` and for git-zerg itself.",
		Action: func(c *cli.Context) error {
			a, err := args(c, 1, 1)
			if err != nil {
				return err
			}
			script, ok := completionScripts[a[0]]
			if !ok {
				return &cliError{code: exitUsage, what: fmt.Sprintf("completion: unknown shell %q", a[0]), hint: "usage: git zerg completion bash|zsh|fish"}
			}
			_, err = fmt.Fprint(e.stdout, script)
			return err
		},
	}
}

func completeCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:            "__complete",
		Usage:           "what the completion scripts call: SHELL WORD... CURRENT",
		Hidden:          true,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			a := c.Args().Slice()
			if len(a) < 2 {
				return usageErr("usage: git zerg __complete bash|zsh|fish [WORD...] CURRENT")
			}
			for _, cand := range complete(e, c.App, a[1:len(a)-1], a[len(a)-1]) {
				switch a[0] {
				case "zsh":
					fmt.Fprintf(e.stdout, "%s:%s\n", strings.ReplaceAll(cand.value, ":", `\:`), oneLine(cand.desc))
				case "fish":
					fmt.Fprintf(e.stdout, "%s\t%s\n", cand.value, oneLine(cand.desc))
				default:
					fmt.Fprintln(e.stdout, cand.value)
				}
			}
			return nil
		},
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

type candidate struct{ value, desc string }

// flagValues are the values of flags that take one of a few.
var flagValues = map[string][]string{
	"mode":   {"subprocess", "container", "task"},
	"format": {"text", "mermaid", "dot", "json"},
}

// taskFilter narrows the task ids offered to a command's argument.
var taskFilter = map[string]func(*state.Task) bool{
	"done":    func(t *state.Task) bool { return t.Status == state.Claimed },
	"fail":    func(t *state.Task) bool { return t.Status == state.Claimed },
	"release": func(t *state.Task) bool { return t.Status == state.Claimed },
	"retry":   func(t *state.Task) bool { return t.Status == state.Failed || t.Status == state.Blocked },
	"approve": func(t *state.Task) bool { return t.NeedsApproval() && t.Approved == "" },
	"claim":   func(t *state.Task) bool { return t.Status == state.Pending || t.Status == state.Failed },
}

// complete returns what may follow words (the words after `git zerg`)
// for the word being typed, cur. Nothing means: let the shell complete
// file names.
func complete(e *env, app *cli.App, words []string, cur string) []candidate {
	var cmd *cli.Command
	flags, subs := app.Flags, app.Commands
	expect := "" // a flag waiting for its value
	positional, dashdash := 0, false
	for _, w := range words {
		if expect != "" {
			e.setCompletionFlag(expect, w)
			expect = ""
			continue
		}
		if w == "--" {
			dashdash = true
			continue
		}
		if !dashdash && strings.HasPrefix(w, "-") && len(w) > 1 {
			name, value, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
			if f := findFlag(flags, name); f != nil && flagTakesValue(f) {
				if hasValue {
					e.setCompletionFlag(f.Names()[0], value)
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
	var out []candidate
	add := func(value, desc string) {
		if strings.HasPrefix(value, cur) {
			out = append(out, candidate{value, desc})
		}
	}
	valuesOf := func(flag, prefix string) {
		switch flag {
		case "feature":
			for _, f := range e.completionFeatures() {
				add(prefix+f, "feature")
			}
		default:
			for _, v := range flagValues[flag] {
				add(prefix+v, "")
			}
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
			if hiddenFlag(f) {
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
	case cmd != nil && cmd.Name == "completion":
		for _, sh := range []string{"bash", "fish", "zsh"} {
			add(sh, "")
		}
	case cmd != nil && strings.Contains(cmd.ArgsUsage, "TASK"):
		for _, t := range e.completionTasks(cmd.Name) {
			add(t.ID(), string(t.Status)+": "+t.Spec.Title)
		}
	case cmd != nil && strings.Contains(cmd.ArgsUsage, "FEATURE"):
		for _, f := range e.completionFeatures() {
			add(f, "feature")
		}
	}
	return out
}

func (e *env) setCompletionFlag(name, value string) {
	switch name {
	case "C":
		e.dir = value
	case "feature":
		e.feature = value
	}
}

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

func flagTakesValue(f cli.Flag) bool {
	d, ok := f.(cli.DocGenerationFlag)
	return ok && d.TakesValue()
}

func hiddenFlag(f cli.Flag) bool {
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

func (e *env) completionFeatures() []string {
	s, err := e.Store()
	if err != nil {
		return nil
	}
	fs, err := s.Features()
	if err != nil {
		return nil
	}
	return fs
}

func (e *env) completionTasks(command string) []*state.Task {
	_, tx, _, err := e.view()
	if err != nil {
		return nil
	}
	tasks, err := tx.Tasks()
	if err != nil {
		return nil
	}
	keep := taskFilter[command]
	var out []*state.Task
	for _, t := range tasks {
		if keep == nil || keep(t) {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID() < out[j].ID() })
	return out
}

const bashCompletion = `# bash completion for git zerg (git-zerg).
# git's own completion (git-completion.bash) loads this file for "git zerg ..."
# and calls _git_zerg. Install:
#   git zerg completion bash > ~/.local/share/bash-completion/completions/git-zerg

_git_zerg ()
{
	local i=${__git_cmd_idx:-1} IFS=$'\n'
	local -a args=("${words[@]:i+1:cword-i-1}")
	COMPREPLY=($(git zerg __complete bash "${args[@]}" "$cur" 2>/dev/null))
	if [ ${#COMPREPLY[@]} -eq 0 ]; then
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}

# git-zerg run by its own name.
_git_zerg_direct ()
{
	local cur=${COMP_WORDS[COMP_CWORD]} cword=$COMP_CWORD __git_cmd_idx=0
	local -a words=("${COMP_WORDS[@]}")
	_git_zerg
}
complete -o bashdefault -o default -F _git_zerg_direct git-zerg
`

const zshCompletion = `#compdef git-zerg
# zsh completion for git zerg (git-zerg). zsh's git completion calls
# _git-zerg for "git zerg ...". Install into a directory of $fpath:
#   git zerg completion zsh > ~/.zfunc/_git-zerg
# with fpath+=(~/.zfunc) in ~/.zshrc before compinit.

_git-zerg() {
  local -a lines
  lines=("${(@f)$(git zerg __complete zsh "${(@)words[2,CURRENT-1]}" "${words[CURRENT]}" 2>/dev/null)}")
  if [[ -z ${lines[1]} ]]; then
    _files
    return
  fi
  _describe -t git-zerg 'git zerg' lines
}

if [[ ${funcstack[1]} == _git-zerg ]]; then
  _git-zerg "$@"
else
  compdef _git-zerg git-zerg
fi
`

const fishCompletion = `# fish completion for git zerg (git-zerg). fish's git completion hands
# "git zerg ..." to the completions of git-zerg. Install:
#   git zerg completion fish > ~/.config/fish/completions/git-zerg.fish

function __git_zerg_complete
    set -l args
    set -l seen 0
    for t in (commandline -opc)
        if test $seen -eq 1
            set -a args $t
        else if test "$t" = zerg; or string match -q -- '*git-zerg' $t
            set seen 1
        end
    end
    git zerg __complete fish $args (commandline -ct) 2>/dev/null
end

complete -c git-zerg -f -a '(__git_zerg_complete)'
`
