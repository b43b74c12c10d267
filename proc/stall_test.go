package proc

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"
)

func TestStallWatch(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	w := newStallWatch(10*time.Minute, t0, 0, "a", 0)
	for _, l := range []struct {
		at      time.Duration
		written int64
		print   string
		stalled bool
	}{
		{9 * time.Minute, 0, "a", false},
		{11 * time.Minute, 5, "a", false}, // output: progress
		{20 * time.Minute, 5, "a", false},
		{21 * time.Minute, 5, "b", false}, // the worktree changed
		{30*time.Minute + time.Second, 5, "b", false},
		{31 * time.Minute, 5, "b", true},
	} {
		if got := w.look(at(l.at), l.written, l.print, 0); got != l.stalled {
			t.Fatalf("at %s: stalled %v, want %v", l.at, got, l.stalled)
		}
	}
}

// TestStallWatchBusy: a command that prints nothing and changes nothing
// but keeps a processor busy (a test suite) is working; one that uses
// next to nothing (a client retrying a dead server) is stalled.
func TestStallWatchBusy(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := newStallWatch(10*time.Minute, t0, 0, "a", 0)
	cpu := time.Duration(0)
	for m := 1; m <= 30; m++ {
		cpu += 30 * time.Second // half a processor
		if w.look(t0.Add(time.Duration(m)*time.Minute), 0, "a", cpu) {
			t.Fatalf("busy at minute %d: stalled", m)
		}
	}
	// Then 5 % of a processor, and a sum that falls back (a process
	// reaped outside the group): no progress.
	start := t0.Add(30 * time.Minute)
	for m := 1; m <= 11; m++ {
		cpu += 3 * time.Second
		if m == 5 {
			cpu -= 10 * time.Second
		}
		stalled := w.look(start.Add(time.Duration(m)*time.Minute), 0, "a", cpu)
		if stalled != (m >= 10) {
			t.Fatalf("idle minute %d: stalled %v", m, stalled)
		}
	}
}

func TestStallCheck(t *testing.T) {
	for stall, want := range map[time.Duration]time.Duration{
		10 * time.Minute: 30 * time.Second, time.Minute: 6 * time.Second, time.Second: 100 * time.Millisecond,
	} {
		if got := stallCheck(stall); got != want {
			t.Errorf("StallCheck(%s) = %s, want %s", stall, got, want)
		}
	}
}

// TestStallCountsProcessorTime runs two silent commands under a short
// stall limit: one that keeps a processor busy through its children (as a
// test suite does) runs to its end; one that waits on nothing is ended as
// stalled.
func TestStallCountsProcessorTime(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("processor time is read from /proc")
	}
	// Two seconds of work in short-lived children, each reaped by the shell.
	busy := `end=$(($(date +%s) + 2)); while [ "$(date +%s)" -lt "$end" ]; do :; done`
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before)
	res, err := Run(context.Background(), Spec{Command: busy, Stall: 400 * time.Millisecond, Timeout: time.Minute})
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after)
	// On a machine busy with other work the command may get less than a
	// busyShare of a processor: a stall, rightly, and nothing this test
	// can tell from one. Under half a processor overall, it proves nothing.
	if used := childCPU(after) - childCPU(before); err == nil && res.Stalled && used*2 < res.Duration {
		t.Skipf("the busy command had %v of a processor in %v: too little to tell work from a stall", used, res.Duration)
	}
	if err != nil || res.Stalled || res.ExitCode != 0 {
		t.Fatalf("busy command: %+v %v", res, err)
	}
	res, err = Run(context.Background(), Spec{Command: "exec sleep 60", Stall: 400 * time.Millisecond, Timeout: time.Minute})
	if err != nil || !res.Stalled {
		t.Fatalf("idle command: %+v %v", res, err)
	}
}

// childCPU is the processor time of the children waited for, theirs
// included.
func childCPU(r syscall.Rusage) time.Duration {
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
