package demo

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/levels"
)

// The demo is a newcomer's first graph: it plans without a warning.
func TestDemoGraphHasNoWarnings(t *testing.T) {
	data, err := json.Marshal(Graph())
	if err != nil {
		t.Fatal(err)
	}
	_, errs, warns := levels.Check(data)
	for _, p := range append(errs, warns...) {
		t.Errorf("demo graph: %s", p)
	}
}

func TestSetup(t *testing.T) {
	dir, err := Setup(filepath.Join(t.TempDir(), "new"), 4)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(dir, ".zerg", "config.toml"))
	if err != nil || !strings.Contains(string(cfg), "count = 4\n") || !strings.Contains(string(cfg), " demo-worker\"\n") {
		t.Fatalf("%v\n%s", err, cfg)
	}
	out, err := exec.Command("git", "-C", dir, "log", "--format=%an %s", "--name-only").CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, want := range []string{"git-zerg demo greeter: task graph", ".gsd/specs/greeter/task-graph.json", ".zerg/config.toml", "README.md"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the first commit lacks %q:\n%s", want, out)
		}
	}
	// A directory that holds something is refused, and left as it was.
	var ee *engine.Error
	if _, err := Setup(dir, 1); !errors.As(err, &ee) || ee.Kind != engine.Usage || !strings.Contains(ee.What, "is not empty") {
		t.Fatalf("a non-empty directory: %v", err)
	}
}

// work runs the worker on the task id of the demo graph, in a repository
// of its own, and returns the repository and what the worker said.
func work(t *testing.T, id, attempt string) (string, string, error) {
	was := busy
	busy = func() time.Duration { return 0 }
	t.Cleanup(func() { busy = was })
	repo := t.TempDir()
	for _, a := range [][]string{{"init", "-q"}, {"config", "user.name", "t"}, {"config", "user.email", "t@t.invalid"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, a...)...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	var spec any
	for _, tk := range Graph()["tasks"].([]task) {
		if tk.ID == id {
			spec = tk
		}
	}
	b, _ := json.Marshal(spec)
	file := filepath.Join(t.TempDir(), "task.json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ZERG_TASK_FILE", file)
	t.Setenv("ZERG_ATTEMPT", attempt)
	t.Chdir(repo)
	var stderr strings.Builder
	err := Work(&stderr)
	return repo, stderr.String(), err
}

func TestWorkWritesAndCommits(t *testing.T) {
	// DOCS-1 (an even id length) commits its work itself.
	repo, _, err := work(t, "DOCS-1", "1")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(repo, "docs", "usage.md")); err != nil || !strings.Contains(string(b), "bin/hello") {
		t.Fatalf("%v: %s", err, b)
	}
	if out, err := exec.Command("git", "-C", repo, "log", "--format=%s").CombinedOutput(); err != nil || string(out) != "DOCS-1: Usage notes\n" {
		t.Fatalf("%v: %q", err, out)
	}
	// CLI-1 leaves its work for the tool to commit.
	repo, _, err = work(t, "CLI-1", "1")
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := exec.Command("git", "-C", repo, "status", "--porcelain").CombinedOutput(); string(out) != "?? bin/\n" {
		t.Fatalf("status: %q", out)
	}
}

func TestWorkFlakyOnce(t *testing.T) {
	var ee *engine.Error
	repo, stderr, err := work(t, "CLI-2", "1")
	if !errors.As(err, &ee) || ee.Kind != engine.Failed || !strings.Contains(stderr, "flaky on purpose") {
		t.Fatalf("first attempt: %v, %q", err, stderr)
	}
	if _, err := os.Stat(filepath.Join(repo, "bin", "bye")); err == nil {
		t.Fatal("the failed attempt wrote its file")
	}
	if _, _, err := work(t, "CLI-2", "2"); err != nil {
		t.Fatalf("second attempt: %v", err)
	}
}

func TestWorkOutsideARush(t *testing.T) {
	t.Setenv("ZERG_TASK_FILE", filepath.Join(t.TempDir(), "none.json"))
	var ee *engine.Error
	if err := Work(&strings.Builder{}); !errors.As(err, &ee) || ee.Kind != engine.Usage {
		t.Fatalf("%v", err)
	}
}
