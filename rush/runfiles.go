package rush

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/proc"
)

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
//
// A log already there is added to, never replaced: a run given back
// uncounted (interrupted, released) shares its number with the next.
func createAttemptLog(path string, env []string) (*attemptLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, err
	}
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		fmt.Fprintf(f, "\n--- git-zerg: this attempt started again (the run before was given back) ---\n")
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
