package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
)

// The repository's info/exclude is one file in the common git directory,
// read by every worktree: a line a worker adds to it changes what git
// ignores in the user's checkout and in every other worker's worktree. A
// rush keeps it as the user had it when the first of the rushes running
// on this host started, and puts it back after every attempt.

// excludeGuard keeps info/exclude as the user had it.
type excludeGuard struct {
	path   string // <common dir>/info/exclude
	saved  string // the user's version on disk, for a rush killed before it put the file back
	marker string // this rush's marker, not counted among the other rushes
	rushes string // where the rush markers are
	orig   excludeFile
}

// excludeFile is info/exclude's content, or its absence.
type excludeFile struct {
	Exists  bool        `json:"exists"`
	Content []byte      `json:"content,omitempty"`
	Mode    fs.FileMode `json:"mode,omitempty"`
}

func readExclude(path string) (excludeFile, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return excludeFile{}, nil
	}
	if err != nil {
		return excludeFile{}, err
	}
	if !fi.Mode().IsRegular() {
		// A link (or anything else) in its place is a change of the file:
		// what it leads to is not the user's exclude.
		return excludeFile{Exists: true, Mode: fi.Mode()}, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return excludeFile{}, err
	}
	return excludeFile{Exists: true, Content: b, Mode: fi.Mode().Perm()}, nil
}

func (a excludeFile) equal(b excludeFile) bool {
	return a.Exists == b.Exists && a.Mode == b.Mode && bytes.Equal(a.Content, b.Content)
}

// guardExclude starts keeping info/exclude for the rush whose marker is
// at marker. When the user's version on disk was left by rushes that are
// all gone (killed before they put the file back), the file is put back
// now, and note says so.
func guardExclude(s *gitstore.Store, marker string) (g *excludeGuard, note string, err error) {
	g = &excludeGuard{path: filepath.Join(s.CommonDir, "info", "exclude"), saved: filepath.Join(s.ZergDir(), "exclude.orig"),
		marker: marker, rushes: filepath.Join(s.ZergDir(), "rush")}
	cur, err := readExclude(g.path)
	if err != nil {
		return nil, "", err
	}
	data, err := json.Marshal(cur)
	if err != nil {
		return nil, "", err
	}
	if f, err := os.OpenFile(g.saved, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
		_, werr := f.Write(data)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		g.orig = cur
		return g, "", werr
	} else if !errors.Is(err, fs.ErrExist) {
		return nil, "", err
	}
	b, err := os.ReadFile(g.saved)
	if err == nil {
		err = json.Unmarshal(b, &g.orig)
	}
	if err != nil {
		// Unreadable: this rush's start is the best account of the user's.
		g.orig = cur
		return g, "", os.WriteFile(g.saved, data, 0o644)
	}
	if !g.otherRush() && !cur.equal(g.orig) {
		if err := g.restore(); err != nil {
			return nil, "", err
		}
		note = "put .git/info/exclude back as it was before a rush that was killed before it could (a worker of it had changed it)"
	}
	return g, note, nil
}

// check puts info/exclude back when it changed, and reports whether it
// had.
func (g *excludeGuard) check() (bool, error) {
	if g == nil {
		return false, nil
	}
	cur, err := readExclude(g.path)
	if err != nil || cur.equal(g.orig) {
		return false, err
	}
	return true, g.restore()
}

// end puts info/exclude back for the last time; the last rush on this
// host to end removes the saved version.
func (g *excludeGuard) end() {
	if g == nil {
		return
	}
	if _, err := g.check(); err == nil && !g.otherRush() {
		os.Remove(g.saved)
	}
}

// restore writes the user's info/exclude back. A new file is renamed into
// place, and a link in info/'s place is replaced by a directory, so that
// nothing is written through a symbolic link a worker put there.
func (g *excludeGuard) restore() error {
	info := filepath.Dir(g.path)
	if fi, err := os.Lstat(info); err == nil && !fi.IsDir() {
		if err := os.Remove(info); err != nil {
			return err
		}
	}
	if !g.orig.Exists {
		if err := os.Remove(g.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.MkdirAll(info, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(info, ".exclude-zerg-")
	if err != nil {
		return err
	}
	_, err = tmp.Write(g.orig.Content)
	if err == nil {
		err = tmp.Chmod(g.orig.Mode.Perm())
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), g.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// otherRush reports whether a rush of another feature runs on this host
// (an epic's own marker does not count: its features' rushes have theirs).
func (g *excludeGuard) otherRush() bool {
	ents, err := os.ReadDir(g.rushes)
	if err != nil {
		return false
	}
	for _, e := range ents {
		p := filepath.Join(g.rushes, e.Name())
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || p == g.marker {
			continue
		}
		var h rushHolder
		if b, err := os.ReadFile(p); err == nil && json.Unmarshal(b, &h) == nil && h.alive() {
			return true
		}
	}
	return false
}

// guardExclude puts the repository's info/exclude back when the task's
// worker changed it, and says so in the attempt's log and in a note.
func (r *rush) guardExclude(t *state.Task, log string) {
	changed, err := r.exclude.check()
	switch {
	case err != nil:
		r.g.note("%s: could not put .git/info/exclude back as it was (%v)", t.ID(), err)
	case changed:
		msg := ".git/info/exclude was changed while the worker of " + t.ID() + " ran; put back as it was"
		r.g.note("%s", msg)
		if log != "" {
			if f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0); err == nil {
				fmt.Fprintf(f, "== git-zerg: %s\n", msg)
				f.Close()
			}
		}
	}
}
