package claude

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"
)

// The Stop hook's limits (README, "Claude Code mode"): it lets a session stop
// after MaxFailures failed tasks in a row, after MaxIdle stops in a row at
// which the state had not moved since the stop before, and after MaxRounds
// stops in all. MaxIdle is no more than the 8 blocks in a row after which
// Claude Code stops honouring a Stop hook (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP):
// past that, its limit would decide, not this one.
const (
	MaxFailures = 3
	MaxIdle     = 8
	MaxRounds   = 100
	// TaskModeAttempts is how often /zerg:rush tries a task: once, and
	// one retry. A failed task tried that often is left for a human
	// (/zerg:retry), even when retry.max_attempts would allow more.
	TaskModeAttempts = 2
)

// sessionVersion is the format of Session. 1: first version.
const sessionVersion = 1

// Session is what the Stop hook remembers of one Claude Code session
// between two stops.
type Session struct {
	Version int    `json:"version"`
	Feature string `json:"feature"`
	// Tip is the feature's state commit at the last stop.
	Tip string `json:"tip"`
	// Idle counts the stops in a row at which the state had not moved
	// since the stop before.
	Idle int `json:"idle"`
	// Rounds counts the stops of the session.
	Rounds int `json:"rounds"`
	// Driving: the session's transcript shows it drives a rush.
	Driving bool `json:"driving,omitempty"`
}

// Observe records a stop: the feature's tip now, and whether a transition
// happened since the last stop (when the tip moved).
func (s *Session) Observe(feature, tip string, moved bool) {
	first := s.Rounds == 0 || s.Feature != feature
	s.Version = sessionVersion
	s.Rounds++
	switch {
	case first || moved:
		s.Idle = 0
	default:
		s.Idle++
	}
	s.Feature, s.Tip = feature, tip
}

// TaskRef names a task in a reason.
type TaskRef struct {
	ID        string
	Worker    string
	Level     int
	NotBefore time.Time
}

// StopFacts are what the Stop hook found at this stop.
type StopFacts struct {
	Feature  string
	Complete bool
	// Failures: failed task outcomes in a row at the head of the
	// feature's history (done with a failed verification, fail), with
	// FailedIDs naming them.
	Failures  int
	FailedIDs []string
	// Claimed: tasks claimed by workers of this host, not finished.
	Claimed []TaskRef
	// Level is the level task mode hands out now; Ready its tasks that can
	// be claimed now, Backoff those that can once their backoff is over
	// (tasks already tried TaskModeAttempts times are in neither).
	Level   int
	Ready   []TaskRef
	Backoff []TaskRef
	Now     time.Time
}

// decide says whether to keep the session going (block) and what it
// should do next (reason); when it lets the session stop, why says why.
func decide(s *Session, f StopFacts) (block bool, reason, why string) {
	switch {
	case f.Complete:
		return false, "", "feature " + f.Feature + " is complete"
	case f.Failures >= MaxFailures:
		return false, "", fmt.Sprintf("%d failed tasks in a row (%s)", f.Failures, strings.Join(f.FailedIDs, ", "))
	case s.Rounds > MaxRounds:
		return false, "", fmt.Sprintf("%d rounds in this session", MaxRounds)
	case s.Idle >= MaxIdle:
		return false, "", fmt.Sprintf("%d stops in a row without a transition", MaxIdle)
	}
	switch {
	case len(f.Claimed) > 0:
		var names []string
		for _, t := range f.Claimed {
			names = append(names, t.ID+" ("+t.Worker+")")
		}
		reason = fmt.Sprintf("%s still claimed: as each subagent returns, run git zerg done --worker <worker> <id> "+
			"(git zerg fail --worker <worker> --reason <why> <id> if it could not do the task); "+
			"if its subagent is gone, run done anyway and, when done refuses (no new commit), git zerg release --worker <worker> <id>",
			plural(names, "is", "are"))
	case len(f.Ready) > 0:
		var ids []string
		for _, t := range f.Ready {
			ids = append(ids, t.ID)
		}
		reason = fmt.Sprintf("git zerg rush --mode task --json shows %d ready %s of level %d (%s): "+
			"claim each with its suggested worker and launch them as parallel subagents, as /zerg:rush says, then git zerg done for each",
			len(ids), noun(len(ids), "task", "tasks"), f.Level, strings.Join(ids, ", "))
	case len(f.Backoff) > 0:
		t := f.Backoff[0]
		for _, b := range f.Backoff[1:] {
			if b.NotBefore.Before(t.NotBefore) {
				t = b
			}
		}
		wait := t.NotBefore.Sub(f.Now).Round(time.Second)
		if wait < time.Second {
			wait = time.Second
		}
		reason = fmt.Sprintf("%s failed and can be tried again after %s (in %s): wait (sleep %d), "+
			"then git zerg rush --mode task --json and launch it again, as /zerg:rush says",
			t.ID, t.NotBefore.UTC().Format(time.RFC3339), wait, int(wait.Seconds()))
	default:
		return false, "", "nothing this session can run: what is left is blocked, waits for approval, or failed twice"
	}
	if s.Idle > 0 {
		reason += fmt.Sprintf(" [%d of %d stops without a transition]", s.Idle, MaxIdle)
	}
	return true, "git-zerg: " + reason, ""
}

func plural(names []string, one, many string) string {
	if len(names) == 1 {
		return names[0] + " " + one
	}
	return strings.Join(names, ", ") + " " + many
}

func noun(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// driveMarkers are what a session that drives a rush has in its
// transcript: the /zerg:rush command, or git zerg rush run by hand.
var driveMarkers = []string{"zerg:rush", "git zerg rush", "commands/zerg/rush.md"}

// driving reads a transcript and reports whether it shows a session that
// drives a rush. It reads in chunks and stops at the first sign.
func driving(r io.Reader) (bool, error) {
	const overlap = 64
	buf := make([]byte, 64<<10)
	keep := 0
	for {
		n, err := r.Read(buf[keep:])
		chunk := buf[:keep+n]
		for _, m := range driveMarkers {
			if bytes.Contains(chunk, []byte(m)) {
				return true, nil
			}
		}
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		keep = min(overlap, len(chunk))
		copy(buf, chunk[len(chunk)-keep:])
	}
}
