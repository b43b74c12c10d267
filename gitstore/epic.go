package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitobj"
	"github.com/git-zerg/git-zerg/state"
)

// epicsPrefix holds one ref per epic (refs/zerg/epics/<name>): a chain of
// commits, one per plan, bump or approval, whose tree holds
//
//	epic.json   the epic (state.Epic): features, dependencies, frozen
//	            paths, the features awaiting review
//	version     its version, one line
const epicsPrefix = ZergPrefix + "epics/"

// epicRef is the ref of an epic.
func epicRef(name string) string { return epicsPrefix + name }

// ErrEpicMoved: the epic changed since it was read; read it again.
var ErrEpicMoved = errors.New("the epic changed meanwhile")

// Epic reads an epic and the commit it was read at (ErrNotFound when there
// is no such epic).
func (s *Store) Epic(name string) (*state.Epic, plumbing.Hash, error) {
	tip, err := s.ReadRef(epicRef(name))
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	if tip.IsZero() {
		return nil, tip, fmt.Errorf("epic %q: %w", name, ErrNotFound)
	}
	c, err := s.readCommit(tip)
	if err != nil {
		return nil, tip, err
	}
	t, err := s.readTree(c.TreeHash)
	if err != nil {
		return nil, tip, err
	}
	e, ok := entriesOf(t)["epic.json"]
	if !ok {
		return nil, tip, fmt.Errorf("%s: no epic.json", epicRef(name))
	}
	var ep state.Epic
	if err := s.readJSON(e.Hash, &ep); err != nil {
		return nil, tip, fmt.Errorf("%s: %w", epicRef(name), err)
	}
	return &ep, tip, nil
}

// SaveEpic records a new state of the epic on top of old (zero: the epic
// must not exist yet; force replaces whatever is there, keeping it as the
// new commit's parent), as a compare-and-swap. A lost race is
// ErrEpicMoved, an existing epic without force ErrExists.
func (s *Store) SaveEpic(ctx context.Context, e *state.Epic, old plumbing.Hash, force bool, subject string, op state.Op, now time.Time) (plumbing.Hash, error) {
	ref := epicRef(e.Name)
	cur, err := s.ReadRef(ref)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	switch {
	case force:
		old = cur
	case old.IsZero() && !cur.IsZero():
		return plumbing.ZeroHash, fmt.Errorf("epic %q: %w", e.Name, ErrExists)
	case cur != old:
		return plumbing.ZeroHash, ErrEpicMoved
	}
	e.Format = state.Format
	blob, err := s.writeJSON(e)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	ver, err := s.writeBlob([]byte(strconv.Itoa(e.Version) + "\n"))
	if err != nil {
		return plumbing.ZeroHash, err
	}
	root := entries{}
	root.SetBlob("epic.json", blob)
	root.SetBlob("version", ver)
	th, err := s.writeTree(root)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	sig := gitobj.Signature{Name: "git-zerg", Email: "git-zerg@" + hostname.Get(), When: now}
	msg := &Message{Subject: subject, Op: op}
	c := &gitobj.Commit{Author: sig, Committer: sig, Message: msg.String(), TreeHash: th}
	if !old.IsZero() {
		c.ParentHashes = []plumbing.Hash{old}
	}
	if err := s.seal(c); err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := s.writeCommit(c)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if err := s.updateRefs(ctx, []refUpdate{{Name: ref, New: h, Old: old}}); err != nil {
		if errors.Is(err, errRace) {
			return plumbing.ZeroHash, ErrEpicMoved
		}
		return plumbing.ZeroHash, err
	}
	return h, nil
}

// Epics lists the epics, sorted. It reads refs/zerg/epics/ and
// packed-refs alone, not every ref: other processes write refs meanwhile
// (the features of a running epic), and a listing of all of them can meet
// one half-written.
func (s *Store) Epics() ([]string, error) {
	if !s.hasEpics() {
		return nil, nil
	}
	seen := map[string]bool{}
	ents, err := os.ReadDir(filepath.Join(s.CommonDir, filepath.FromSlash(epicsPrefix)))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range ents {
		if !e.IsDir() && !strings.HasSuffix(e.Name(), ".lock") {
			seen[e.Name()] = true
		}
	}
	if b, err := os.ReadFile(filepath.Join(s.CommonDir, "packed-refs")); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if _, ref, ok := strings.Cut(line, " "); ok {
				if n, ok := strings.CutPrefix(ref, epicsPrefix); ok && !strings.Contains(n, "/") {
					seen[n] = true
				}
			}
		}
	}
	var out []string
	for n := range seen {
		if tip, err := s.ReadRef(epicRef(n)); err == nil && !tip.IsZero() {
			out = append(out, n)
		}
	}
	sortStrings(out)
	return out, nil
}

// EpicOf finds the epic a feature belongs to, nil when none does. An epic
// per feature: epic plan refuses a feature another epic holds.
func (s *Store) EpicOf(feature string) (*state.Epic, error) {
	names, err := s.Epics()
	if err != nil || len(names) == 0 {
		return nil, err
	}
	for _, n := range names {
		e, _, err := s.Epic(n)
		if err != nil {
			return nil, err
		}
		if e.Feature(feature) != nil {
			return e, nil
		}
	}
	return nil, nil
}

// EpicLog is the epic's history, newest first, every parent followed as
// Log does (another clone's changes come in by a sync merge).
func (s *Store) EpicLog(name string) ([]Entry, error) {
	tip, err := s.ReadRef(epicRef(name))
	if err != nil {
		return nil, err
	}
	if tip.IsZero() {
		return nil, fmt.Errorf("epic %q: %w", name, ErrNotFound)
	}
	return s.history(tip, 0)
}

// hasEpics answers, without listing every ref, whether any epic may exist:
// the pre-commit hook asks on every commit, and most repositories have
// none.
func (s *Store) hasEpics() bool {
	if _, err := os.Stat(filepath.Join(s.CommonDir, filepath.FromSlash(epicsPrefix))); err == nil {
		return true
	}
	b, err := os.ReadFile(filepath.Join(s.CommonDir, "packed-refs"))
	return err == nil && bytes.Contains(b, []byte(" "+epicsPrefix))
}

// Reopen opens the same repository again: a store of its own for work
// that runs beside this store's (each feature of an epic's rush), in a
// Repo of its own and without s's Publisher: the layer that installed it
// installs it again (remotes.Reopen).
func (s *Store) Reopen(ctx context.Context) (*Store, error) {
	dir := s.Top
	if dir == "" {
		dir = s.git.Dir
	}
	return Open(ctx, dir)
}
