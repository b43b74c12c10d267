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

// busyShare is the share of one processor a command's group must have used
// since its last progress to count as working: a test suite or a build
// that prints nothing for minutes (an agent with JSON output prints only
// at its end) uses most of one; a client retrying a dead server, or a
// process polling a file, a few percent.
const busyShare = 4 // 1/4: 25 %

// stallWatch decides, from what it is shown at each look, whether a
// command has stalled. It holds no clock: the looks bring the time.
type stallWatch struct {
	limit   time.Duration
	last    time.Time // of the last progress seen
	written int64
	print   string
	// cpu is the most processor time the group was seen to have used,
	// since its sum falls back when a process reaped outside the group
	// takes its time away; cpuAtLast is what it was at the last progress.
	cpu, cpuAtLast time.Duration
}

func newStallWatch(limit time.Duration, now time.Time, written int64, print string, cpu time.Duration) *stallWatch {
	return &stallWatch{limit: limit, last: now, written: written, print: print, cpu: cpu, cpuAtLast: cpu}
}

// look tells whether the command has made no progress for the limit:
// neither output (written grew), nor a change of its fingerprint, nor
// work on a processor (cpu, the processor time its group has used, grew by
// a busyShare of the time since the last progress).
func (w *stallWatch) look(now time.Time, written int64, print string, cpu time.Duration) bool {
	w.cpu = max(w.cpu, cpu)
	busy := w.cpu > w.cpuAtLast && w.cpu-w.cpuAtLast >= now.Sub(w.last)/busyShare
	if written != w.written || print != w.print || busy {
		w.last, w.written, w.print, w.cpuAtLast = now, written, print, w.cpu
		return false
	}
	return now.Sub(w.last) >= w.limit
}

// watch closes stalled once the command has made no progress for
// s.Stall, and returns then or once done is closed. It runs apart from
// the supervisor: a slow Progress (a hung file system) delays the
// verdict, never the command's end.
func watch(s Spec, pgid int, written *atomic.Int64, stalled chan<- struct{}, done <-chan struct{}) {
	progress := s.Progress
	if progress == nil {
		progress = func() string { return "" }
	}
	w := newStallWatch(s.Stall, time.Now(), written.Load(), progress(), groupCPU(pgid))
	tick := time.NewTicker(stallCheck(s.Stall))
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-tick.C:
			if w.look(now, written.Load(), progress(), groupCPU(pgid)) {
				close(stalled)
				return
			}
		}
	}
}
