package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
)

// git-zerg's own hooks directory stands in for a relative core.hooksPath
// (see installRepo). It holds git-zerg's pre-commit and pre-push, each
// running the relative directory's hook of the same name first, and a
// forwarder for each other hook found there at install, so that a husky or
// lefthook set-up keeps running all its hooks. Worktrees use it through a
// setting of their own (`git config --worktree`, extensions.worktreeConfig),
// which wins over the repository's: a hook manager's next install sets the
// repository's core.hooksPath again and changes nothing here.

// forwardMarker identifies a forwarder written by git-zerg.
const forwardMarker = "# git-zerg hook forwarder, format 1"

// forwardable are the hooks a forwarder may stand in for: those whose
// absence git treats as a hook that succeeds, so that a forwarder finding
// nothing to run (a worktree without the relative directory, as a fresh
// worktree lacks husky's untracked .husky/_) changes nothing. Hooks that
// change what git does by existing (push-to-checkout, proc-receive) are
// not among them, nor are git-zerg's own (Names).
var forwardable = []string{
	"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-merge-commit",
	"prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout",
	"post-merge", "pre-auto-gc", "post-rewrite", "sendemail-validate",
	"post-index-change", "reference-transaction", "pre-receive", "update",
	"post-receive", "post-update",
}

func ownDir(common string) string { return gitstore.LayoutOf(common).GitHooks() }

// forwarder runs <under>/<name> from the top of the work tree, where git
// runs hooks and resolves a relative core.hooksPath; $0 stays that path,
// which husky's hooks read to find the script they run.
func forwarder(name, under string) []byte {
	return []byte("#!/bin/sh\n" + forwardMarker + "\n" +
		"# Written by `git zerg hooks install`: core.hooksPath is relative (" + under + "), and\n" +
		"# git-zerg's hooks directory stands in for it; this runs " + under + "/" + name + " as git would.\n" +
		"h=" + shellQuote(under+"/"+name) + "\n" +
		"if [ -x \"$h\" ]; then\n\texec \"$h\" \"$@\"\nfi\n")
}

// installOwn installs git-zerg's hooks in its own directory, standing in
// for loc.Under (relative) in the worktree loc is of, and points that
// worktree at it. A worktree whose own setting points there while the
// repository's core.hooksPath is no longer relative goes back to where
// the repository's setting leads, and the hooks are installed there.
func installOwn(ctx context.Context, git *gitcmd.Runner, loc Location, exe string) (string, []Change, error) {
	if !relativeHooksPath(loc.Under) {
		if err := unsetOwn(ctx, git); err != nil {
			return "", nil, err
		}
		back, err := Locate(ctx, git)
		if err != nil {
			return "", nil, err
		}
		cs, err := writeHooks(back.Dir, exe)
		return back.Dir, cs, err
	}
	dir := ownDir(loc.Common)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return dir, nil, err
	}
	var out []Change
	for _, name := range Names {
		c, err := installScript(dir, name, scriptWith(name, exe, loc.Under))
		if err != nil {
			return dir, out, err
		}
		c.Chains = loc.Under + "/" + name
		out = append(out, c)
	}
	src := filepath.Join(loc.Top, filepath.FromSlash(loc.Under))
	for _, name := range forwardable {
		if err := forward(dir, name, loc.Under, isExecutable(filepath.Join(src, name))); err != nil {
			return dir, out, err
		}
	}
	// The directory is complete before git is sent to it.
	if v, err := git.Line(ctx, "config", "--bool", "--get", "extensions.worktreeConfig"); err != nil || v != "true" {
		if _, err := git.Run(ctx, "config", "extensions.worktreeConfig", "true"); err != nil {
			return dir, out, err
		}
	}
	if _, err := git.Run(ctx, "config", "--worktree", "core.hooksPath", dir); err != nil {
		return dir, out, err
	}
	return dir, out, nil
}

// forward writes name's forwarder in dir when want, and removes an earlier
// one that is no longer wanted. A hook of somebody else's there (a hook
// manager that installs where git looks) is left alone.
func forward(dir, name, under string, want bool) error {
	p := filepath.Join(dir, name)
	old, err := os.ReadFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !want {
			return nil
		}
	case err != nil:
		return err
	case !bytes.Contains(old, []byte(forwardMarker)):
		return nil
	case !want:
		return os.Remove(p)
	}
	script := forwarder(name, under)
	if bytes.Equal(old, script) {
		return nil
	}
	return writeScript(p, script)
}

// unsetOwn removes the worktree's own core.hooksPath.
func unsetOwn(ctx context.Context, git *gitcmd.Runner) error {
	if _, err := git.Run(ctx, "config", "--worktree", "--unset", "core.hooksPath"); err != nil && gitcmd.ExitCode(err) != 5 { // 5: not set
		return err
	}
	return nil
}

// uninstallOwn removes git-zerg's hooks and forwarders from its own
// directory, and the setting that points at it from every worktree that
// has it.
func uninstallOwn(ctx context.Context, git *gitcmd.Runner, dir string) ([]Change, error) {
	changes, err := removeHooks(dir)
	if err != nil {
		return changes, err
	}
	for _, name := range forwardable {
		if err := forward(dir, name, "", false); err != nil {
			return changes, err
		}
	}
	dirs, err := git.Fields(ctx, '\n', "worktree", "list", "--porcelain")
	if err != nil {
		return changes, err
	}
	for _, l := range dirs {
		wt, ok := strings.CutPrefix(l, "worktree ")
		if !ok {
			continue
		}
		at := &gitcmd.Runner{Dir: wt}
		if v, err := at.Line(ctx, "config", "--worktree", "--get", "core.hooksPath"); err == nil && filepath.Clean(v) == dir {
			if err := unsetOwn(ctx, at); err != nil {
				return changes, err
			}
		}
	}
	os.Remove(dir) // only when empty: a hook manager's files stay
	return changes, nil
}

// ownProblem says what is wrong with git-zerg's own directory standing in
// for the relative core.hooksPath, "" when nothing is: the setting it
// stands in for changed since the install.
func ownProblem(loc Location) string {
	b, err := os.ReadFile(filepath.Join(loc.Dir, Names[0]))
	if err != nil {
		return "" // problemAt says what is missing
	}
	was := recordedUnder(b)
	switch {
	case was == "" || was == loc.Under:
		return ""
	case !relativeHooksPath(loc.Under):
		return fmt.Sprintf("git-zerg's hooks in %s stand in for core.hooksPath %s, which is now %q: the hooks it leads to do not run; run git zerg hooks install", loc.Dir, was, loc.Under)
	}
	return fmt.Sprintf("git-zerg's hooks in %s run the hooks of %s, but core.hooksPath is now %s: run git zerg hooks install", loc.Dir, was, loc.Under)
}

// WorktreeHooksPath is the core.hooksPath a worktree made for a worker
// gets of its own: git-zerg's hooks directory when the hooks were
// installed there, "" when they were not (the worktree then looks where
// every worktree does). It reads one small file.
func WorktreeHooksPath(s *gitstore.Store) string {
	b, err := os.ReadFile(recordPath(s))
	if err != nil {
		return ""
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), recordInstalled+" ")
	if !ok || filepath.Clean(dir) != ownDir(s.CommonDir) {
		return ""
	}
	return dir
}
