package gitstore

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-zerg/git-zerg/gitobj"
)

// A level's tasks own disjoint files and all start from the same staging
// tip, so merging their work needs no 3-way merge at all: the result is the
// tip's tree with each task's changed paths taken from its commit. That is
// computed here in-process — one ref update instead of three git processes
// per task. Anything else (work based elsewhere, overlapping paths) is left
// to `git merge-tree`, which handles it in full.

// Pin is verified work to merge: the task, its commit and the commit it
// started from.
type Pin struct {
	Task, Commit, Base string
}

// ErrNotDisjoint: the fast merge does not apply; use a real 3-way merge.
var ErrNotDisjoint = errors.New("work does not apply as disjoint changes")

// MergeDisjoint merges pins into ref, which must be at old, as a chain of
// two-parent merge commits ("merge <task> into staging"), and moves ref
// with a compare-and-swap. It returns the new tip and its tree, or
// ErrNotDisjoint (nothing written to any ref) when a pin did not start
// from old or two pins change one path.
func (s *Store) MergeDisjoint(ctx context.Context, ref, old string, pins []Pin, sig gitobj.Signature) (tip, tree string, err error) {
	oldHash := plumbing.NewHash(old)
	changes := map[string]*gitobj.TreeEntry{} // path -> new entry, nil = deleted
	owner := map[string]string{}
	type step struct {
		task   string
		commit plumbing.Hash
	}
	var steps []step
	for _, p := range pins {
		if p.Base != old {
			return "", "", ErrNotDisjoint
		}
		c := plumbing.NewHash(p.Commit)
		if c == oldHash {
			continue
		}
		paths, err := s.ChangedPaths(oldHash, c)
		if err != nil {
			return "", "", err
		}
		cc, err := s.readCommit(c)
		if err != nil {
			return "", "", err
		}
		for _, path := range paths {
			if other, ok := owner[path]; ok && other != p.Task {
				return "", "", ErrNotDisjoint
			}
			owner[path] = p.Task
			e, err := s.EntryAt(cc.TreeHash, path)
			switch {
			case errors.Is(err, gitobj.ErrNotFound):
				changes[path] = nil
			case err != nil:
				return "", "", err
			default:
				if e.Mode == filemode.Dir {
					return "", "", ErrNotDisjoint // a file turned into a directory: leave it to git
				}
				changes[path] = &e
			}
		}
		steps = append(steps, step{p.Task, c})
	}
	if len(steps) == 0 {
		c, err := s.readCommit(oldHash)
		if err != nil {
			return "", "", err
		}
		return old, c.TreeHash.String(), nil
	}
	// Each merge commit of the chain gets the tree with the changes of the
	// tasks merged so far, so that every commit on staging is a true state.
	base, err := s.readCommit(oldHash)
	if err != nil {
		return "", "", err
	}
	cur, curTree := oldHash, base.TreeHash
	applied := map[string]*gitobj.TreeEntry{}
	for _, st := range steps {
		for path, task := range owner {
			if task == st.task {
				applied[path] = changes[path]
			}
		}
		th, err := s.applyChanges(base.TreeHash, applied)
		if err != nil {
			return "", "", err
		}
		c := &gitobj.Commit{Author: sig, Committer: sig, Message: "merge " + st.task + " into staging\n",
			TreeHash: th, ParentHashes: []plumbing.Hash{cur, st.commit}}
		if cur, err = s.writeCommit(c); err != nil {
			return "", "", err
		}
		curTree = th
	}
	if err := s.updateRefs(ctx, []refUpdate{{Name: ref, New: cur, Old: oldHash}}); err != nil {
		if errors.Is(err, errRace) {
			// The branch moved: the full merge path says so properly.
			return "", "", ErrNotDisjoint
		}
		return "", "", err
	}
	return cur.String(), curTree.String(), nil
}

// applyChanges writes the tree of root with the given paths replaced (nil:
// removed), rewriting only the directories on those paths.
func (s *Store) applyChanges(root plumbing.Hash, changes map[string]*gitobj.TreeEntry) (plumbing.Hash, error) {
	t, err := s.readTree(root)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	e := entriesOf(t)
	sub := map[string]map[string]*gitobj.TreeEntry{}
	for path, ch := range changes {
		dir, rest, nested := strings.Cut(path, "/")
		if !nested {
			if ch == nil {
				delete(e, path)
			} else {
				e[path] = gitobj.TreeEntry{Name: path, Mode: ch.Mode, Hash: ch.Hash}
			}
			continue
		}
		if sub[dir] == nil {
			sub[dir] = map[string]*gitobj.TreeEntry{}
		}
		sub[dir][rest] = ch
	}
	names := make([]string, 0, len(sub))
	for d := range sub {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, d := range names {
		var h plumbing.Hash
		if te, ok := e[d]; ok && te.Mode == filemode.Dir {
			h = te.Hash
		}
		nh, err := s.applyChanges(h, sub[d])
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if nt, err := s.readTree(nh); err == nil && len(nt.Entries) == 0 {
			delete(e, d) // git keeps no empty directories
			continue
		}
		e.SetTree(d, nh)
	}
	return s.writeTree(e)
}

// Signature is the identity of commits git-zerg makes itself.
func Signature(name, email string, when time.Time) gitobj.Signature {
	return gitobj.Signature{Name: name, Email: email, When: when}
}
