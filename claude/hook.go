package claude

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/git-zerg/git-zerg/claude/guard"
	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/lazy"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
	"github.com/git-zerg/git-zerg/worktree"
)

// The hooks Claude Code runs (README, "Claude Code mode"): the Stop hook
// keeps a session driving a rush going while work remains; the PreToolUse
// hook on Bash refuses commands that get around git-zerg.

// maxInput bounds what a hook reads on stdin.
const maxInput = 4 << 20

// InputError is hook input that is not the JSON Claude Code sends.
type InputError struct{ Err error }

func (e *InputError) Error() string {
	return "hook input is not the JSON Claude Code sends (" + e.Err.Error() + ")"
}

func (e *InputError) Unwrap() error { return e.Err }

// ReadInput reads a hook's JSON input from r into v.
func ReadInput(r io.Reader, v any) error {
	data, err := io.ReadAll(io.LimitReader(r, maxInput))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return &InputError{err}
	}
	return nil
}

// StopInput is what Claude Code gives the Stop hook.
type StopInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	StopHookActive bool   `json:"stop_hook_active"`
	Cwd            string `json:"cwd"`
}

// ProjectDir is the repository a hook works in: the project's, which Claude
// Code names for its hooks; the session's cwd follows every cd.
func ProjectDir(cwd string) string {
	if d := os.Getenv("CLAUDE_PROJECT_DIR"); d != "" {
		return d
	}
	return cwd
}

// workerSession: the session is a worker's own, started by a rush; its
// driver is elsewhere.
func workerSession() bool { return os.Getenv("ZERG_WORKER") != "" || os.Getenv("ZERG_TASK") != "" }

// StopHook is one run of the Stop hook. Each of its functions is called
// only when the answer depends on it.
type StopHook struct {
	// Open opens the project's repository.
	Open func() (*gitstore.Store, error)
	// Feature resolves the feature the session works on.
	Feature func() (string, error)
	// Config reads the project's configuration.
	Config func() (*config.Config, error)
	Now    time.Time
	// WorkDir is what a relative transcript path is relative to.
	WorkDir string
}

// Verdict is the Stop hook's answer: Block keeps the session going, with
// Reason telling it what to do next; else Why, when not "", says why it
// may stop.
type Verdict struct {
	Block       bool
	Reason, Why string
}

var taskModeWorker = &lazy.Value[*regexp.Regexp]{Build: func() *regexp.Regexp { return regexp.MustCompile(`^w[0-9]+$`) }} // compiled on first use, not at every start

// Run decides at one stop of a session. It never keeps a session that does
// not drive a rush: a worker's session, a repository without a planned
// feature, and a session whose transcript shows no rush are let go.
func (h StopHook) Run(in StopInput) (Verdict, error) {
	var letGo Verdict
	if workerSession() {
		return letGo, nil
	}
	s, err := h.Open()
	if err != nil {
		return letGo, nil
	}
	if _, _, ok := worktree.WorkerOf(engine.CurrentBranch(s)); ok {
		return letGo, nil
	}
	feature, err := h.Feature()
	if err != nil {
		return letGo, nil
	}
	tx, err := s.View(feature)
	if errors.Is(err, gitstore.ErrNotFound) {
		return letGo, nil
	} else if err != nil {
		return letGo, err
	}
	sessPath := s.Layout().ClaudeSession(sessionFile(in.SessionID))
	var sess Session
	if b, err := os.ReadFile(sessPath); err == nil {
		json.Unmarshal(b, &sess) // a damaged file starts the session afresh
	}
	if !sess.Driving {
		if !transcriptDrives(h.WorkDir, in.TranscriptPath) {
			return letGo, nil
		}
		sess.Driving = true
	}
	tipHash, err := s.ReadRef(gitstore.FeatureRef(feature))
	if err != nil {
		return letGo, err
	}
	tip := tipHash.String()
	moved := sess.Tip != "" && sess.Tip != tip && transitionSince(s, feature, sess.Tip)
	sess.Observe(feature, tip, moved)

	facts, err := h.facts(s, tx, feature)
	if err != nil {
		return letGo, err
	}
	var v Verdict
	v.Block, v.Reason, v.Why = decide(&sess, facts)
	if err := saveSession(sessPath, &sess); err != nil {
		return letGo, err
	}
	return v, nil
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

func saveSession(path string, sess *Session) error {
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
func transcriptDrives(workDir, path string) bool {
	if path == "" {
		return true
	}
	if strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, path[2:])
		}
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(workDir, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	driving, err := driving(f)
	return driving || err != nil
}

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
		// A commit without an op is none of git-zerg's: not progress.
		if op := en.Message.Op; op != "" && op.Progress() {
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
		case state.OpFail:
		case state.OpDone, state.OpMerge:
			if !state.Status(m.To).Stopped() {
				return n, ids, nil
			}
		case state.OpRetry, state.OpPlan:
			return n, ids, nil
		default:
			continue
		}
		n++
		ids = append(ids, m.Task)
	}
	return n, ids, nil
}

