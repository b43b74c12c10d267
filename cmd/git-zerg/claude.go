package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/claude"
	"github.com/git-zerg/git-zerg/report"
)

// The agent-driven mode for Claude Code (README, "Claude Code mode"):
// install-commands, and the hooks and helpers its files call:
// hook claude-stop, hook claude-pretool, hook claude-gates.

func installCommandsCmd(e *env) *cli.Command {
	var uninstall bool
	return &cli.Command{
		Name:  "install-commands",
		Usage: "set up the agent-driven mode for Claude Code (slash commands and hooks)",
		Description: "Writes the slash commands /zerg:rush, /zerg:status and /zerg:retry under\n" +
			".claude/commands/zerg/ and the zerg-worker subagent under .claude/agents/, and merges\n" +
			"git-zerg's Stop and PreToolUse (Bash) hooks into .claude/settings.json, keeping every\n" +
			"key and hook already there. Running it again changes nothing. A generated file that\n" +
			"someone changed is kept. --uninstall takes out what install put in: the generated\n" +
			"files still as written, and git-zerg's hook entries.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "uninstall", Usage: "remove what install-commands added", Destination: &uninstall},
		},
		Action: withArgs(0, 0, func([]string) error { return runInstallCommands(e, uninstall) }),
	}
}

func runInstallCommands(e *env, uninstall bool) error {
	s, err := e.Store()
	if err != nil {
		return err
	}
	changes, err := claude.InstallIn(s, uninstall)
	if err != nil {
		return err
	}
	if e.json {
		return report.WriteJSON(e.stdout, struct {
			Changes []claude.Change `json:"changes"`
		}{append([]claude.Change{}, changes...)})

	}
	for _, c := range changes {
		fmt.Fprintln(e.stdout, c)
	}
	if claude.Wrote(changes) {
		fmt.Fprintln(e.stderr, "hint: commit .claude/ to share it; in Claude Code, /zerg:rush runs the feature")
	}
	return nil
}

// withClaudeHooks adds the Claude Code hooks to the hidden `hook` command.
func withClaudeHooks(e *env, hook *cli.Command) *cli.Command {
	hook.Subcommands = append(hook.Subcommands,
		&cli.Command{
			Name:  "claude-stop",
			Usage: "Claude Code Stop hook: keep a session driving a rush going while work remains",
			Description: "Reads the hook's JSON on stdin. Prints {\"decision\": \"block\", \"reason\": ...} while\n" +
				"tasks can be claimed or are claimed; prints nothing (the session may stop) once the feature\n" +
				"is complete, after 3 failed tasks in a row, after 8 stops in a row without a transition,\n" +
				"or after 100 stops. Always exits 0 unless it fails (exit 1).",
			Action: hookNoArgs(func() error { return hookError(runClaudeStop(e)) }),
		},
		&cli.Command{
			Name:   "claude-pretool",
			Usage:  "Claude Code PreToolUse hook on Bash: refuse commands that get around git-zerg (exit 2)",
			Action: hookNoArgs(func() error { return runClaudePretool(e) }),
		},
		&cli.Command{
			Name:  "claude-gates",
			Usage: "run the quality gates on the current branch's commit, for task mode (/zerg:rush)",
			Description: "Task mode commits to the current branch, not to staging: this moves\n" +
				"zerg/<feature>/staging up to HEAD (only forward), then runs the gates as `gates run` does.\n" +
				"Exit 1: a required gate failed; exit 3: staging has commits HEAD lacks.",
			Action: withArgs(0, 0, func([]string) error { return runClaudeGates(e) }),
		},
	)
	return hook
}

// hookNoArgs is withArgs(0, 0, ...) for a Claude Code hook: a wrong
// argument is the hook's own failure, not a decision.
func hookNoArgs(run func() error) cli.ActionFunc {
	return func(c *cli.Context) error {
		if _, err := args(c, 0, 0); err != nil {
			return hookError(err)
		}
		return run()
	}
}

// hookError keeps a hook's own failure from reading as a decision: for
// Claude Code exit 2 blocks, so any error is reported as exit 1.
func hookError(err error) error {
	if err == nil {
		return nil
	}
	var ce *cliError
	if !errors.As(err, &ce) {
		ce = classify(err)
	}
	return &cliError{code: exitFailed, what: ce.what, why: ce.why}
}

func runClaudeStop(e *env) error {
	var in claude.StopInput
	if err := claude.ReadInput(e.stdin, &in); err != nil {
		return err
	}
	if e.dir == "" {
		e.dir = claude.ProjectDir(in.Cwd)
	}
	v, err := claude.StopHook{Open: e.Store, Feature: e.resolveFeature, Config: e.config, Now: e.now(), WorkDir: e.workDir()}.Run(in)
	switch {
	case err != nil:
		return err
	case v.Block:
		return report.WriteJSON(e.stdout, struct {
			Decision string `json:"decision"`
			Reason   string `json:"reason"`
		}{"block", v.Reason})

	case v.Why != "":
		fmt.Fprintf(e.stderr, "git-zerg: the session may stop: %s\n", v.Why)
	}
	return nil
}

// claudeBlocks is the exit code by which a Claude Code hook refuses the
// tool call; its stderr goes to the agent.
const claudeBlocks = 2

// runClaudePretool: exit 2 with one line on stderr refuses the command,
// anything else lets it run.
func runClaudePretool(e *env) error {
	var in claude.PretoolInput
	if err := claude.ReadInput(e.stdin, &in); err != nil {
		return hookError(err)
	}
	if reason := claude.Pretool(e.ctx, in, e.dir); reason != "" {
		return &cliError{code: claudeBlocks, what: reason}
	}
	return nil
}

func runClaudeGates(e *env) error {
	if _, _, _, err := e.view(); err != nil {
		return err
	}
	g, err := e.engine()
	if err == nil {
		err = g.StageHead()
	}
	if err != nil {
		return err
	}
	return runGates(e)
}
