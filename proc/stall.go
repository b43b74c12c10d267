package proc

import (
	"sync/atomic"
	"time"
)

// maxStallCheck bounds how often the watchdog looks for progress: a tenth
// of the stall limit (so a stall is seen within 10% of it), at most every
// 30 seconds. Output is counted as it comes and costs nothing to look at;
// Spec.Progress (a stat walk of a worktree) is what the interval keeps
// cheap, and a stall of minutes needs no finer look.
const maxStallCheck = 30 * time.Second

// stallCheck is how often progress is looked for under a stall limit.
func stallCheck(stall time.Duration) time.Duration {
	return max(min(stall/10, maxStallCheck), time.Millisecond)
}

// stallWatch decides, from what it is shown at each look, whether a
// command has stalled. It holds no clock: the looks bring the time.
type stallWatch struct {
	limit   time.Duration
	last    time.Time // of the last progress seen
	written int64
	print   string
}

func newStallWatch(limit time.Duration, now time.Time, written int64, print string) *stallWatch {
	return &stallWatch{limit: limit, last: now, written: written, print: print}
}

// look tells whether the command has made no progress for the limit:
// neither output (written grew) nor a change of its fingerprint.
func (w *stallWatch) look(now time.Time, written int64, print string) bool {
	if written != w.written || print != w.print {
		w.last, w.written, w.print = now, written, print
		return false
	}
	return now.Sub(w.last) >= w.limit
}

// watch closes stalled once the command has made no progress for
// s.Stall, and returns then or once done is closed. It runs apart from
// the supervisor: a slow Progress (a hung file system) delays the
// verdict, never the command's end.
func watch(s Spec, written *atomic.Int64, stalled chan<- struct{}, done <-chan struct{}) {
	progress := s.Progress
	if progress == nil {
		progress = func() string { return "" }
	}
	w := newStallWatch(s.Stall, time.Now(), written.Load(), progress())
	tick := time.NewTicker(stallCheck(s.Stall))
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-tick.C:
			if w.look(now, written.Load(), progress()) {
				close(stalled)
				return
			}
		}
	}
}
