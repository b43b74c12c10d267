package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/engine"
)

// TestFsckLargeHistory: fsck of a 1,000-task feature with about 200
// transitions (half of them done with real work, whose facts fsck asks git
// for) stays well under a few seconds: the walk reads only the subtrees a
// commit changed.
func TestFsckLargeHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 200-transition history")
	}
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	for k, v := range map[string]string{"HOME": dir, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "Zerg Tester", "GIT_AUTHOR_EMAIL": "tester@example.com",
		"GIT_COMMITTER_NAME": "Zerg Tester", "GIT_COMMITTER_EMAIL": "tester@example.com"} {
		t.Setenv(k, v)
	}
	env := os.Environ()
	run(t, dir, env, "git", "init", "-q", "-b", "main", repo)
	run(t, repo, env, "git", "commit", "-q", "--allow-empty", "-m", "initial")

	type task struct {
		ID           string              `json:"id"`
		Title        string              `json:"title"`
		Files        map[string][]string `json:"files,omitempty"`
		Dependencies []string            `json:"dependencies"`
		Verification map[string]string   `json:"verification"`
	}
	var tasks []task
	for i := 0; i < 1000; i++ {
		tk := task{ID: fmt.Sprintf("T%04d", i), Title: "t", Verification: map[string]string{"command": "true"}}
		if i < 50 {
			tk.Files = map[string][]string{"create": {fmt.Sprintf("f%04d.txt", i)}}
		}
		if i%10 == 9 {
			tk.Dependencies = []string{fmt.Sprintf("T%04d", i-1)}
		}
		tasks = append(tasks, tk)
	}
	graph, _ := json.Marshal(map[string]any{"feature": "big", "tasks": tasks})
	if err := os.WriteFile(filepath.Join(dir, "graph.json"), graph, 0o644); err != nil {
		t.Fatal(err)
	}

	zerg := func(want int, args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := Main(append([]string{"git-zerg", "-C", repo}, args...), strings.NewReader(""), &stdout, &stderr)
		if code != want {
			t.Fatalf("git zerg %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	zerg(0, "plan", "--graph", filepath.Join(dir, "graph.json"))
	transitions := 0
	for i := 0; i < 100; i++ {
		id := fmt.Sprintf("T%04d", i)
		zerg(0, "claim", "--worker", "w1", id)
		if i < 50 {
			name := fmt.Sprintf("f%04d.txt", i)
			if err := os.WriteFile(filepath.Join(repo, name), []byte(id), 0o644); err != nil {
				t.Fatal(err)
			}
			run(t, repo, env, "git", "add", name)
			run(t, repo, env, "git", "commit", "-q", "-m", id)
		}
		zerg(0, "done", "--worker", "w1", id)
		transitions += 2
	}
	for i := 100; i < 103; i++ {
		id := fmt.Sprintf("T%04d", i)
		zerg(0, "claim", "--worker", "w2", id)
		zerg(0, "fail", "--worker", "w2", "--reason", "flaky", id)
		zerg(0, "retry", id)
		transitions += 3
	}

	start := time.Now()
	out := zerg(0, "fsck")
	took := time.Since(start)
	want := fmt.Sprintf("big: %d state commits, every transition legal\n", transitions+1)
	if out != want {
		t.Fatalf("fsck printed %q, want %q", out, want)
	}
	// Its speed is shown by the log line and the benchmarks; a timing
	// assert would only measure how busy the machine is.
	t.Logf("fsck of %d transitions over 1,000 tasks: %s", transitions, took)

	// The same history with one hand edit: found, by name.
	ref := "refs/zerg/features/big"
	path := strings.TrimSpace(run(t, repo, env, "sh", "-c", "git ls-tree -r --name-only "+ref+" tasks | grep /T0500$"))
	blob := run(t, repo, env, "git", "cat-file", "blob", ref+":"+path)
	forged := filepath.Join(dir, "forged.json")
	if err := os.WriteFile(forged, []byte(strings.Replace(blob, `"status": "pending"`, `"status": "done"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	idx := []string{"GIT_INDEX_FILE=" + filepath.Join(dir, "idx")}
	h := strings.TrimSpace(run(t, repo, env, "git", "hash-object", "-w", forged))
	run(t, repo, append(env, idx...), "git", "read-tree", ref)
	run(t, repo, append(env, idx...), "git", "update-index", "--cacheinfo", "100644,"+h+","+path)
	tree := strings.TrimSpace(run(t, repo, append(env, idx...), "git", "write-tree"))
	c := strings.TrimSpace(run(t, repo, env, "git", "commit-tree", tree, "-p", ref, "-m", "edit"))
	run(t, repo, env, "git", "update-ref", ref, c)
	out = zerg(1, "fsck")
	if !strings.Contains(out, " T0500: state changed without a transition (status pending → done)") {
		t.Fatalf("fsck of the forged history printed:\n%s", out)
	}
}

// TestCheckIncomingHistory: what sync runs on fetched state refuses a
// forged history (exit 3) and lets a legal one through.
func TestCheckIncomingHistory(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	for k, v := range map[string]string{"HOME": dir, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "Zerg Tester", "GIT_AUTHOR_EMAIL": "tester@example.com",
		"GIT_COMMITTER_NAME": "Zerg Tester", "GIT_COMMITTER_EMAIL": "tester@example.com"} {
		t.Setenv(k, v)
	}
	genv := os.Environ()
	run(t, dir, genv, "git", "init", "-q", "-b", "main", repo)
	run(t, repo, genv, "git", "commit", "-q", "--allow-empty", "-m", "initial")
	graph := filepath.Join(dir, "graph.json")
	if err := os.WriteFile(graph, []byte(`{"feature": "auth", "tasks": [
		{"id": "T1", "title": "a", "verification": {"command": "true"}},
		{"id": "T2", "title": "b", "dependencies": ["T1"], "verification": {"command": "true"}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	zerg := func(args ...string) {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Main(append([]string{"git-zerg", "-C", repo}, args...), strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("git zerg %v: exit %d: %s", args, code, errb.String())
		}
	}
	ref := "refs/zerg/features/auth"
	tip := func() string { return strings.TrimSpace(run(t, repo, genv, "git", "rev-parse", ref)) }
	zerg("plan", "--graph", graph)
	planned := tip()
	zerg("claim", "--worker", "w1", "T1")
	claimed := tip()

	e := &env{ctx: context.Background(), stdout: io.Discard, stderr: io.Discard, now: time.Now, dir: repo}
	s, err := e.Store()
	if err != nil {
		t.Fatal(err)
	}
	if err := engine.CheckIncoming(e.ctx, s, "auth", plumbing.NewHash(planned), plumbing.NewHash(claimed)); err != nil {
		t.Fatalf("legal history refused: %v", err)
	}
	if err := engine.CheckIncoming(e.ctx, s, "auth", plumbing.ZeroHash, plumbing.NewHash(claimed)); err != nil {
		t.Fatalf("legal history new here refused: %v", err)
	}

	// The remote says T2 is claimed although T1 is not done: the blob of
	// T1's claim, renamed, committed as a claim of T2.
	path := func(id string) string {
		return strings.TrimSpace(run(t, repo, genv, "sh", "-c", "git ls-tree -r --name-only "+ref+" tasks | grep /"+id+"$"))
	}
	blob := run(t, repo, genv, "git", "cat-file", "blob", ref+":"+path("T2"))
	blob = strings.Replace(blob, `"status": "pending"`, `"status": "claimed"`, 1)
	forged := filepath.Join(dir, "forged.json")
	if err := os.WriteFile(forged, []byte(blob), 0o644); err != nil {
		t.Fatal(err)
	}
	idx := append(genv, "GIT_INDEX_FILE="+filepath.Join(dir, "idx"))
	h := strings.TrimSpace(run(t, repo, genv, "git", "hash-object", "-w", forged))
	run(t, repo, idx, "git", "read-tree", ref)
	run(t, repo, idx, "git", "update-index", "--cacheinfo", "100644,"+h+","+path("T2"))
	tree := strings.TrimSpace(run(t, repo, idx, "git", "write-tree"))
	c := strings.TrimSpace(run(t, repo, genv, "git", "commit-tree", tree, "-p", claimed, "-m", "claim T2\n\nZerg-Op: claim\nZerg-Task: T2\nZerg-Clock: 3"))
	err = engine.CheckIncoming(e.ctx, s, "auth", plumbing.NewHash(claimed), plumbing.NewHash(c))
	var ce *engine.Error
	if !errors.As(err, &ce) || ce.Kind != engine.Refused || !strings.Contains(ce.Why, "T2: state changed without a transition (status pending → claimed)") {
		t.Fatalf("forged history: got %v", err)
	}
}
