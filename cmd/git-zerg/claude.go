package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/claude"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/worktree"
)

// The agent-driven mode for Claude Code (README, "Claude Code mode"):
// install-commands, and the hooks and helpers its files call:
// hook claude-stop, hook claude-pretool, hook claude-gates.

type installCommandsOptions struct {
	uninstall bool
}

func installCommandsCmd(e *env) *cli.Command {
	var o installCommandsOptions
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
			&cli.BoolFlag{Name: "uninstall", Usage: "remove what install-commands added", Destination: &o.uninstall},
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			return runInstallCommands(e, &o)
		},
	}
}

type claudeChangeJSON struct {
	Path   string `json:"path"`
	Action string `json:"action"`
	Note   string `json:"note,omitempty"`
}

func runInstallCommands(e *env, o *installCommandsOptions) error {
	s, err := e.Store()
	if err != nil {
		return err
	}
	if s.Top == "" {
		return usageErr("install-commands needs a work tree (this is a bare repository)")
	}
	var changes []claude.Change
	if o.uninstall {
		changes, err = claude.Uninstall(s.Top)
	} else {
		changes, err = claude.Install(s.Top)
	}
	if errors.Is(err, claude.ErrSettings) {
		return &cliError{code: exitUsage, what: "install-commands: nothing written", why: err.Error(),
			hint: "fix .claude/settings.json (Claude Code reads it as one JSON object), then run it again"}
	}
	if err != nil {
		return err
	}
	if e.json {
		out := struct {
			Changes []claudeChangeJSON `json:"changes"`
		}{Changes: []claudeChangeJSON{}}
		for _, c := range changes {
			out.Changes = append(out.Changes, claudeChangeJSON{c.Path, c.Action, c.Note})
		}
		return writeJSON(e.stdout, out)
	}
	for _, c := range changes {
		fmt.Fprintln(e.stdout, c)
	}
	for _, c := range changes {
		if c.Action == "wrote" || c.Action == "merged" {
			fmt.Fprintln(e.stderr, "hint: commit .claude/ to share it; in Claude Code, /zerg:rush runs the feature")
			break
		}
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
				"is complete, after 3 failed tasks in a row, after 10 stops in a row without a transition,\n" +
				"or after 100 stops. Always exits 0 unless it fails (exit 1).",
			Action: func(c *cli.Context) error {
				if _, err := args(c, 0, 0); err != nil {
					return hookError(err)
				}
				return hookError(runClaudeStop(e))
			},
		},
		&cli.Command{
			Name:  "claude-pretool",
			Usage: "Claude Code PreToolUse hook on Bash: refuse commands that get around git-zerg (exit 2)",
			Action: func(c *cli.Context) error {
				if _, err := args(c, 0, 0); err != nil {
					return hookError(err)
				}
				return runClaudePretool(e)
			},
		},
		&cli.Command{
			Name:  "claude-gates",
			Usage: "run the quality gates on the current branch's commit, for task mode (/zerg:rush)",
			Description: "Task mode commits to the current branch, not to staging: this moves\n" +
				"zerg/<feature>/staging up to HEAD (only forward), then runs the gates as `gates run` does.\n" +
				"Exit 1: a required gate failed; exit 3: staging has commits HEAD lacks.",
			Action: func(c *cli.Context) error {
				if _, err := args(c, 0, 0); err != nil {
					return err
				}
				return runClaudeGates(e)
			},
		},
	)
	return hook
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

// maxHookInput bounds what a hook reads on stdin.
const maxHookInput = 4 << 20

func readHookInput(e *env, v any) error {
	data, err := io.ReadAll(io.LimitReader(e.stdin, maxHookInput))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return &cliError{code: exitFailed, what: "hook input is not the JSON Claude Code sends", why: err.Error()}
	}
	return nil
}

type stopInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	StopHookActive bool   `json:"stop_hook_active"`
	Cwd            string `json:"cwd"`
}

type stopOutput struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

var taskModeWorker = regexp.MustCompile(`^w[0-9]+$`)

