package hooks

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ZergAbsent reports, without starting git or opening the object database,
// that the repository whose work tree top (or git dir) is dir certainly has
// no ref under refs/zerg/: git-zerg has never run there, so no hook check
// can refuse anything. It answers false ("maybe") whenever it cannot be
// sure: no .git at dir itself (hooks run at the top of the work tree), a
// reftable ref store, an unreadable file.
//
// This is the whole cost of the hooks in a repository that does not use
// git-zerg, paid on every commit: a few stat calls and a scan of
// packed-refs.
func ZergAbsent(dir string) bool {
	gitDir, ok := findGitDir(dir)
	if !ok {
		return false
	}
	common := os.Getenv("GIT_COMMON_DIR")
	if common == "" {
		common = gitDir
		if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
			common = strings.TrimSpace(string(b))
			if !filepath.IsAbs(common) {
				common = filepath.Join(gitDir, common)
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return false
		}
	} else if !filepath.IsAbs(common) {
		common = filepath.Join(dir, common)
	}
	if fi, err := os.Stat(filepath.Join(common, "refs")); err != nil || !fi.IsDir() {
		return false
	}
	if _, err := os.Lstat(filepath.Join(common, "reftable")); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if _, err := os.Lstat(filepath.Join(common, "refs", "zerg")); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	packed, err := os.ReadFile(filepath.Join(common, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	return err == nil && !bytes.Contains(packed, []byte(" refs/zerg/"))
}

// findGitDir finds the git dir as git would for a process started in dir:
// $GIT_DIR, else dir/.git, a directory or a "gitdir:" file (linked
// worktrees, submodules).
func findGitDir(dir string) (string, bool) {
	if g := os.Getenv("GIT_DIR"); g != "" {
		if !filepath.IsAbs(g) {
			g = filepath.Join(dir, g)
		}
		return g, true
	}
	return dotGit(dir)
}

// dotGit follows dir/.git: a directory, or a "gitdir:" file.
func dotGit(dir string) (string, bool) {
	p := filepath.Join(dir, ".git")
	fi, err := os.Stat(p)
	if err != nil {
		return "", false
	}
	if fi.IsDir() {
		return p, true
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", false
	}
	g, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return "", false
	}
	if !filepath.IsAbs(g) {
		g = filepath.Join(dir, g)
	}
	return g, true
}

// DropRedundantGitDir unsets GIT_DIR when it names exactly the git dir that
// dir/.git leads to anyway. git exports GIT_DIR to hooks run in a linked
// worktree, and gitstore.Open leaves any repository named by GIT_DIR to
// `git rev-parse`: one more git process on every commit of every worker.
// Without it, Open and every git process we start find the same git dir
// from dir, so nothing else changes.
func DropRedundantGitDir(dir string) {
	g := os.Getenv("GIT_DIR")
	if g == "" || os.Getenv("GIT_WORK_TREE") != "" || os.Getenv("GIT_COMMON_DIR") != "" {
		return
	}
	if !filepath.IsAbs(g) {
		g = filepath.Join(dir, g)
	}
	found, ok := dotGit(dir)
	if !ok {
		return
	}
	a, err1 := os.Stat(g)
	b, err2 := os.Stat(found)
	if err1 == nil && err2 == nil && os.SameFile(a, b) {
		os.Unsetenv("GIT_DIR")
	}
}
