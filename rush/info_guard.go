package rush

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-zerg/git-zerg/engine/rushmarker"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
)

// The repository's info/exclude and info/attributes are files of the
// common git directory, read in every worktree: a line a worker adds to
// exclude changes what git ignores in the user's checkout and in every
// other worktree, and one added to attributes can have a filter rewrite
// files as git checks them out, the verification's checkout included. A
// rush keeps them as the user had them when the first of the rushes
// running on this host started, and puts them back after every attempt.

// guardedInfo are the files of info/ that a rush keeps.
var guardedInfo = []string{"exclude", "attributes"}

// infoGuard keeps the files of info/ as the user had them.
type infoGuard struct {
	info   string // <common dir>/info
	saved  string // the user's versions on disk, for a rush killed before it put them back
	marker string // this rush's marker, not counted among the other rushes
	rushes string // where the rush markers are
	orig   map[string]infoFile
	self   gitstore.HostIdentity // this clone, which judges whether a rush marker's process lives
}

// infoFile is a file's content, or its absence.
type infoFile struct {
	Exists  bool        `json:"exists"`
	Content []byte      `json:"content,omitempty"`
	Mode    fs.FileMode `json:"mode,omitempty"`
}

func readInfoFile(path string) (infoFile, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return infoFile{}, nil
	}
	if err != nil {
		return infoFile{}, err
	}
	if !fi.Mode().IsRegular() {
		// A link (or anything else) in its place is a change of the file:
		// what it leads to is not the user's.
		return infoFile{Exists: true, Mode: fi.Mode()}, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return infoFile{}, err
	}
	return infoFile{Exists: true, Content: b, Mode: fi.Mode().Perm()}, nil
}

func (a infoFile) equal(b infoFile) bool {
	return a.Exists == b.Exists && a.Mode == b.Mode && bytes.Equal(a.Content, b.Content)
}

func (g *infoGuard) read() (map[string]infoFile, error) {
	cur := make(map[string]infoFile, len(guardedInfo))
	for _, name := range guardedInfo {
		f, err := readInfoFile(filepath.Join(g.info, name))
		if err != nil {
			return nil, err
		}
		cur[name] = f
	}
	return cur, nil
}

// keepInfo starts keeping info/'s files for the rush whose marker is at
// marker. When the user's versions on disk were left by rushes that are
// all gone (killed before they put the files back), the files are put back
// now, and note says so.
func keepInfo(s *gitstore.Store, marker string) (g *infoGuard, note string, err error) {
	g = &infoGuard{self: s.Host(), info: filepath.Join(s.CommonDir, "info"), saved: s.Layout().InfoOrig(),
		marker: marker, rushes: s.Layout().RushDir()}
	cur, err := g.read()
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
	if err != nil || len(g.orig) != len(guardedInfo) {
		// Unreadable: this rush's start is the best account of the user's.
		g.orig = cur
		return g, "", os.WriteFile(g.saved, data, 0o644)
	}
	if !g.otherRush() {
		changed, err := g.check()
		if err != nil {
			return nil, "", err
		}
		if len(changed) > 0 {
			note = "put " + infoNames(changed) + " back as the user had it before a rush that was killed before it could (a worker of it had changed it)"
		}
	}
	return g, note, nil
}

// infoNames names files of info/ for a person.
func infoNames(names []string) string {
	for i, n := range names {
		names[i] = ".git/info/" + n
	}
	return strings.Join(names, " and ")
}

// check puts back each file that changed, and names them.
func (g *infoGuard) check() ([]string, error) {
	if g == nil {
		return nil, nil
	}
	cur, err := g.read()
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, name := range guardedInfo {
		if cur[name].equal(g.orig[name]) {
			continue
		}
		if err := g.restore(name); err != nil {
			return changed, err
		}
		changed = append(changed, name)
	}
	return changed, nil
}

// end puts the files back for the last time; the last rush on this host
// to end removes the saved versions.
func (g *infoGuard) end() {
	if g == nil {
		return
	}
	if _, err := g.check(); err == nil && !g.otherRush() {
		os.Remove(g.saved)
	}
}

// restore writes the user's version of info/<name> back. A new file is
// renamed into place, and a link in info/'s place is replaced by a
// directory, so that nothing is written through a symbolic link a worker
// put there.
func (g *infoGuard) restore(name string) error {
	path, orig := filepath.Join(g.info, name), g.orig[name]
	if fi, err := os.Lstat(g.info); err == nil && !fi.IsDir() {
		if err := os.Remove(g.info); err != nil {
			return err
		}
	}
	if !orig.Exists {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.MkdirAll(g.info, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(g.info, "."+name+"-zerg-")
	if err != nil {
		return err
	}
	_, err = tmp.Write(orig.Content)
	if err == nil {
		err = tmp.Chmod(orig.Mode.Perm())
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// otherRush reports whether a rush of another feature runs on this host
// (an epic's own marker does not count: its features' rushes have theirs).
func (g *infoGuard) otherRush() bool {
	ents, err := os.ReadDir(g.rushes)
	if err != nil {
		return false
	}
	for _, e := range ents {
		p := filepath.Join(g.rushes, e.Name())
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || p == g.marker {
			continue
		}
		var h rushmarker.Holder
		if b, err := os.ReadFile(p); err == nil && json.Unmarshal(b, &h) == nil && h.Alive(g.self) {
			return true
		}
	}
	return false
}

// putBackInfo puts back the files of info/ that the task's worker changed,
// and says so in the attempt's log and in a note.
func (r *rush) putBackInfo(t *state.Task, log string) {
	changed, err := r.info.check()
	if err != nil {
		r.g.Note("%s: could not put .git/info/ back as it was (%v)", t.ID(), err)
	}
	if len(changed) == 0 {
		return
	}
	verb := "was"
	if len(changed) > 1 {
		verb = "were"
	}
	msg := fmt.Sprintf("%s %s changed while the worker of %s ran; put back as the user had it", infoNames(changed), verb, t.ID())
	r.g.Note("%s", msg)
	if log != "" {
		if f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0); err == nil {
			fmt.Fprintf(f, "== git-zerg: %s\n", msg)
			f.Close()
		}
	}
}
