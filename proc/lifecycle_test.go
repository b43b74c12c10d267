package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLeftoverChildDoesNotHoldRun: an agent that starts a server with &
// and exits 0 is done when it exits. The server, which holds the output
// pipe, is ended instead of waited for.
func TestLeftoverChildDoesNotHoldRun(t *testing.T) {
	res, err := Run(context.Background(), Spec{
		Command: "sleep 300 & echo child $!; echo finished",
		Grace:   time.Minute, // SIGTERM must be enough
		Started: func(p int) { cleanupGroup(t, p) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.TimedOut || res.Interrupted || !res.Leftovers {
		t.Fatalf("%+v, want exit 0 with leftovers", res)
	}
	if res.Duration > 10*time.Second {
		t.Errorf("took %v", res.Duration)
	}
	if !strings.HasSuffix(res.Tail, "finished\n") {
		t.Errorf("tail %q", res.Tail)
	}
	gone(t, pidsIn(t, res.Tail, "child")...)
}

// TestLeftoverIgnoringTerm: a leftover that ignores SIGTERM is killed
// after the grace.
func TestLeftoverIgnoringTerm(t *testing.T) {
	const grace = 300 * time.Millisecond
	res, err := Run(context.Background(), Spec{
		Command: termIgnoringLeftover(t),
		Grace:   grace,
		Started: func(p int) { cleanupGroup(t, p) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !res.Leftovers {
		t.Fatalf("%+v, want exit 0 with leftovers", res)
	}
	if res.Duration < grace || res.Duration > grace+3*time.Second {
		t.Errorf("took %v with a grace of %v", res.Duration, grace)
	}
	gone(t, pidsIn(t, res.Tail, "child")...)
}

// termIgnoringLeftover is a command that leaves a child ignoring SIGTERM
// behind. It exits only once the child has set its trap (told through a
// fifo, so the wait is bounded by the child's own start): a child still
// starting when the SIGTERM comes would die of it and the test would prove
// nothing.
func termIgnoringLeftover(t *testing.T) string {
	fifo := filepath.Join(t.TempDir(), "ready")
	return fmt.Sprintf("mkfifo %[1]s; (trap '' TERM; echo ready > %[1]s; exec sleep 300) & read x < %[1]s; echo child $!", fifo)
}

// TestOutputBeforeExitKept: all the output written before the main process
// exits arrives, even while a leftover holds the pipe.
func TestOutputBeforeExitKept(t *testing.T) {
	out := newLines()
	res, err := Run(context.Background(), Spec{
		Command: "head -c 1000000 /dev/zero | tr '\\0' x; echo; sleep 300 & echo child $!; echo last line",
		Stdout:  out, Stderr: out,
		Started: func(p int) { cleanupGroup(t, p) },
	})
	if err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if n := strings.Count(s, "x"); n != 1000000 {
		t.Errorf("%d bytes of the output arrived, want 1000000", n)
	}
	if !strings.HasSuffix(s, "last line\n") || !strings.HasSuffix(res.Tail, "last line\n") {
		t.Errorf("the output's end is missing: %q", res.Tail)
	}
	gone(t, pidsIn(t, s, "child")...)
}

// TestEscapedProcessDoesNotHoldRun: a process that leaves the group (a
// daemon) cannot be ended by it, but Run does not wait for the pipe it
// holds.
func TestEscapedProcessDoesNotHoldRun(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	res, err := Run(context.Background(), Spec{
		Command: "setsid sh -c 'echo $$ > " + pidFile + "; exec sleep 300' & while ! test -s " + pidFile + "; do :; done; echo done",
		Started: func(p int) { cleanupGroup(t, p) },
	})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(pidFile)
	pids := pidsIn(t, "escaped "+string(b), "escaped")
	t.Cleanup(func() { killGroup(pids[0]) })
	if res.ExitCode != 0 || !strings.Contains(res.Tail, "done") {
		t.Fatalf("%+v", res)
	}
	if res.Duration > 5*time.Second {
		t.Errorf("took %v", res.Duration)
	}
}

// TestStopTermIgnoring: Stop ends a command that ignores SIGTERM, with its
// children, within the grace and a little.
func TestStopTermIgnoring(t *testing.T) {
	out := newLines()
	h, err := Start(context.Background(), Spec{
		Command: "trap '' TERM; sleep 300 & echo child $!; echo ready $$; wait",
		Stdout:  out,
	})
	if err != nil {
		t.Fatal(err)
	}
	cleanupGroup(t, h.Pgid())
	shell := out.await(t, "ready ")
	stopped := time.Now()
	h.Stop()
	res, err := h.Wait()
	took := time.Since(stopped)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stop to group gone: %v (grace %v)", took, defaultGrace)
	if !res.Interrupted || res.TimedOut || res.ExitCode != 137 {
		t.Fatalf("%+v, want interrupted, killed", res)
	}
	// The grace was given: KILL came no earlier (how much later depends on
	// the machine, so no upper bound).
	if took < defaultGrace {
		t.Errorf("stop took %v with a grace of %v", took, defaultGrace)
	}
	gone(t, pidsIn(t, out.String(), "child")...)
	gone(t, pidsIn(t, "shell "+shell, "shell")...)
	if groupLives(h.Pgid()) {
		t.Error("the group is still alive")
	}
}

// TestSecondStopKills: a second Stop does not wait for the grace.
func TestSecondStopKills(t *testing.T) {
	out := newLines()
	h, err := Start(context.Background(), Spec{Command: "trap '' TERM; echo ready; sleep 300 & wait",
		Stdout: out, Grace: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	cleanupGroup(t, h.Pgid())
	out.await(t, "ready")
	h.Stop()
	h.Stop()
	select {
	case <-h.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a second Stop did not kill")
	}
	if res, _ := h.Wait(); !res.Interrupted || res.ExitCode != 137 {
		t.Fatalf("%+v", res)
	}
}

// TestStopEndsWithTerm: a command that lets SIGTERM end it is gone at
// once, and what it printed until then is kept.
func TestStopEndsWithTerm(t *testing.T) {
	out := newLines()
	h, err := Start(context.Background(), Spec{Command: "echo ready; sleep 300", Stdout: out, Grace: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	cleanupGroup(t, h.Pgid())
	out.await(t, "ready")
	h.Stop()
	res, err := h.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.ExitCode != 143 || res.Tail != "ready\n" {
		t.Fatalf("%+v", res)
	}
	// Stopping what is over does nothing, and the result stays.
	h.Stop()
	h.Kill()
	if again, _ := h.Wait(); again != res {
		t.Errorf("a second Wait: %+v", again)
	}
}

// TestCancelStops: cancelling ctx is a Stop, not a timeout.
func TestCancelStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := newLines()
	h, err := Start(ctx, Spec{Command: "echo ready; sleep 300", Stdout: out})
	if err != nil {
		t.Fatal(err)
	}
	cleanupGroup(t, h.Pgid())
	out.await(t, "ready")
	cancel()
	res, err := h.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.TimedOut || res.ExitCode != 143 {
		t.Fatalf("%+v", res)
	}
}

// TestTrappedStopExitZero: a command that catches SIGTERM and exits 0 did
// not succeed: it was interrupted.
func TestTrappedStopExitZero(t *testing.T) {
	out := newLines()
	h, err := Start(context.Background(), Spec{Command: "trap 'exit 0' TERM; echo ready; sleep 300 & wait",
		Stdout: out, Grace: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	cleanupGroup(t, h.Pgid())
	out.await(t, "ready")
	h.Stop()
	res, _ := h.Wait()
	if !res.Interrupted || res.ExitCode != 130 {
		t.Fatalf("%+v, want interrupted, exit 130", res)
	}
}

// TestForkAfterStop: what the command starts while it handles SIGTERM is
// ended too, without waiting for the grace.
func TestForkAfterStop(t *testing.T) {
	out := newLines()
	h, err := Start(context.Background(), Spec{
		Command: "trap 'sleep 300 & echo child $!; exit 0' TERM; sleep 300 & echo ready; wait",
		Stdout:  out, Grace: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	cleanupGroup(t, h.Pgid())
	out.await(t, "ready")
	h.Stop()
	select {
	case <-h.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a process started after SIGTERM holds the command")
	}
	gone(t, pidsIn(t, out.String(), "child")...)
}

// TestTimeoutTermIgnoring: a hung command that ignores SIGTERM is killed
// after its timeout and the grace.
func TestTimeoutTermIgnoring(t *testing.T) {
	res, err := Run(context.Background(), Spec{Command: "trap '' TERM; sleep 300 & echo child $!; wait",
		Timeout: 100 * time.Millisecond, Grace: 200 * time.Millisecond,
		Started: func(p int) { cleanupGroup(t, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Interrupted || res.ExitCode != 137 {
		t.Fatalf("%+v", res)
	}
	if res.Duration > 3*time.Second {
		t.Errorf("took %v", res.Duration)
	}
	gone(t, pidsIn(t, res.Tail, "child")...)
}

// TestManyRunsLeaveNothing: hung commands, timeouts and leftovers, one
// after another, never leave a process running.
func TestManyRunsLeaveNothing(t *testing.T) {
	commands := []Spec{
		{Command: "sleep 300 & echo child $!"},
		{Command: "sleep 300 & echo child $!; sleep 300", Timeout: 50 * time.Millisecond},
		{Command: termIgnoringLeftover(t), Grace: 50 * time.Millisecond},
		{Command: "trap '' TERM; (sleep 300 & echo child $!; wait) & echo child $!; wait",
			Timeout: 50 * time.Millisecond, Grace: 50 * time.Millisecond},
	}
	start := time.Now()
	for i := 0; i < 20; i++ {
		s := commands[i%len(commands)]
		s.Started = func(p int) { cleanupGroup(t, p) }
		// Every process of the run has this in its environment, even one
		// killed before it could print its pid.
		mark := fmt.Sprintf("ZERG_PROC_TEST_ROUND=%d", i)
		s.Env = []string{mark}
		res, err := Run(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if left := marked(mark); len(left) > 0 {
			gone(t, left...)
		}
		if _, ok := lineValue(res.Tail, "child "); ok {
			gone(t, pidsIn(t, res.Tail, "child")...)
		}
	}
	t.Logf("20 runs in %v", time.Since(start))
}

func TestNotFound(t *testing.T) {
	res, err := Run(context.Background(), Spec{Command: "zerg-no-such-program --flag"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 127 || !res.NotFound() {
		t.Errorf("%+v, want 127, not found", res)
	}
	script := filepath.Join(t.TempDir(), "agent")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = Run(context.Background(), Spec{Command: script})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 126 || !res.NotFound() {
		t.Errorf("%+v, want 126, not found", res)
	}
	if (Result{ExitCode: 1}).NotFound() || (Result{ExitCode: 127, Interrupted: true}).NotFound() {
		t.Error("NotFound of other results")
	}
}

func TestStdin(t *testing.T) {
	res, err := Run(context.Background(), Spec{Command: "cat", Stdin: strings.NewReader("hello\n")})
	if err != nil || res.Tail != "hello\n" {
		t.Fatalf("%+v %v", res, err)
	}
	// A command that does not read an endless input still ends.
	res, err = Run(context.Background(), Spec{Command: "exit 3", Stdin: endless{}})
	if err != nil || res.ExitCode != 3 {
		t.Fatalf("%+v %v", res, err)
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'y'
	}
	return len(p), nil
}

// TestFailingWriterDoesNotBlock: when the caller's writer fails, the
// command still runs to its end and the tail still comes.
func TestFailingWriterDoesNotBlock(t *testing.T) {
	res, err := Run(context.Background(), Spec{Command: "head -c 300000 /dev/zero; echo end", Stdout: failing{}, Stderr: failing{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !strings.HasSuffix(res.Tail, "end\n") {
		t.Fatalf("exit %d tail %q", res.ExitCode, res.Tail[len(res.Tail)-10:])
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestEndGroup: the helper for groups a dead rush left.
func TestEndGroup(t *testing.T) {
	cmd := exec.Command("sh", "-c", "trap '' TERM; sleep 300 & echo $!; wait")
	cmd.SysProcAttr = sysProcAttr()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cleanupGroup(t, cmd.Process.Pid)
	buf := make([]byte, 32)
	n, _ := io.ReadAtLeast(stdout, buf, 2)
	pids := pidsIn(t, "child "+string(buf[:n]), "child")
	go cmd.Wait() // reap the shell, as the rush that started it would have
	if !EndGroup(cmd.Process.Pid, 100*time.Millisecond) {
		t.Fatal("EndGroup says the group lives on")
	}
	gone(t, pids...)
}
