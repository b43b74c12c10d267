package proc

import (
	"testing"
	"time"
)

func TestStallWatch(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	w := newStallWatch(10*time.Minute, t0, 0, "a")
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
		if got := w.look(at(l.at), l.written, l.print); got != l.stalled {
			t.Fatalf("at %s: stalled %v, want %v", l.at, got, l.stalled)
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