// facts gathers what the Stop hook decides on, seen as task mode sees it:
// the lowest unfinished level and its ready tasks.
func (h StopHook) facts(s *gitstore.Store, tx *gitstore.Tx, feature string) (StopFacts, error) {
	f := StopFacts{Feature: feature, Now: h.Now}
	tasks, err := tx.Tasks()
	if err != nil {
		return f, err
	}
	cfg, err := h.Config()
	if err != nil {
		return f, err
	}
	policy := engine.PolicyOf(cfg)
	counts := words.Counts(tasks)
	f.Complete = len(tasks) > 0 && counts[string(state.Done)] == len(tasks)
	if f.Complete {
		return f, nil
	}
	if f.Failures, f.FailedIDs, err = failuresAtHead(s, feature); err != nil {
		return f, err
	}
	for _, t := range tasks {
		if t.Status == state.Claimed && taskModeWorker.Get().MatchString(t.Worker) && t.Owner == engine.Owner(s.Host(), t.Worker) {
			f.Claimed = append(f.Claimed, TaskRef{ID: t.ID(), Worker: t.Worker, Level: t.Level})
		}
		if !t.Status.Settled() && (f.Level == 0 || t.Level < f.Level) {
			f.Level = t.Level
		}
	}
	left := func(t *state.Task) bool {
		return t.Status == state.Failed && t.Attempts >= TaskModeAttempts
	}
	for _, t := range policy.ReadyOrder(tasks, f.Now) {
		if t.Level == f.Level && !left(t) {
			f.Ready = append(f.Ready, TaskRef{ID: t.ID(), Level: t.Level})
		}
	}
	for _, t := range tasks {
		if t.Level == f.Level && policy.Retryable(t) && !left(t) && f.Now.Before(t.NotBefore) {
			f.Backoff = append(f.Backoff, TaskRef{ID: t.ID(), Level: t.Level, NotBefore: t.NotBefore})
		}
	}
	return f, nil
}

// PretoolInput is what Claude Code gives the PreToolUse hook.
type PretoolInput struct {
	ToolName  string `json:"tool_name"`
	ToolInput struct {
		Command string `json:"command"`
	} `json:"tool_input"`
	Cwd string `json:"cwd"`
}

// Pretool is the PreToolUse hook on Bash: why the command must not run, ""
// when it may (or when the tool is not Bash). dir is where git-zerg was
// told to run (-C), "" for the session's cwd.
func Pretool(ctx context.Context, in PretoolInput, dir string) string {
	cmd := in.ToolInput.Command
	if in.ToolName != "Bash" || cmd == "" {
		return ""
	}
	base := dir
	if base == "" {
		base = in.Cwd
	}
	if base == "" {
		base = "."
	}
	at := func(dir string) string {
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(base, dir)
		}
		return dir
	}
	g := guard.Guard{
		Worker:    os.Getenv("ZERG_WORKER") != "",
		WorkerDir: func(dir string) bool { return inWorkerWorktree(ctx, at(dir)) },
		// git alone knows every config file an alias may come from; it is
		// asked only for a subcommand that is none of git's own.
		Alias: func(dir, name string) (string, bool) {
			v, err := (&gitcmd.Runner{Dir: at(dir)}).Line(ctx, "config", "--get", "alias."+name)
			return v, err == nil
		},
		// HEAD read from the file, without starting git: this is asked for
		// every commit.
		Branch: func(dir string) string {
			repo, ok := gitcmd.Discover(at(dir))
			if !ok {
				return ""
			}
			return gitcmd.HeadBranch(repo.GitDir)
		},
	}
	// Whether the session itself runs in a worker worktree matters only to
	// what a worker may not do with git-zerg's refs and locks.
	if !g.Worker && strings.Contains(cmd, "zerg") {
		g.Worker = inWorkerWorktree(ctx, base)
	}
	return g.Check(cmd)
}

// inWorkerWorktree reports whether dir is in a worker worktree: its
// branch is zerg/<feature>/worker-<n>.
func inWorkerWorktree(ctx context.Context, dir string) bool {
	s, err := gitstore.Open(ctx, dir)
	if err != nil {
		return false
	}
	_, _, ok := worktree.WorkerOf(engine.CurrentBranch(s))
	return ok
}
