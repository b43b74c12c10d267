package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/manual"
)

// The man page and shell completion come from the command tree (package
// manual).

func manCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:   "man",
		Usage:  "print the man page (git zerg --help opens it as man git-zerg)",
		Hidden: true,
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			page, err := manual.Page(c.App)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(e.stdout, page)
			return err
		},
	}
}

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
			script, ok := manual.Script(a[0], "zerg")
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
			manual.Write(e.stdout, a[0], manual.Complete(c.App, e.completion(), a[1:len(a)-1], a[len(a)-1]))
			return nil
		},
	}
}

// completion is what only git zerg knows of its words: the values of its
// flags, its features and which tasks each command acts on.
func (e *env) completion() manual.Source {
	return manual.Program{
		SetFlag: func(name, value string) {
			switch name {
			case "C":
				e.dir = value
			case "feature":
				e.feature = value
			}
		},
		Values: map[string][]string{
			"mode":   {"subprocess", "container", "task"},
			"format": {"text", "mermaid", "dot", "json"},
		},
		FeatureFlag: "feature",
		Features: func() []string {
			s, err := e.Store()
			if err != nil {
				return nil
			}
			fs, _ := s.Features()
			return fs
		},
		Tasks: func(cmd string) (out []manual.Candidate) {
			if _, tx, _, err := e.view(); err == nil {
				tasks, _ := tx.Tasks()
				for _, t := range engine.TasksFor(cmd, tasks) {
					out = append(out, manual.Candidate{Value: t.ID(), Desc: string(t.Status) + ": " + t.Spec.Title})
				}
			}
			return out
		},
		Completion: "completion",
	}.Source()
}
