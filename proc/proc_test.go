package proc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestExitCodeAndTail(t *testing.T) {
	res, err := Run(context.Background(), Spec{Command: "echo one; echo two >&2; exit 7"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 7 || res.TimedOut {
		t.Fatalf("exit %d timedOut %v, want 7 false", res.ExitCode, res.TimedOut)
	}
	if got := LastLines(res.Tail, 2); got != "one | two" {
		t.Errorf("tail %q", got)
	}
}

// TestTimeoutKillsGroup: on timeout the whole process group dies, not just
// the shell, so a verification that started a server leaves nothing behind.
func TestTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "late")
	start := time.Now()
	res, err := Run(context.Background(), Spec{
		Command: "(sleep 1; touch " + marker + ") & sleep 30",
		Timeout: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode == 0 {
		t.Fatalf("timedOut %v exit %d, want a timeout", res.TimedOut, res.ExitCode)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v to time out", d)
	}
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a child of the timed-out command kept running")
	}
}

func TestEnvDirAndStarted(t *testing.T) {
	dir := t.TempDir()
	var pgid int
	res, err := Run(context.Background(), Spec{Command: `echo "$FOO $(pwd)"`, Dir: dir, Env: []string{"FOO=bar"},
		Started: func(p int) { pgid = p }})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Tail, "bar "+dir) {
		t.Errorf("output %q", res.Tail)
	}
	if pgid <= 1 {
		t.Errorf("Started got pgid %d", pgid)
	}
}

func TestTailKeepsTheEnd(t *testing.T) {
	var tb tailBuffer
	tb.max = 10
	for i := 0; i < 100; i++ {
		tb.Write([]byte("abcdefghij"))
	}
	tb.Write([]byte("0123456789"))
	if tb.String() != "0123456789" {
		t.Errorf("tail %q", tb.String())
	}
}

// TestOutputOrder: stdout and stderr reach the tail in the order written
// (one pipe), and SplitStderr keeps stderr's own tail as well.
func TestOutputOrder(t *testing.T) {
	cmd := "for i in 1 2 3 4 5 6 7 8; do echo out$i; echo err$i >&2; done"
	want := "out1\nerr1\nout2\nerr2\nout3\nerr3\nout4\nerr4\nout5\nerr5\nout6\nerr6\nout7\nerr7\nout8\nerr8\n"
	for i := 0; i < 20; i++ {
		res, err := Run(context.Background(), Spec{Command: cmd})
		if err != nil {
			t.Fatal(err)
		}
		if res.Tail != want {
			t.Fatalf("run %d: tail out of order:\n%s", i, res.Tail)
		}
	}
	res, err := Run(context.Background(), Spec{Command: cmd, SplitStderr: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.StderrTail, "err1\n") || strings.Contains(res.StderrTail, "out") {
		t.Fatalf("stderr tail: %q", res.StderrTail)
	}
}
