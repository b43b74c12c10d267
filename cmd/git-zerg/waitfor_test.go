package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitBound is how long any wait of a test lasts at most: long enough for
// a loaded 2-core machine, short enough that a broken build fails in
// seconds rather than at the test timeout.
const waitBound = 20 * time.Second

// waitforMain is the `waitfor` program the scripts (and the workers and
// hooks they start) run instead of a shell loop of sleeps: it returns as
// soon as what it waits for happened, and fails, saying what it waited
// for, after waitBound.
//
//	waitfor exists FILE... every FILE exists
//	waitfor file FILE...   every FILE exists and is not empty
//	waitfor gone PID...    every process has ended (or is a zombie)
//	waitfor ok CMD ARG...  CMD exits 0
//	waitfor hang           nothing: a busy worker's stand-in, until killed
//	waitfor hang-ignoring-term READY
//	                       the same, ignoring SIGTERM, as some agents do:
//	                       READY is created once it does, and gets a line
//	                       for each SIGTERM it outlived (a Go program cannot
//	                       keep the shell's `trap '' TERM`: its runtime
//	                       handles SIGTERM itself until told otherwise)
func waitforMain() int {
	if len(os.Args) < 2 || (os.Args[1] != "hang" && len(os.Args) < 3) {
		fmt.Fprintln(os.Stderr, "usage: waitfor exists FILE... | file FILE... | gone PID... | ok CMD [ARG...] | hang | hang-ignoring-term READY")
		return 2
	}
	what, args := os.Args[1], os.Args[2:]
	var done func() bool
	switch what {
	case "hang":
		done = func() bool { return false }
	case "hang-ignoring-term":
		terms := make(chan os.Signal, 1)
		signal.Notify(terms, syscall.SIGTERM)
		f, err := os.Create(args[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, "waitfor:", err)
			return 2
		}
		go func() {
			for range terms {
				f.WriteString("TERM\n")
			}
		}()
		done = func() bool { return false }
	case "exists":
		done = func() bool {
			for _, f := range args {
				if _, err := os.Stat(f); err != nil {
					return false
				}
			}
			return true
		}
	case "file":
		done = func() bool { return filesReady(args) }
	case "gone":
		for _, a := range args {
			if _, err := strconv.Atoi(a); err != nil {
				fmt.Fprintf(os.Stderr, "waitfor gone: %q is not a process id\n", a)
				return 2
			}
		}
		done = func() bool { return processesGone(args) }
	case "ok":
		done = func() bool { return exec.Command(args[0], args[1:]...).Run() == nil }
	default:
		fmt.Fprintf(os.Stderr, "waitfor: unknown %q (exists, file, gone, ok, hang or hang-ignoring-term)\n", what)
		return 2
	}
	if err := waitUntil(done); err != nil {
		fmt.Fprintf(os.Stderr, "waitfor %s %s: %v\n", what, strings.Join(args, " "), err)
		return 1
	}
	return 0
}

// waitUntil polls done until it holds, at most waitBound.
func waitUntil(done func() bool) error {
	deadline := time.Now().Add(waitBound)
	for !done() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not after %s", waitBound)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

func filesReady(files []string) bool {
	for _, f := range files {
		if fi, err := os.Stat(f); err != nil || fi.Size() == 0 {
			return false
		}
	}
	return true
}

// processesGone: no /proc entry, or one in state Z (ended, not yet
// reaped by a parent the test does not control).
func processesGone(pids []string) bool {
	for _, p := range pids {
		b, err := os.ReadFile("/proc/" + p + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ...: comm may hold spaces and parentheses.
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) && s[i+2] == 'Z' {
			continue
		}
		return false
	}
	return true
}

// TestWaitforChecks: what waitfor waits for is seen as it is, so a script
// waiting on it neither passes early nor hangs.
func TestWaitforChecks(t *testing.T) {
	c := exec.Command("sleep", "300")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(c.Process.Pid)
	if processesGone([]string{pid}) {
		t.Error("a running process reads as gone")
	}
	c.Process.Kill()
	if err := waitUntil(func() bool { return processesGone([]string{pid}) }); err != nil {
		t.Errorf("a killed process (a zombie until reaped) does not read as gone: %v", err)
	}
	c.Wait()
	if !processesGone([]string{pid}) {
		t.Error("a reaped process reads as running")
	}
	f := filepath.Join(t.TempDir(), "f")
	if filesReady([]string{f}) {
		t.Error("a missing file reads as ready")
	}
	os.WriteFile(f, nil, 0o644)
	if filesReady([]string{f}) {
		t.Error("an empty file reads as ready")
	}
	os.WriteFile(f, []byte("1\n"), 0o644)
	if !filesReady([]string{f}) {
		t.Error("a written file does not read as ready")
	}
}
