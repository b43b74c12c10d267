package remote

import (
	"testing"
	"time"
)

// TestFreshDue: a background catch-up is due at once when none ran, and
// otherwise once half as long as the last one took has passed since it
// ended, so that a slow remote is not fetched from without pause.
func TestFreshDue(t *testing.T) {
	var l Link
	now := time.Unix(1e9, 0)
	if !l.freshDue(now) {
		t.Fatal("not due before any catch-up")
	}
	l.caughtUp.Store(now.UnixNano())
	l.catchUpTook.Store(int64(400 * time.Millisecond))
	for _, c := range []struct {
		after time.Duration
		due   bool
	}{{0, false}, {150 * time.Millisecond, false}, {199 * time.Millisecond, false}, {200 * time.Millisecond, true}, {time.Second, true}} {
		if got := l.freshDue(now.Add(c.after)); got != c.due {
			t.Errorf("%v after a 400 ms catch-up: due %v, want %v", c.after, got, c.due)
		}
	}
	l.catchUpTook.Store(int64(50 * time.Millisecond))
	if !l.freshDue(now.Add(freshEvery)) {
		t.Error("a 50 ms catch-up is not due again at the next tick")
	}
}
