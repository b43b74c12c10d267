package gitcmd

import (
	"os"
	"path/filepath"
	"strings"
)

// Repo is where git keeps a repository, as seen from one work tree.
type Repo struct {
	// Top is the top of the work tree.
	Top string
	// GitDir is the work tree's own git dir: HEAD and the index.
	GitDir string
	// CommonDir holds what every worktree shares: objects and refs. It is
	// GitDir but in a linked worktree.
	CommonDir string
}

// Discover finds, without starting git, the repository a git process
// started in dir would use: the first .git up from dir, a directory or a
// "gitdir:" file (linked worktrees, submodules). Every command and every
// hook opens the repository this way: a `git rev-parse` costs as much as
// the rest of a status, and more than the rest of a hook.
//
// It answers only an ordinary work tree, and false whenever git could see
// something else: a bare repository or a git dir, GIT_WORK_TREE or
// GIT_COMMON_DIR set, a walk up that GIT_CEILING_DIRECTORIES could stop.
// GIT_DIR is accepted when it names the git dir that dir/.git leads to
// anyway, as git sets it for hooks in a linked worktree. Callers ask git
// itself when it answers false.
func Discover(dir string) (Repo, bool) {
	for _, v := range []string{"GIT_WORK_TREE", "GIT_COMMON_DIR"} {
		if os.Getenv(v) != "" {
			return Repo{}, false
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Repo{}, false
	}
	if os.Getenv("GIT_DIR") != "" {
		// With GIT_DIR set git does not walk up: dir is the top.
		if !GitDirRedundant(abs) {
			return Repo{}, false
		}
		fi, err := os.Lstat(filepath.Join(abs, ".git"))
		if err != nil {
			return Repo{}, false
		}
		return repoAt(abs, fi)
	}
	for d := abs; ; d = filepath.Dir(d) {
		if fi, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return repoAt(d, fi)
		}
		if _, err := os.Stat(filepath.Join(d, "HEAD")); err == nil {
			return Repo{}, false // perhaps a bare repository or a git dir: ask git
		}
		if filepath.Dir(d) == d || os.Getenv("GIT_CEILING_DIRECTORIES") != "" || os.Getenv("GIT_DISCOVERY_ACROSS_FILESYSTEM") != "" {
			return Repo{}, false
		}
	}
}

// repoAt reads the repository whose work tree top is top; fi is top/.git.
func repoAt(top string, fi os.FileInfo) (Repo, bool) {
	gitDir, ok := followDotGit(top, fi)
	if !ok {
		return Repo{}, false
	}
	if _, err := os.Stat(filepath.Join(gitDir, "HEAD")); err != nil {
		return Repo{}, false
	}
	common := gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = filepath.Clean(c)
	} else if !os.IsNotExist(err) {
		return Repo{}, false
	}
	return Repo{Top: top, GitDir: gitDir, CommonDir: common}, true
}

// dotGit is the git dir top/.git leads to (followDotGit).
func dotGit(top string) (string, bool) {
	fi, err := os.Lstat(filepath.Join(top, ".git"))
	if err != nil {
		return "", false
	}
	return followDotGit(top, fi)
}

// followDotGit follows top/.git, whose Lstat is fi: a directory, or a
// regular file reading "gitdir: <path>". Anything else (a symbolic link, a
// damaged file) is left to git.
func followDotGit(top string, fi os.FileInfo) (string, bool) {
	p := filepath.Join(top, ".git")
	switch {
	case fi.IsDir():
		return p, true
	case !fi.Mode().IsRegular():
		return "", false
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
		g = filepath.Join(top, g)
	}
	return filepath.Clean(g), true
}

// GitDirRedundant reports whether GIT_DIR is set and names exactly the git
// dir that dir/.git leads to, with nothing else (GIT_WORK_TREE,
// GIT_COMMON_DIR) that would make git see the repository differently from
// dir than without it.
func GitDirRedundant(dir string) bool {
	g := os.Getenv("GIT_DIR")
	if g == "" || os.Getenv("GIT_WORK_TREE") != "" || os.Getenv("GIT_COMMON_DIR") != "" {
		return false
	}
	if !filepath.IsAbs(g) {
		g = filepath.Join(dir, g)
	}
	found, ok := dotGit(dir)
	if !ok {
		return false
	}
	a, err1 := os.Stat(g)
	b, err2 := os.Stat(found)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// HeadBranch is the branch checked out in the work tree whose git dir is
// gitDir, read from HEAD without starting git: "" on a detached HEAD or
// when HEAD cannot be read.
func HeadBranch(gitDir string) string {
	b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: refs/heads/")
	if !ok {
		return ""
	}
	return ref
}
