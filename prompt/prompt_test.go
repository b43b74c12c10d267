package prompt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-zerg/git-zerg/levels"
)

func task() *levels.Task {
	return &levels.Task{
		ID: "T1", Title: "Models", Description: "Write the models.",
		Files:              levels.Files{Create: []string{"src/a.py", "src/b.py"}, Read: []string{"docs/x.md"}},
		AcceptanceCriteria: []string{"has a User"},
		Context:            []string{"design.md#models"},
		Verification:       levels.Verification{Command: "pytest -q"},
	}
}

func TestDefaultSaysEverything(t *testing.T) {
	out, err := builtIn().Render(Data{Feature: "auth", Worker: "worker-2", Level: 1, Attempt: 2, Mode: "worktree",
		Worktree: "/wt/2", Branch: "zerg/auth/worker-2", Task: task()})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"T1: Models", "Write the models.", "Create: src/a.py, src/b.py", "Read for reference: docs/x.md",
		"design.md#models", "has a User", "    pytest -q", "/wt/2", "zerg/auth/worker-2", "attempt 2", "exit with status"} {
		if !strings.Contains(out, want) {
			t.Errorf("prompt lacks %q:\n%s", want, out)
		}
	}
	shared, _ := builtIn().Render(Data{Feature: "auth", Worker: "w1", Level: 1, Attempt: 1, Mode: "shared", Task: &levels.Task{ID: "C1", Title: "check", Verification: levels.Verification{Command: "make lint"}}})
	for _, want := range []string{"check-only task", "ZERG_WORKER=w1 git commit", "git zerg done --worker w1 C1"} {
		if !strings.Contains(shared, want) {
			t.Errorf("shared prompt lacks %q:\n%s", want, shared)
		}
	}
	if strings.Contains(shared, "attempt") {
		t.Errorf("first attempt mentioned:\n%s", shared)
	}
}

// An agent that cannot commit where it runs (Codex in its sandbox) is not
// told to: git-zerg commits what it leaves.
func TestNoCommit(t *testing.T) {
	d := Data{Feature: "auth", Worker: "worker-1", Level: 1, Attempt: 1, Mode: "worktree", Worktree: "/wt/1",
		Branch: "zerg/auth/worker-1", Task: task(), NoteFile: "/run/note.md"}
	commits, _ := builtIn().Render(d)
	d.NoCommit = true
	leaves, err := builtIn().Render(d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(commits, "git commit") {
		t.Errorf("a worker that can commit is not told how:\n%s", commits)
	}
	for _, want := range []string{"Do not commit", "git-zerg commits them for you", "/run/note.md", "/wt/1", "exit with status"} {
		if !strings.Contains(leaves, want) {
			t.Errorf("prompt lacks %q:\n%s", want, leaves)
		}
	}
	if strings.Contains(leaves, "git commit") || strings.Contains(leaves, "Commit your files") {
		t.Errorf("a worker that cannot commit is asked to:\n%s", leaves)
	}
}

func TestOverride(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "prompt.tmpl")
	os.WriteFile(p, []byte("{{.Task.ID}} for {{.Worker}}"), 0o644)
	tm, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := tm.Render(Data{Worker: "w", Task: task()})
	if out != "T1 for w" {
		t.Errorf("got %q", out)
	}
	os.WriteFile(p, []byte("{{.Nope"), 0o644)
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "prompt.tmpl") {
		t.Errorf("bad template: %v", err)
	}
	if tm, err := Load(filepath.Join(dir, "absent")); err != nil || tm == nil {
		t.Errorf("absent template: %v", err)
	}
}
