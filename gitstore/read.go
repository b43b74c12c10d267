package gitstore

import (
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitobj"
	"github.com/git-zerg/git-zerg/gitstore/odb"
)

// Objects of any repository (a work tree's history as much as the state)
// are read through these, which serve them from the memo (odb).

// ReadCommit reads a commit.
func (s *Store) ReadCommit(h plumbing.Hash) (*gitobj.Commit, error) { return s.db.ReadCommit(h) }

// ReadTree reads a tree; the zero hash is the empty tree.
func (s *Store) ReadTree(h plumbing.Hash) (*gitobj.Tree, error) { return s.db.ReadTree(h) }

// ReadBlob reads a blob's content.
func (s *Store) ReadBlob(h plumbing.Hash) ([]byte, error) { return s.db.ReadBlob(h) }

// ObjectType returns the type of an object, an error when it is missing.
func (s *Store) ObjectType(h plumbing.Hash) (plumbing.ObjectType, error) {
	return s.db.ObjectType(h)
}

// HasObject reports whether the repository holds the object.
func (s *Store) HasObject(h plumbing.Hash) bool { return s.db.Has(h) }

// EntryAt finds the entry at a slash-separated path below a tree;
// gitobj.ErrNotFound when there is none.
func (s *Store) EntryAt(tree plumbing.Hash, path string) (gitobj.TreeEntry, error) {
	return s.db.EntryAt(tree, path)
}

// WalkFiles calls fn for every entry that is not a directory below a
// tree, in git's order, with its path.
func (s *Store) WalkFiles(tree plumbing.Hash, fn func(path string, e gitobj.TreeEntry) error) error {
	return s.db.WalkFiles(tree, fn)
}

// Change is one path DiffTrees found changed.
type Change = odb.Change

// DiffTrees lists the files that differ between two trees (odb.DB.DiffTrees).
func (s *Store) DiffTrees(a, b plumbing.Hash) ([]Change, error) { return s.db.DiffTrees(a, b) }
