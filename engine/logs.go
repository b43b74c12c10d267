package engine

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/proc"
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

// What a rush keeps of a task on this machine (its prompts, its task file,
// each attempt's log, its worker's note) is the user's alone: a worker's
// output can hold what it read of secrets, so the files are 0600 in
// directories of 0700, and the logs and notes are scrubbed as the state is
// (proc.Scrub) of the values of the secret-named variables of the rush's
// environment and the worker's.

// privateRunDir makes a task's run directory, it and the directories
// above it up to run/ readable by the user alone (those made by an older
// version were not).
func privateRunDir(s *gitstore.Store, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	root := s.Layout().RunRoot()
	for d := dir; ; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o700); err != nil {
			return err
		}
		if d == root || d == filepath.Dir(d) {
			return nil
		}
	}
}

// attemptLog is an attempt's log as it is written: each stream through a
// scrubber of its own, so that a secret one stream prints in pieces is
// caught however the other's output falls between them.
type attemptLog struct {
	f              *os.File
	Stdout, Stderr *proc.ScrubWriter
}

// createAttemptLog starts the log of an attempt, scrubbing the secrets of
// env (NAME=value entries) from all that is written to it.
func createAttemptLog(path string, env []string) (*attemptLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, err
	}
	return &attemptLog{f: f, Stdout: proc.NewScrubWriter(f, env), Stderr: proc.NewScrubWriter(f, env)}, nil
}

// Flush writes what the scrubbers held back: the log is whole on disk.
func (l *attemptLog) Flush() error {
	return errors.Join(l.Stdout.Flush(), l.Stderr.Flush())
}

// Close flushes and closes the file.
func (l *attemptLog) Close() error {
	return errors.Join(l.Flush(), l.f.Close())
}

// scrubNote scrubs the note a worker left (it wrote the file itself, with
// whatever it printed into it) and leaves it to the user alone. No note is
// no error.
func scrubNote(path string, env []string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	clean := proc.Scrub(string(b), env)
	tmp := path + ".scrub"
	if err := os.WriteFile(tmp, []byte(clean), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