// runClaudeStop is the Stop hook. It never keeps a session that does not
// drive a rush: a worker's session, a repository without a planned
// feature, and a session whose transcript shows no rush are let go.
func runClaudeStop(e *env) error {
	var in stopInput
	if err := readHookInput(e, &in); err != nil {
		return err
	}
	// The repository is the project's: Claude Code names it for its hooks;
	// the session's cwd follows every cd.
	if e.dir == "" {
		e.dir = os.Getenv("CLAUDE_PROJECT_DIR")
	}
	if e.dir == "" {
		e.dir = in.Cwd
	}
	letGo := func(why string) error {
		if why != "" {
			fmt.Fprintf(e.stderr, "git-zerg: the session may stop: %s\n", why)
		}
		return nil
	}
	if os.Getenv("ZERG_WORKER") != "" || os.Getenv("ZERG_TASK") != "" {
		return letGo("") // a worker's own session: the driver is elsewhere
	}
	s, err := e.Store()
	if err != nil {
		return letGo("")
	}
	if _, _, ok := workerOfBranch(currentBranch(s)); ok {
		return letGo("")
	}
	feature, err := e.resolveFeature()
	if err != nil {
		return letGo("")
	}
	tx, err := s.View(feature)
	if errors.Is(err, gitstore.ErrNotFound) {
		return letGo("")
	} else if err != nil {
		return err
	}
	sessPath := filepath.Join(s.ZergDir(), "claude", sessionFile(in.SessionID))
	var sess claude.Session
	if b, err := os.ReadFile(sessPath); err == nil {
		json.Unmarshal(b, &sess) // a damaged file starts the session afresh
	}
	if !sess.Driving {
		if !transcriptDrives(e, in.TranscriptPath) {
			return letGo("")
		}
		sess.Driving = true
	}
	tipHash, err := s.ReadRef(gitstore.FeatureRef(feature))
	if err != nil {
		return err
	}
	tip := tipHash.String()
	moved := sess.Tip != "" && sess.Tip != tip && transitionSince(s, feature, sess.Tip)
	sess.Observe(feature, tip, moved)

	facts, err := stopFacts(e, s, tx, feature)
	if err != nil {
		return err
	}
	block, reason, why := claude.Decide(&sess, facts)
	if err := saveSession(sessPath, &sess); err != nil {
		return err
	}
	if !block {
		return letGo(why)
	}
	return writeJSON(e.stdout, stopOutput{Decision: "block", Reason: reason})
}

// sessionFile names a session's file after its id, keeping only what is
// safe in a file name.
func sessionFile(id string) string {
	var b strings.Builder
	for _, r := range id {
		if r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			b.WriteRune(r)
		}
	}
	name := strings.TrimLeft(b.String(), ".")
	if name == "" {
		name = "default"
	}
	if len(name) > 100 {
		name = name[:100]
	}
	return name + ".json"
}

// sessionTTL: session files not written for this long are removed when a
// new session starts.
const sessionTTL = 30 * 24 * time.Hour

func saveSession(path string, sess *claude.Session) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		pruneSessions(filepath.Dir(path))
	}
	data, err := json.MarshalIndent(sess, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// pruneSessions removes the files of sessions long gone.
func pruneSessions(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, en := range ents {
		if fi, err := en.Info(); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > sessionTTL {
			os.Remove(filepath.Join(dir, en.Name()))
		}
	}
}

// transcriptDrives reports whether the session's transcript shows it
// drives a rush. Without a transcript to read, the session is taken as
// driving: stopping it by mistake loses work, keeping it going costs a turn.
func transcriptDrives(e *env, path string) bool {
	if path == "" {
		return true
	}
	if strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, path[2:])
		}
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(e.workDir(), path)
	}
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	driving, err := claude.Driving(f)
	return driving || err != nil
}

// notTransitions are state commits that move no task.
var notTransitions = map[string]bool{"heartbeat": true, "approve": true, "lock": true, "unlock": true, "": true}

// transitionSince reports whether a task transition was recorded after
// the state commit old (also when old is no longer in the history, after
// a re-plan).
func transitionSince(s *gitstore.Store, feature, old string) bool {
	entries, err := s.Log(feature, 500)
	if err != nil {
		return true
	}
	for _, en := range entries {
		if en.Hash.String() == old {
			return false
		}
		if !notTransitions[en.Message.Op] {
			return true
		}
	}
	return true
}

// failuresAtHead counts the failed task outcomes in a row at the head of
// the feature's history; claims, heartbeats and the like in between do not
// break the row, a task done (or a retry, or a re-plan) does.
func failuresAtHead(s *gitstore.Store, feature string) (int, []string, error) {
	entries, err := s.Log(feature, 200)
	if err != nil {
		return 0, nil, err
	}
	n := 0
	var ids []string
	for _, en := range entries {
		m := en.Message
		switch m.Op {
		case "fail":
		case "done", "merge":
			if m.To != string(state.Failed) && m.To != string(state.Blocked) {
				return n, ids, nil
			}
		case "retry", "plan":
			return n, ids, nil
		default:
			continue
		}
		n++
		ids = append(ids, m.Task)
	}
	return n, ids, nil
}

