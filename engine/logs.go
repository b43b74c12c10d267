package engine

import (
	"io"
	"os"
	"time"

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
	path, err := g.LogPath(task, attempt)
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
		case <-l.g.ctx().Done():
			return 0, io.EOF
		case <-time.After(followPoll):
		}
	}
}

func (l *followedLog) Close() error { return l.f.Close() }
