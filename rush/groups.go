package rush

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/engine/rushmarker"
	"github.com/git-zerg/git-zerg/proc"
	"github.com/git-zerg/git-zerg/state"
)

// releaseOwn gives back, without counting an attempt, every claim this
// rush still holds when it stops on an error of its own: a failure of the
// tool is no task's failure, and must not leave claims that only lease
// expiry would free.
func (r *rush) releaseOwn() {
	tx, err := r.s.View(r.feature)
	if err != nil {
		return
	}
	ws, err := tx.Workers()
	if err != nil {
		return
	}
	for _, w := range ws {
		if w.PID == os.Getpid() && r.s.Host().Holds(w) {
			if _, err := r.g.Interrupt(w.Name, w.Task, nil); err == nil {
				r.g.Transition(w.Task, "given back, the attempt not counted: the rush stopped on an error")
			}
		}
	}
}

// takeBack returns the claims of a dead rush of this host (dead, or every
// one that is gone when nil) to pending, killing first what their workers
// left running.
func takeBack(g *engine.Engine, dead *rushmarker.Holder) error {
	l := g.Store.Layout()
	return g.TakeBack(dead, func(w *state.Worker) { killRecordedGroup(l.ProcessGroup(g.Feature, w.Task)) })
}

// recordGroup notes a worker's process group with its leader's start time
// and the mark of its processes, for a later rush to kill what a dead one
// left running, in the group and out of it.
func recordGroup(path string, pgid int, mark string) {
	start := proc.StartTime(pgid)
	if start == "" {
		start = "-" // unknown (the leader exited): the mark stays the third field
	}
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, []byte(fmt.Sprintf("%d %s %s\n", pgid, start, mark)), 0o600)
}

// killRecordedGroup kills a recorded worker process group, unless its id
// now names another process (a reboot, a wrapped pid counter). A group
// whose leader is gone is still ours: Linux does not hand out an id while
// a group of that id has members.
func killRecordedGroup(path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return
	}
	pgid, err := strconv.Atoi(f[0])
	if err != nil {
		return
	}
	if len(f) > 2 {
		// Bearing the worker's mark, what it detached is its own,
		// whatever the group's leader became.
		defer proc.EndMarked(f[2])
	}
	if now := proc.StartTime(pgid); now != "" && (len(f) < 2 || f[1] != now) {
		return // another process has this id now
	}
	// TERM first: an agent may save its session; the grace is short.
	proc.EndGroup(pgid, 0)
}

// StopDeadRush ends what a dead rush of the feature left running on this
// host and takes its claims back, so that its worktrees can be reused or
// removed with nothing still writing into them.
func StopDeadRush(g *engine.Engine, dead *rushmarker.Holder) error {
	l := g.Store.Layout()
	ents, _ := os.ReadDir(l.RunFeature(g.Feature))
	for _, e := range ents {
		killRecordedGroup(l.ProcessGroup(g.Feature, e.Name()))
	}
	killRecordedGroup(l.GateGroup(g.Feature))
	return takeBack(g, dead)
}
