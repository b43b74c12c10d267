package odb

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-zerg/git-zerg/gitobj"
)

// Objects of any repository (a work tree's history as much as the state)
// are read through these, which serve them from the memo.

// ObjectType returns the type of an object, an error when it is missing.
func (db *DB) ObjectType(h plumbing.Hash) (plumbing.ObjectType, error) {
	o, err := db.rawObject(h)
	if err != nil {
		return plumbing.InvalidObject, err
	}
	return o.typ, nil
}

// EntryAt finds the entry at a slash-separated path below a tree;
// gitobj.ErrNotFound when there is none.
func (db *DB) EntryAt(tree plumbing.Hash, path string) (gitobj.TreeEntry, error) {
	cur := gitobj.TreeEntry{Mode: filemode.Dir, Hash: tree}
	for rest := path; rest != ""; {
		name, after, _ := strings.Cut(rest, "/")
		rest = after
		if cur.Mode != filemode.Dir {
			return gitobj.TreeEntry{}, fmt.Errorf("%s: %w", path, gitobj.ErrNotFound)
		}
		t, err := db.ReadTree(cur.Hash)
		if err != nil {
			return gitobj.TreeEntry{}, err
		}
		e, ok := t.Entry(name)
		if !ok {
			return gitobj.TreeEntry{}, fmt.Errorf("%s: %w", path, gitobj.ErrNotFound)
		}
		cur = e
	}
	return cur, nil
}

// WalkFiles calls fn for every entry that is not a directory below a
// tree, in git's order, with its path.
func (db *DB) WalkFiles(tree plumbing.Hash, fn func(path string, e gitobj.TreeEntry) error) error {
	return db.walk(tree, "", fn)
}

func (db *DB) walk(tree plumbing.Hash, prefix string, fn func(string, gitobj.TreeEntry) error) error {
	t, err := db.ReadTree(tree)
	if err != nil {
		return err
	}
	for _, e := range t.Entries {
		if e.Mode == filemode.Dir {
			if err := db.walk(e.Hash, prefix+e.Name+"/", fn); err != nil {
				return err
			}
			continue
		}
		if err := fn(prefix+e.Name, e); err != nil {
			return err
		}
	}
	return nil
}

// Change is a path whose entry differs between two trees: From and To are
// its object on each side, zero where it is absent or a directory.
type Change struct {
	Path     string
	From, To plumbing.Hash
}

// DiffTrees lists the entries that are not directories whose hash or mode
// differs between two trees (zero: empty), or that exist in one alone:
// `git diff-tree -r` without rename detection. Unchanged subtrees are not
// read: a transition rewrites a shard or two, whatever the size of the
// graph.
func (db *DB) DiffTrees(a, b plumbing.Hash) ([]Change, error) {
	var out []Change
	err := db.diff(a, b, "", &out)
	return out, err
}

func (db *DB) diff(a, b plumbing.Hash, prefix string, out *[]Change) error {
	if a == b {
		return nil
	}
	ta, err := db.ReadTree(a)
	if err != nil {
		return err
	}
	tb, err := db.ReadTree(b)
	if err != nil {
		return err
	}
	ea, eb := EntriesOf(ta), EntriesOf(tb)
	names := make([]string, 0, len(ea)+len(eb))
	for n := range ea {
		names = append(names, n)
	}
	for n := range eb {
		if _, ok := ea[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		x, inA := ea[n]
		y, inB := eb[n]
		if inA && inB && x.Hash == y.Hash && x.Mode == y.Mode {
			continue
		}
		// A side that is a directory is walked against the other's
		// directory or nothing; a side that is not is a changed path.
		var dirA, dirB plumbing.Hash
		if inA && x.Mode == filemode.Dir {
			dirA = x.Hash
		}
		if inB && y.Mode == filemode.Dir {
			dirB = y.Hash
		}
		var fa, fb plumbing.Hash
		if inA && x.Mode != filemode.Dir {
			fa = x.Hash
		}
		if inB && y.Mode != filemode.Dir {
			fb = y.Hash
		}
		if !fa.IsZero() || !fb.IsZero() {
			*out = append(*out, Change{Path: prefix + n, From: fa, To: fb})
		}
		if !dirA.IsZero() || !dirB.IsZero() {
			if err := db.diff(dirA, dirB, prefix+n+"/", out); err != nil {
				return err
			}
		}
	}
	return nil
}
