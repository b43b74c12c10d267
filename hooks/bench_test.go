package hooks

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkPreCommitHook times the pre-commit hook as git runs it: the
// git-zerg binary as a whole process, in a worker worktree of a
// 3,000-file repository whose feature has 200 planned tasks, 10 claimed
// (about 150 locks), with one staged file. `git rev-parse HEAD`, the
// cheapest git process there is, is the yardstick: each iteration runs it
// after the hook, in the same directory, and x-rev-parse is their ratio,
// which holds while the machine's speed drifts. The hook is also timed in
// the main checkout, in a repository without refs/zerg, and right after
// the locks changed (cold locks cache).
//
//	go test -bench PreCommit -run XXX ./hooks/
func BenchmarkPreCommitHook(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git")
	}
	tmp := b.TempDir()
	bin := filepath.Join(tmp, "bin", "git-zerg")
	build := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", bin, "../cmd/git-zerg")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as README installs it
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	env := append(cleanEnv(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	run := func(dir string, extra []string, name string, args ...string) string {
		b.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(env, extra...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	repo := filepath.Join(tmp, "repo")
	run(tmp, nil, "git", "init", "-q", "-b", "main", repo)
	type files struct {
		Create []string `json:"create"`
	}
	type verification struct {
		Command string `json:"command"`
	}
	type task struct {
		ID           string       `json:"id"`
		Title        string       `json:"title"`
		Files        files        `json:"files"`
		Dependencies []string     `json:"dependencies"`
		Verification verification `json:"verification"`
	}
	var tasks []task
	for d := 0; d < 100; d++ {
		dir := filepath.Join(repo, fmt.Sprintf("d%03d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for half := 0; half < 2; half++ {
			n := len(tasks) + 1
			t := task{ID: fmt.Sprintf("T%03d", n), Title: "task", Verification: verification{"true"}}
			if n > 10 {
				t.Dependencies = []string{fmt.Sprintf("T%03d", n-10)}
			}
			for f := half * 15; f < half*15+15; f++ {
				name := fmt.Sprintf("d%03d/f%03d.txt", d, f)
				if err := os.WriteFile(filepath.Join(repo, name), []byte(name+"\n"), 0o644); err != nil {
					b.Fatal(err)
				}
				t.Files.Create = append(t.Files.Create, name)
			}
			tasks = append(tasks, t)
		}
	}
	graph, _ := json.Marshal(map[string]any{"feature": "bench", "tasks": tasks})
	if err := os.WriteFile(filepath.Join(tmp, "graph.json"), graph, 0o644); err != nil {
		b.Fatal(err)
	}
	run(repo, nil, "git", "add", ".")
	run(repo, nil, "git", "commit", "-q", "-m", "3000 files")
	run(repo, nil, bin, "plan", "--graph", filepath.Join(tmp, "graph.json"))
	run(repo, nil, bin, "hooks", "install")
	wt := filepath.Join(tmp, "wt")
	run(repo, nil, "git", "worktree", "add", "-q", "-b", "zerg/bench/worker-1", wt)
	run(wt, nil, bin, "claim", "--worker", "worker-1", "T001")
	for n := 2; n <= 10; n++ {
		run(repo, nil, bin, "claim", "--worker", fmt.Sprintf("worker-%d", n), fmt.Sprintf("T%03d", n))
	}
	run(repo, []string{"ZERG_WORKER=bob"}, bin, "lock", "d099/")
	if err := os.WriteFile(filepath.Join(wt, "d000/f000.txt"), []byte("changed\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	run(wt, nil, "git", "add", "d000/f000.txt")
	if err := os.WriteFile(filepath.Join(repo, "d050/f000.txt"), []byte("changed\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	run(repo, nil, "git", "add", "d050/f000.txt")

	plain := filepath.Join(tmp, "plain")
	run(tmp, nil, "git", "clone", "-q", "--no-local", repo, plain)
	if err := os.WriteFile(filepath.Join(plain, "d000/f000.txt"), []byte("changed\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	run(plain, nil, "git", "add", "d000/f000.txt")

	// The hook must pass where it is timed, or the benchmark measures a
	// refusal.
	run(wt, nil, bin, "hook", "pre-commit")
	run(repo, nil, bin, "hook", "pre-commit")
	run(repo, nil, "git", "commit", "-q", "-m", "through the installed hook")
	run(repo, nil, "git", "reset", "-q", "--soft", "HEAD^")

	// The environment git gives a pre-commit hook: GIT_INDEX_FILE always,
	// GIT_DIR in a linked worktree.
	wtGitDir := filepath.Join(repo, ".git", "worktrees", "wt")
	wtEnv := []string{"GIT_DIR=" + wtGitDir, "GIT_INDEX_FILE=" + filepath.Join(wtGitDir, "index")}
	mainEnv := []string{"GIT_INDEX_FILE=.git/index"}
	cacheDir := filepath.Join(repo, ".git", "zerg", "cache")
	exe := func(b *testing.B, dir string, extra []string, name string, args ...string) time.Duration {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(env[:len(env):len(env)], extra...)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		return time.Since(start)
	}
	bench := func(dir string, extra []string, name string, args ...string) func(b *testing.B) {
		return func(b *testing.B) {
			cold := strings.HasSuffix(b.Name(), "cold-locks-cache")
			var hook, plain time.Duration
			for b.Loop() {
				if cold {
					os.Remove(filepath.Join(cacheDir, "locks"))
					os.Remove(filepath.Join(cacheDir, "locks-tip"))
				}
				hook += exe(b, dir, extra, name, args...)
				plain += exe(b, dir, nil, "git", "rev-parse", "HEAD")
			}
			b.ReportMetric(float64(hook.Microseconds())/1000/float64(b.N), "ms-hook")
			b.ReportMetric(float64(plain.Microseconds())/1000/float64(b.N), "ms-rev-parse")
			b.ReportMetric(hook.Seconds()/plain.Seconds(), "x-rev-parse")
		}
	}
	b.Run("hook/worker-worktree", bench(wt, wtEnv, bin, "hook", "pre-commit"))
	// The first hook after the locks changed reads every lock blob.
	b.Run("hook/worker-worktree/cold-locks-cache", bench(wt, wtEnv, bin, "hook", "pre-commit"))
	b.Run("hook/main-checkout", bench(repo, mainEnv, bin, "hook", "pre-commit"))
	b.Run("hook/no-zerg-refs", bench(plain, mainEnv, bin, "hook", "pre-commit"))
}

// cleanEnv is the environment for git in tests: no guard from an outer
// git-zerg, no user or system configuration, a fixed identity.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Bench", "GIT_AUTHOR_EMAIL=bench@example.com",
		"GIT_COMMITTER_NAME=Bench", "GIT_COMMITTER_EMAIL=bench@example.com")
}
