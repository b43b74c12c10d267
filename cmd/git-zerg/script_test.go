package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "update testscript archives from actual output (cmp)")

// TestMain registers git-zerg as a program of the test binary, so scripts
// run `exec git zerg ...` exactly as users do, and hooks installed by a
// script find it on PATH too; and waitfor, which scripts and the workers
// they start run to wait for an event instead of sleeping; and zergwait,
// the wait of BenchmarkRushSchedule's stand-in workers on its virtual clock.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"git-zerg": func() {
			clock, beforeDone, idle = offsetClock(), testBeforeDone(), testIdle()
			os.Exit(process())
		},
		"waitfor":  func() { os.Exit(waitforMain()) },
		"zergwait": func() { os.Exit(zergwaitMain()) },
	})
}

// TestScript runs each script in a directory of its own under the test's
// temporary directory: worker worktrees go beside the repository ($WORK),
// so scripts sharing one parent would share (and race on) its
// .zerg-worktrees, and testscript, which removes only $WORK, would leave
// them behind. The test's own cleanup removes the lot.
func TestScript(t *testing.T) {
	files, err := filepath.Glob("../../testdata/script/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, f := range files {
		p := scriptParams(t, "")
		p.Files = []string{f}
		p.WorkdirRoot = t.TempDir()
		testscript.Run(t, p)
	}
}

func scriptParams(t *testing.T, dir string) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Setup: func(env *testscript.Env) error {
			home := env.WorkDir + "/.home"
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			env.Setenv("HOME", home)
			// man finds a git-zerg page (a stand-in) whatever this machine
			// has installed, so that init's note about installing it does
			// not depend on the machine; man_install.txtar clears MANPATH.
			manDir := home + "/man"
			if err := os.MkdirAll(manDir+"/man1", 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(manDir+"/man1/git-zerg.1", []byte(".TH GIT-ZERG 1\n"), 0o644); err != nil {
				return err
			}
			env.Setenv("MANPATH", manDir)
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("GIT_AUTHOR_NAME", "Zerg Tester")
			env.Setenv("GIT_AUTHOR_EMAIL", "tester@example.com")
			env.Setenv("GIT_COMMITTER_NAME", "Zerg Tester")
			env.Setenv("GIT_COMMITTER_EMAIL", "tester@example.com")
			env.Setenv("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
			env.Setenv("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
			h := &fakeHolder{}
			env.Values["forgefake"] = h
			env.Defer(h.close)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":  cmdExitcode,
			"forgefake": cmdForgefake,
			"gitrepo":   cmdGitrepo,
			"graph":     cmdGraph,
			"killafter": cmdKillafter,
			"waitfile":  cmdWaitfile,
		},
	}
}

// exitcode N cmd args...: run cmd and require exit code N (testscript
// alone only tells zero from non-zero, and git zerg's exit codes are API).
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("usage: exitcode N command [args...]")
	}
	got := 0
	err = ts.Exec(args[1], args[2:]...)
	if err != nil {
		var ee *exec.ExitError
		if !asExitError(err, &ee) {
			ts.Fatalf("%v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

// gitrepo [DIR]: init a repository with one commit (README), the usual
// starting point of a script.
func cmdGitrepo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 1 {
		ts.Fatalf("usage: gitrepo [DIR]")
	}
	dir := "."
	if len(args) == 1 {
		dir = args[0]
	}
	for _, a := range [][]string{
		{"init", "-q", "-b", "main", dir},
		{"-C", dir, "commit", "-q", "--allow-empty", "-m", "initial"},
	} {
		if err := ts.Exec("git", a...); err != nil {
			ts.Fatalf("git %s: %v", strings.Join(a, " "), err)
		}
	}
}

// graph N FILE: write a graph of N tasks T0000… to FILE (feature "big"),
// every tenth depending on the one before it, for scripts about sizes no
// one would write out by hand.
func cmdGraph(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: graph N FILE")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("usage: graph N FILE")
	}
	b, err := generatedGraph("big", n)
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), b, 0o644))
}

// offsetClock is time.Now moved by ZERG_CLOCK_OFFSET (a Go duration), so
// that a script can let hours pass: `env ZERG_CLOCK_OFFSET=3h`.
func offsetClock() func() time.Time {
	v := os.Getenv("ZERG_CLOCK_OFFSET")
	if v == "" {
		return time.Now
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "git-zerg (test build): bad ZERG_CLOCK_OFFSET %q\n", v)
		os.Exit(2)
	}
	return func() time.Time { return time.Now().Add(d) }
}

// testBeforeDone runs the shell command ZERG_TEST_BEFORE_DONE (unset:
// nothing) when a rush's merge batch passed its gates and is about to be
// recorded done, the batch's tasks in ZERG_TEST_TASKS: a script's command
// there can mark the point and wait (`waitfor hang`) to be killed.
func testBeforeDone() func(tasks []string) {
	command := os.Getenv("ZERG_TEST_BEFORE_DONE")
	if command == "" {
		return nil
	}
	return func(tasks []string) {
		c := exec.Command("sh", "-c", command)
		c.Env = append(os.Environ(), "ZERG_TEST_TASKS="+strings.Join(tasks, " "))
		c.Stdout, c.Stderr = os.Stderr, os.Stderr
		if err := c.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "git-zerg (test build): ZERG_TEST_BEFORE_DONE: %v\n", err)
		}
	}
}

// waitfile FILE...: wait until every FILE exists and is not empty (at
// most waitBound), so a script can act once a background process reached
// a point (never by sleeping for a guessed time).
func cmdWaitfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: waitfile FILE...")
	}
	abs := make([]string, len(args))
	for i, f := range args {
		abs[i] = ts.MkAbs(f)
	}
	if err := waitUntil(func() bool { return filesReady(abs) }); err != nil {
		ts.Fatalf("waitfile %s: %v", strings.Join(args, " "), err)
	}
}

// killafter FILE...: when the script ends, however it ends, SIGKILL each
// process whose pid a FILE then holds, so that a script about processes
// that must not outlive something leaves none behind even when it fails.
// A pid is killed only while its process's environment holds the script's
// $WORK: the pid may name another process by then.
func cmdKillafter(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: killafter FILE...")
	}
	work := "WORK=" + ts.Getenv("WORK")
	for _, f := range args {
		path := ts.MkAbs(f)
		ts.Defer(func() {
			b, _ := os.ReadFile(path)
			for _, field := range strings.Fields(string(b)) {
				pid, err := strconv.Atoi(field)
				if err != nil || pid <= 1 {
					continue
				}
				env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
				if slices.Contains(strings.Split(string(env), "\x00"), work) {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
	}
}

func asExitError(err error, target **exec.ExitError) bool { return errors.As(err, target) }