// stopFacts gathers what the Stop hook decides on, seen as task mode sees
// it: the lowest unfinished level and its ready tasks.
func stopFacts(e *env, s *gitstore.Store, tx *gitstore.Tx, feature string) (claude.StopFacts, error) {
	f := claude.StopFacts{Feature: feature, Now: e.now()}
	tasks, err := tx.Tasks()
	if err != nil {
		return f, err
	}
	cfg, err := e.config()
	if err != nil {
		return f, err
	}
	policy := engine.PolicyOf(cfg)
	counts := countStatuses(tasks)
	f.Complete = len(tasks) > 0 && counts[string(state.Done)] == len(tasks)
	if f.Complete {
		return f, nil
	}
	if f.Failures, f.FailedIDs, err = failuresAtHead(s, feature); err != nil {
		return f, err
	}
	for _, t := range tasks {
		if t.Status == state.Claimed && taskModeWorker.MatchString(t.Worker) && t.Owner == engine.Owner(t.Worker) {
			f.Claimed = append(f.Claimed, claude.TaskRef{ID: t.ID(), Worker: t.Worker, Level: t.Level})
		}
		if t.Status != state.Done && t.Status != state.Blocked && (f.Level == 0 || t.Level < f.Level) {
			f.Level = t.Level
		}
	}
	left := func(t *state.Task) bool {
		return t.Status == state.Failed && t.Attempts >= claude.TaskModeAttempts
	}
	for _, t := range policy.ReadyOrder(tasks, f.Now) {
		if t.Level == f.Level && !left(t) {
			f.Ready = append(f.Ready, claude.TaskRef{ID: t.ID(), Level: t.Level})
		}
	}
	for _, t := range tasks {
		if t.Level == f.Level && policy.Retryable(t) && !left(t) && f.Now.Before(t.NotBefore) {
			f.Backoff = append(f.Backoff, claude.TaskRef{ID: t.ID(), Level: t.Level, NotBefore: t.NotBefore})
		}
	}
	return f, nil
}

// claudeBlocks is the exit code by which a Claude Code hook refuses the
// tool call; its stderr goes to the agent.
const claudeBlocks = 2

type pretoolInput struct {
	ToolName  string `json:"tool_name"`
	ToolInput struct {
		Command string `json:"command"`
	} `json:"tool_input"`
	Cwd string `json:"cwd"`
}

// runClaudePretool is the PreToolUse hook on Bash: exit 2 with one line on
// stderr refuses the command, anything else lets it run. A failure of the
// hook itself exits 1, which Claude Code does not take as a refusal.
func runClaudePretool(e *env) error {
	var in pretoolInput
	if err := readHookInput(e, &in); err != nil {
		return hookError(err)
	}
	cmd := in.ToolInput.Command
	if in.ToolName != "Bash" || cmd == "" {
		return nil
	}
	base := e.dir
	if base == "" {
		base = in.Cwd
	}
	if base == "" {
		base = "."
	}
	g := claude.Guard{
		Worker: os.Getenv("ZERG_WORKER") != "",
		WorkerDir: func(dir string) bool {
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(base, dir)
			}
			return inWorkerWorktree(e, dir)
		},
	}
	// Whether the session itself runs in a worker worktree matters only to
	// what a worker may not do with git-zerg's refs and locks.
	if !g.Worker && strings.Contains(cmd, "zerg") {
		g.Worker = inWorkerWorktree(e, base)
	}
	if reason := g.Check(cmd); reason != "" {
		return &cliError{code: claudeBlocks, what: reason}
	}
	return nil
}

// inWorkerWorktree reports whether dir is in a worker worktree: its
// branch is zerg/<feature>/worker-<n>. No git process is started.
func inWorkerWorktree(e *env, dir string) bool {
	s, err := gitstore.Open(e.ctx, dir)
	if err != nil {
		return false
	}
	_, _, ok := workerOfBranch(currentBranch(s))
	return ok
}

// runClaudeGates runs the quality gates for task mode. Its work is
// committed to the current branch, so the staging branch, which the gates
// run on (in a worktree of their own, cached by tree), is first moved up
// to HEAD: created there when missing, fast-forwarded when behind, never
// moved back or sideways.
func runClaudeGates(e *env) error {
	s, _, feature, err := e.view()
	if err != nil {
		return err
	}
	if s.Top == "" {
		return usageErr("claude-gates needs a work tree (this is a bare repository)")
	}
	head, err := engine.HeadCommit(s)
	if err != nil {
		return err
	}
	g, err := e.engine()
	if err != nil {
		return err
	}
	if err := g.Manager().AdvanceStaging(e.ctx, head); errors.Is(err, worktree.ErrStagingAhead) {
		branch := worktree.StagingBranch(feature)
		return &cliError{code: exitRefused, what: "gates refused",
			why:  fmt.Sprintf("%s has commits that HEAD lacks: the gates would not run on the work of this branch", branch),
			hint: "merge " + branch + " into this branch, or run git zerg gates run to gate staging as it is"}
	} else if err != nil {
		return err
	}
	return runGates(e)
}
