package proc

import (
	"context"
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
// the shell, so a verification that started a server leaves nothing behind:
// neither its child nor the child's own child.
func TestTimeoutKillsGroup(t *testing.T) {
	var pgid int
	res, err := Run(context.Background(), Spec{
		Command: "(sleep 300 & echo grandchild $!; wait) & echo child $!; echo shell $$; sleep 300",
		Timeout: 200 * time.Millisecond,
		Started: func(p int) { pgid = p; cleanupGroup(t, p) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode == 0 || res.Interrupted {
		t.Fatalf("timedOut %v exit %d interrupted %v, want a timeout", res.TimedOut, res.ExitCode, res.Interrupted)
	}
	if res.Duration > 200*time.Millisecond+defaultGrace {
		t.Errorf("took %v to end a group that does not ignore SIGTERM", res.Duration)
	}
	pids := append(pidsIn(t, res.Tail, "grandchild"), pidsIn(t, res.Tail, "child")...)
	gone(t, append(pids, pidsIn(t, res.Tail, "shell")...)...)
	if groupLives(pgid) {
		t.Error("the group is still alive")
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
