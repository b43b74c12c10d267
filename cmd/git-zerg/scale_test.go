package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestScale runs one task of an N-task feature through task mode, each step
// a whole process as users run it, and logs its wall time and peak memory:
//
//	ZERG_SCALE=100000 go test -timeout 2h -run TestScale -v ./cmd/git-zerg/
//
// It is skipped unless ZERG_SCALE is set: at 100,000 tasks it takes half a
// minute to a minute on 2 cores, and a gigabyte of memory at its peak (plan).
// The repository is under the test's temporary directory: point TMPDIR at an
// ordinary disk, not a RAM disk, to measure what users pay.
// ZERG_SCALE_STEP_TIMEOUT (a Go duration, default 30m) bounds each step.
func TestScale(t *testing.T) {
	v := os.Getenv("ZERG_SCALE")
	if v == "" {
		t.Skip("set ZERG_SCALE=N (e.g. 100000) to run one task of an N-task feature")
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("ZERG_SCALE=%q: want a positive number of tasks", v)
	}
	stepTimeout := 30 * time.Minute
	if v := os.Getenv("ZERG_SCALE_STEP_TIMEOUT"); v != "" {
		if stepTimeout, err = time.ParseDuration(v); err != nil {
			t.Fatalf("ZERG_SCALE_STEP_TIMEOUT=%q: %v", v, err)
		}
	}

	r := newBenchRepo(t, n)
	ownGraphFiles(t, r.graph)
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		t.Logf("%d tasks in %s; load average %s", n, r.dir, strings.Join(strings.Fields(string(load))[:3], " "))
	}
	t.Logf("%-22s %10s %12s %12s", "step", "wall", "peak RSS", "stdout")

	// step runs one process and logs its line of the table; the peak RSS is
	// the largest of the process and the children it waited for (git).
	// Go starts a process with vfork, so until its exec the child shares
	// this test's memory, and Linux counts this test's peak as the child's:
	// the test shrinks its memory and resets its peak first, and the floor
	// it logs is what is left of it (a step near the floor used less).
	floor := int64(0)
	step := func(name string, env []string, prog string, args ...string) []byte {
		t.Helper()
		floor = max(floor, resetPeakRSS(t))
		ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, prog, args...)
		var stdout, stderr bytes.Buffer
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = r.repo, env, &stdout, &stderr
		start := time.Now()
		err := cmd.Run()
		wall := time.Since(start)
		var rss int64
		if cmd.ProcessState != nil {
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				rss = ru.Maxrss // KiB on Linux
			}
		}
		t.Logf("%-22s %9.2fs %9.1f MiB %10d B", name, wall.Seconds(), float64(rss)/1024, stdout.Len())
		if ctx.Err() != nil {
			t.Fatalf("%s: still running after %v\n%s", name, stepTimeout, tail(stderr.Bytes()))
		}
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", prog, strings.Join(args, " "), err, tail(stderr.Bytes()))
		}
		return stdout.Bytes()
	}
	zerg := func(args ...string) []byte {
		t.Helper()
		name := strings.Join(args, " ")
		if args[0] == "plan" {
			name = "plan --graph"
		}
		return step(name, r.env, "git-zerg", args...)
	}

	zerg("init")
	defer func() { t.Logf("floor (this test's own RSS at each start): %.1f MiB at most", float64(floor)/1024) }()
	zerg("plan", "--graph", r.graph)
	zerg("status")
	zerg("status", "--json")
	next := strings.Fields(string(zerg("next")))
	id := strings.TrimSpace(string(zerg("claim", "--worker", "w1")))
	if len(next) == 0 || id != next[0] {
		t.Fatalf("claimed %q, but next put first %v", id, next[:min(len(next), 1)])
	}

	// The work, as the README's task mode does it: the task's own file,
	// committed as its worker (through the pre-commit hook).
	if err := os.WriteFile(filepath.Join(r.repo, scaleFile(id)), []byte(id+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, r.repo, r.env, "git", "add", scaleFile(id))
	step("commit (hook)", append(r.env, "ZERG_WORKER=w1"), "git", "commit", "-q", "-m", id+": its file")

	if got := strings.TrimSpace(string(step("done --worker w1", r.env, "git-zerg", "done", "--worker", "w1", id))); !strings.HasPrefix(got, id+" done ") {
		t.Fatalf("done printed %q", got)
	}
	zerg("fsck")
	var exp struct {
		Tasks []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(zerg("export"), &exp); err != nil {
		t.Fatalf("export: %v", err)
	}
	if len(exp.Tasks) != n {
		t.Fatalf("export has %d tasks, want %d", len(exp.Tasks), n)
	}
	for _, tk := range exp.Tasks {
		if (tk.ID == id) != (tk.Status == "done") {
			t.Fatalf("export: %s is %s after %s was done", tk.ID, tk.Status, id)
		}
	}
}

// scaleFile is the file a task of TestScale's graph creates.
func scaleFile(id string) string { return id + ".txt" }

// ownGraphFiles gives each task of a generated graph a file of its own to
// create, so that claims take locks and done judges a commit.
func ownGraphFiles(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	for _, tk := range g["tasks"].([]any) {
		tk := tk.(map[string]any)
		tk["files"] = map[string][]string{"create": {scaleFile(tk["id"].(string))}}
	}
	if b, err = json.Marshal(g); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// resetPeakRSS returns this process's memory to the system, resets its
// peak resident set size, and returns its resident size in KiB.
func resetPeakRSS(t *testing.T) int64 {
	t.Helper()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("resetting the peak RSS: %v", err)
	}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmRSS:" {
			kib, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatalf("VmRSS: %v", err)
			}
			return kib
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// tail is the end of a process's stderr, enough to say why it failed.
func tail(b []byte) string {
	const max = 4000
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}
