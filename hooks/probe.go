package hooks

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
)

// zergAbsent reports, without starting git or opening the object database,
// that the repository whose work tree top is dir certainly has no ref under
// refs/zerg/: git-zerg has never run there, so no hook check can refuse
// anything. It answers false ("maybe") whenever it cannot be sure: dir is
// not the top of an ordinary work tree (hooks run at the top), GIT_DIR
// leads elsewhere, a reftable ref store, an unreadable file.
//
// This is the whole cost of the hooks in a repository that does not use
// git-zerg, paid on every commit: a few stat calls and a scan of
// packed-refs.
func zergAbsent(dir string) bool {
	r, ok := gitcmd.Discover(dir)
	if abs, err := filepath.Abs(dir); !ok || err != nil || r.Top != abs {
		return false
	}
	common := r.CommonDir
	if fi, err := os.Stat(filepath.Join(common, "refs")); err != nil || !fi.IsDir() {
		return false
	}
	if _, err := os.Lstat(filepath.Join(common, "reftable")); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if _, err := os.Lstat(filepath.Join(common, filepath.FromSlash(gitstore.ZergPrefix))); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	packed, err := os.ReadFile(filepath.Join(common, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	return err == nil && !bytes.Contains(packed, []byte(" refs/zerg/"))
}

// dropRedundantGitDir unsets GIT_DIR when it names exactly the git dir that
// dir/.git leads to anyway. git exports GIT_DIR to hooks run in a linked
// worktree; without it every git process we start finds the same git dir
// from dir, so nothing else changes, and none of them, nor any later
// discovery, has to reason about it.
func dropRedundantGitDir(dir string) {
	if gitcmd.GitDirRedundant(dir) {
		os.Unsetenv("GIT_DIR")
	}
}
