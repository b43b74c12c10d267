package claude

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/engine/trust"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

func TestSessionFile(t *testing.T) {
	for id, want := range map[string]string{
		"3f2a-b_c.d":             "3f2a-b_c.d.json",
		"../../etc/passwd":       "etcpasswd.json",
		"":                       "default.json",
		"...":                    "default.json",
		"a/b\x00c\nd":            "abcd.json",
		strings.Repeat("x", 200): strings.Repeat("x", 100) + ".json",
	} {
		if got := sessionFile(id); got != want {
			t.Errorf("sessionFile(%q) = %q, want %q", id, got, want)
		}
	}
}

// A new session's first save removes the files of sessions gone for longer
// than sessionTTL; later saves of the same session do not look.
func TestSaveSessionPrunes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "claude")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old, recent := filepath.Join(dir, "old.json"), filepath.Join(dir, "recent.json")
	for _, p := range []string{old, recent} {
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-sessionTTL - time.Hour)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	sess := &Session{Feature: "f", Rounds: 1, Driving: true}
	path := filepath.Join(dir, "new.json")
	if err := saveSession(path, sess); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("a session gone for %s is kept", sessionTTL)
	}
	if _, err := os.Stat(recent); err != nil {
		t.Errorf("a recent session is removed: %v", err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), `"driving": true`) {
		t.Errorf("saved session: %q, %v", b, err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Error("the temporary file is left behind")
	}
}

func TestTranscriptDrives(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("rush.jsonl", `{"type":"user","message":{"content":"/zerg:rush"}}`+"\n")
	write("other.jsonl", `{"type":"user","message":{"content":"fix the tests"}}`+"\n")
	for _, c := range []struct {
		path string
		want bool
	}{
		{"", true},              // nothing to read: taken as driving
		{"missing.jsonl", true}, // unreadable: taken as driving
		{"rush.jsonl", true},    // relative to the work dir
		{"other.jsonl", false},  // read, and no rush in it
		{filepath.Join(dir, "other.jsonl"), false},
	} {
		if got := transcriptDrives(dir, c.path); got != c.want {
			t.Errorf("transcriptDrives(%q) = %v, want %v", c.path, got, c.want)
		}
	}
}

func TestReadInput(t *testing.T) {
	var in StopInput
	if err := ReadInput(strings.NewReader(`{"session_id": "s1", "cwd": "/w"}`), &in); err != nil || in.SessionID != "s1" || in.Cwd != "/w" {
		t.Fatalf("ReadInput: %+v, %v", in, err)
	}
	err := ReadInput(strings.NewReader("not json"), &in)
	var ie *InputError
	if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), "hook input is not the JSON Claude Code sends (") {
		t.Fatalf("bad input: %v", err)
	}
}

func TestProjectDir(t *testing.T) {
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	if got := ProjectDir("/cwd"); got != "/cwd" {
		t.Errorf("without CLAUDE_PROJECT_DIR: %q", got)
	}
	t.Setenv("CLAUDE_PROJECT_DIR", "/project")
	if got := ProjectDir("/cwd"); got != "/project" {
		t.Errorf("with CLAUDE_PROJECT_DIR: %q", got)
	}
}

func TestPretoolOnlyBash(t *testing.T) {
	t.Setenv("ZERG_WORKER", "")
	in := PretoolInput{ToolName: "Bash"}
	in.ToolInput.Command = "git commit --no-verify -m x"
	if Pretool(context.Background(), in, t.TempDir()) == "" {
		t.Error("--no-verify let through")
	}
	in.ToolName = "Edit"
	if got := Pretool(context.Background(), in, t.TempDir()); got != "" {
		t.Errorf("a tool other than Bash refused: %s", got)
	}
}

