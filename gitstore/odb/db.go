// Package odb is the object database of one repository, read and written
// in-process: loose objects, packs (read through their indexes in place,
// written through `git index-pack`), alternates, the memo of objects a
// process has seen, and walks and diffs of trees. It knows nothing of refs
// or of what the objects mean: gitstore keeps its state in them.
package odb

import (
	"sync"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// DB reads and writes the objects of one repository, as one Store sees
// them. Its reads and writes are safe for concurrent use (a plan's objects
// are checked and encoded on every processor); what DBs of a repository
// share in a process is their Memo.
type DB struct {
	// commonDir is the git dir that holds the objects (shared by every
	// linked worktree).
	commonDir string
	// git runs the git binary where the objects' own formats fall short:
	// index-pack writes packs, cat-file reads the rare pack whose index
	// is of git's first format.
	git  *gitcmd.Runner
	memo *Memo

	// packMu serializes the pack reads, which share each pack's file and
	// buffer.
	packMu sync.Mutex
	// packs are read directly (packread.go) once listed; packsMoved
	// lists them again.
	packs       []*packFile
	packsLoaded bool
	// directSeen lists the packs as they were when packs was loaded;
	// foreign is set when a listed pack's index could not be read here
	// (see readPacked).
	directSeen string
	foreign    bool
	// altDirs are the alternates' object directories, read once.
	altDirs []string
	altOnce sync.Once
}

// New returns the object database of the repository whose common git dir
// is commonDir, git running in it, sharing memo with the other DBs of the
// repository in this process.
func New(commonDir string, git *gitcmd.Runner, memo *Memo) *DB {
	return &DB{commonDir: commonDir, git: git, memo: memo}
}

// Memo is the memo db shares.
func (db *DB) Memo() *Memo { return db.memo }

// DropPacks closes the pack files db keeps open: the next read lists and
// opens them again.
func (db *DB) DropPacks() {
	db.packMu.Lock()
	defer db.packMu.Unlock()
	db.dropDirectPacks()
}
