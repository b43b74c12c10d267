package engine

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
)

// followPoll is how often a followed log looks for more while its task is
// claimed.
var followPoll = 250 * time.Millisecond

// OpenLog opens the log of a task's attempt (0: the latest). Followed, it
// reads on while the task is claimed, whose worker may still write, and
// ends after what is left once the task is not, or when the engine's
// context ends.
func (g *Engine) OpenLog(task string, attempt int, follow bool) (io.ReadCloser, error) {
	path, err := g.logPath(task, attempt)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if !follow {
		return f, nil
	}
	return &followedLog{g: g, f: f, task: task}, nil
}

type followedLog struct {
	g    *Engine
	f    *os.File
	task string
	last bool // the task is over: what the file holds now is all
}

func (l *followedLog) Read(p []byte) (int, error) {
	for {
		n, err := l.f.Read(p)
		if n > 0 || err != io.EOF || l.last {
			return n, err
		}
		t, err := l.g.Task(l.task)
		if err != nil {
			return 0, err
		}
		if t.Status != state.Claimed {
			l.last = true
			continue
		}
		select {
		case <-l.g.Context().Done():
			return 0, io.EOF
		case <-time.After(followPoll):
		}
	}
}

func (l *followedLog) Close() error { return l.f.Close() }

// What a rush keeps of a task on this machine (its prompts, its task file,
// each attempt's log, its worker's note) is the user's alone: a worker's
// output can hold what it read of secrets, so the files are 0600 in
// directories of 0700, and the logs and notes are scrubbed as the state is
// (proc.Scrub) of the values of the secret-named variables of the rush's
// environment and the worker's.

// RunDir is where a task's rush files are: its prompts, its task file,
// each attempt's log (attempt-N.log) and its worker's note.
func RunDir(s *gitstore.Store, feature, task string) string {
	return s.Layout().RunDir(feature, task)
}

// logPath is the log of a task's attempt; attempt 0 is the latest one that
// has a log.
func (g *Engine) logPath(task string, attempt int) (string, error) {
	tx, err := g.View()
	if err != nil {
		return "", err
	}
	if _, err := tx.Task(task); err != nil {
		return "", noTask(g.Feature, task)
	}
	l := g.Store.Layout()
	if attempt > 0 {
		p := l.AttemptLog(g.Feature, task, attempt)
		if _, err := os.Stat(p); err != nil {
			return "", &Error{Kind: Usage, What: fmt.Sprintf("no log of attempt %d of %s", attempt, task), Hint: "git zerg logs " + task + " shows the latest"}
		}
		return p, nil
	}
	ents, _ := os.ReadDir(l.RunDir(g.Feature, task))
	best := 0
	for _, e := range ents {
		if n, ok := gitstore.AttemptOf(e.Name()); ok && n > best {
			best = n
		}
	}
	if best == 0 {
		return "", &Error{Kind: Usage, What: fmt.Sprintf("%s has no worker log on this machine", task),
			Why: "logs are kept where the rush ran its worker"}
	}
	return l.AttemptLog(g.Feature, task, best), nil
}