// planned plans feature f (A, then B) in a new repository.
func planned(t *testing.T) (*engine.Engine, time.Time) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	for k, v := range map[string]string{"HOME": dir, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
		"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com",
		"ZERG_WORKER": "", "ZERG_TASK": ""} {
		t.Setenv(k, v)
	}
	// An outer git's repository (a hook running the tests) is not this one.
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_ZERG_INTERNAL"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main", dir}, {"-C", dir, "commit", "-q", "--allow-empty", "-m", "one"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	plan, problems := levels.Load([]byte(`{"feature": "f", "tasks": [
 {"id": "A", "title": "a", "files": {"create": ["a.txt"]}, "verification": {"command": "true"}},
 {"id": "B", "title": "b", "dependencies": ["A"], "files": {"create": ["b.txt"]}, "verification": {"command": "true"}}]}`))
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s, err := gitstore.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var tasks []*state.Task
	for _, sp := range plan.Graph.Tasks {
		tasks = append(tasks, &state.Task{Spec: sp, Level: plan.Level[sp.ID], Dependents: plan.Dependents[sp.ID], Status: state.Pending,
			History: []state.Event{{At: now, Op: "plan", To: state.Pending, Clock: 1}}})
	}
	clock := func() time.Time { return now }
	err = s.Create(context.Background(), "f", false, clock, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		return &gitstore.Message{Subject: "plan f", Op: "plan"}, tx.Init(&state.Feature{Format: state.Format, Name: "f", PlannedAt: now, Levels: plan.Levels}, tasks)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := trust.Record(s, "f", tasks); err != nil {
		t.Fatal(err)
	}
	return &engine.Engine{Ctx: context.Background(), Store: s, Config: config.Default(), Feature: "f", Now: clock}, now
}

func hookOn(g *engine.Engine, now time.Time, workDir string) StopHook {
	return StopHook{
		Open:    func() (*gitstore.Store, error) { return g.Store, nil },
		Feature: func() (string, error) { return g.Feature, nil },
		Config:  func() (*config.Config, error) { return g.Config, nil },
		Now:     now, WorkDir: workDir,
	}
}

// A session driving a rush is kept going while tasks are ready, and the
// hook remembers it; a failure is counted at the head of the history and is
// a transition.
func TestStopHookRun(t *testing.T) {
	g, now := planned(t)
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "t.jsonl"), []byte(`"/zerg:rush"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := hookOn(g, now, work)
	v, err := h.Run(StopInput{SessionID: "s1", TranscriptPath: "t.jsonl"})
	if err != nil || !v.Block || !strings.Contains(v.Reason, "1 ready task of level 1 (A)") {
		t.Fatalf("a driving session with a ready task: %+v, %v", v, err)
	}
	if _, err := os.Stat(g.Store.Layout().ClaudeSession("s1.json")); err != nil {
		t.Fatalf("the session is not remembered: %v", err)
	}
	// Remembered as driving: the transcript is no longer needed.
	if v, err := h.Run(StopInput{SessionID: "s1", TranscriptPath: "gone.jsonl"}); err != nil || !v.Block {
		t.Fatalf("second stop: %+v, %v", v, err)
	}

	tip, err := g.Store.ReadRef(gitstore.FeatureRef("f"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := g.Claim(engine.ClaimRequest{Worker: "w1", Task: "A"}); err != nil {
		t.Fatal(err)
	}
	if transitionSince(g.Store, "f", tip.String()) != true {
		t.Error("a claim is not seen as a transition")
	}
	if _, _, err := g.Fail(engine.Failure{Worker: "w1", Task: "A", Reason: "broken"}); err != nil {
		t.Fatal(err)
	}
	n, ids, err := failuresAtHead(g.Store, "f")
	if err != nil || n != 1 || len(ids) != 1 || ids[0] != "A" {
		t.Errorf("failuresAtHead = %d %v %v, want 1 [A]", n, ids, err)
	}
	now2, err := g.Store.ReadRef(gitstore.FeatureRef("f"))
	if err != nil {
		t.Fatal(err)
	}
	if transitionSince(g.Store, "f", now2.String()) {
		t.Error("a transition seen since the tip itself")
	}
}

// The hook lets go, without looking further, of what drives no rush.
func TestStopHookLetsGo(t *testing.T) {
	g, now := planned(t)
	h := hookOn(g, now, t.TempDir())
	noOpen := h
	noOpen.Open = func() (*gitstore.Store, error) {
		t.Fatal("the repository opened for a worker's session")
		return nil, nil
	}
	t.Setenv("ZERG_WORKER", "w1")
	if v, err := noOpen.Run(StopInput{}); err != nil || v.Block || v.Why != "" {
		t.Errorf("worker session: %+v, %v", v, err)
	}
	t.Setenv("ZERG_WORKER", "")

	for name, hh := range map[string]StopHook{
		"no repository": {Open: func() (*gitstore.Store, error) { return nil, gitstore.ErrNotRepo }},
		"no feature":    {Open: h.Open, Feature: func() (string, error) { return "", errors.New("none") }},
		"not planned":   {Open: h.Open, Feature: func() (string, error) { return "g", nil }},
	} {
		if v, err := hh.Run(StopInput{}); err != nil || v.Block {
			t.Errorf("%s: %+v, %v", name, v, err)
		}
	}
	notDriving := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(notDriving, []byte(`"fix the tests"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, err := h.Run(StopInput{SessionID: "s2", TranscriptPath: notDriving}); err != nil || v.Block {
		t.Errorf("a session that drives no rush: %+v, %v", v, err)
	}
}
