package gitstore

import (
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-zerg/git-zerg/gitobj"
)

// Objects of any repository (a work tree's history as much as the state)
// are read through these, which serve them from the memo.

// ReadCommit reads a commit.
func (s *Store) ReadCommit(h plumbing.Hash) (*gitobj.Commit, error) { return s.readCommit(h) }

// ReadTree reads a tree; the zero hash is the empty tree.
func (s *Store) ReadTree(h plumbing.Hash) (*gitobj.Tree, error) { return s.readTree(h) }

// ReadBlob reads a blob's content.
func (s *Store) ReadBlob(h plumbing.Hash) ([]byte, error) { return s.readBlob(h) }

// ObjectType returns the type of an object, an error when it is missing.
func (s *Store) ObjectType(h plumbing.Hash) (plumbing.ObjectType, error) {
	o, err := s.rawObject(h)
	if err != nil {
		return plumbing.InvalidObject, err
	}
	return o.typ, nil
}

// HasObject reports whether the repository holds the object.
func (s *Store) HasObject(h plumbing.Hash) bool { return s.hasObject(h) }

// EntryAt finds the entry at a slash-separated path below a tree;
// gitobj.ErrNotFound when there is none.
func (s *Store) EntryAt(tree plumbing.Hash, path string) (gitobj.TreeEntry, error) {
	cur := gitobj.TreeEntry{Mode: filemode.Dir, Hash: tree}
	for rest := path; rest != ""; {
		name, after, _ := strings.Cut(rest, "/")
		rest = after
		if cur.Mode != filemode.Dir {
			return gitobj.TreeEntry{}, fmt.Errorf("%s: %w", path, gitobj.ErrNotFound)
		}
		t, err := s.readTree(cur.Hash)
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

// SubTree is the tree at path below a tree; gitobj.ErrNotFound when there
// is no directory there.
func (s *Store) SubTree(tree plumbing.Hash, path string) (*gitobj.Tree, error) {
	e, err := s.EntryAt(tree, path)
	if err != nil {
		return nil, err
	}
	if e.Mode != filemode.Dir {
		return nil, fmt.Errorf("%s: %w", path, gitobj.ErrNotFound)
	}
	return s.readTree(e.Hash)
}

// WalkFiles calls fn for every entry that is not a directory below a
// tree, in git's order, with its path.
func (s *Store) WalkFiles(tree plumbing.Hash, fn func(path string, e gitobj.TreeEntry) error) error {
	return s.walk(tree, "", fn)
}

func (s *Store) walk(tree plumbing.Hash, prefix string, fn func(string, gitobj.TreeEntry) error) error {
	t, err := s.readTree(tree)
	if err != nil {
		return err
	}
	for _, e := range t.Entries {
		if e.Mode == filemode.Dir {
			if err := s.walk(e.Hash, prefix+e.Name+"/", fn); err != nil {
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

// DiffTrees lists the paths (of entries that are not directories) whose
// hash or mode differs between two trees, or that exist in one alone:
// `git diff-tree -r --name-only` without rename detection. Unchanged
// subtrees are not read.
func (s *Store) DiffTrees(a, b plumbing.Hash) ([]string, error) {
	var out []string
	err := s.diff(a, b, "", &out)
	return out, err
}

func (s *Store) diff(a, b plumbing.Hash, prefix string, out *[]string) error {
	if a == b {
		return nil
	}
	ta, err := s.readTree(a)
	if err != nil {
		return err
	}
	tb, err := s.readTree(b)
	if err != nil {
		return err
	}
	ea, eb := entriesOf(ta), entriesOf(tb)
	names := make([]string, 0, len(ea)+len(eb))
	for n := range ea {
		names = append(names, n)
	}
	for n := range eb {
		if _, ok := ea[n]; !ok {
			names = append(names, n)
		}
	}
	sortStrings(names)
	for _, n := range names {
		x, inA := ea[n]
		y, inB := eb[n]
		if inA && inB && x.Hash == y.Hash && x.Mode == y.Mode {
			continue
		}
		// A side that is a directory is walked against the other's
		// directory or nothing; a side that is not is a changed path.
		var da, db plumbing.Hash
		if inA && x.Mode == filemode.Dir {
			da = x.Hash
		}
		if inB && y.Mode == filemode.Dir {
			db = y.Hash
		}
		if (inA && x.Mode != filemode.Dir) || (inB && y.Mode != filemode.Dir) {
			*out = append(*out, prefix+n)
		}
		if !da.IsZero() || !db.IsZero() {
			if err := s.diff(da, db, prefix+n+"/", out); err != nil {
				return err
			}
		}
	}
	return nil
}
