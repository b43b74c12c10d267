package worktree

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// IncludeFile names, at the main work tree's top, the files to copy into
// each new worker worktree (the convention other worktree tools share).
const IncludeFile = ".worktreeinclude"

// copyIncluded copies into dst the files of the main work tree that
// .worktreeinclude names and that are not in dst yet.
//
// The patterns are matched by git itself (`git ls-files --others --ignored
// --exclude-from`), so they mean exactly what they mean in .gitignore:
// plain paths, directories ("secrets/"), globs, "**", "!" negation, "#"
// comments, anchoring with a leading "/". As in Claude Code, only files git
// ignores are copied: a tracked file is in the worktree already, and an
// untracked one that git does not ignore would make the worktree dirty
// and block its reuse and removal.
func (m *Manager) copyIncluded(ctx context.Context, list []entry, dst string) error {
	if len(list) == 0 || list[0].bare {
		return nil
	}
	src := list[0].dir
	incl := filepath.Join(src, IncludeFile)
	if _, err := os.Stat(incl); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	git := m.at(src)
	paths, err := git.Fields(ctx, 0, "ls-files", "-z", "--others", "--ignored", "--exclude-from="+incl)
	if err != nil || len(paths) == 0 {
		return err
	}
	in := strings.Join(paths, "\x00") + "\x00"
	out, err := git.RunWith(ctx, gitcmd.Call{Stdin: strings.NewReader(in)}, "check-ignore", "-z", "--stdin")
	if gitcmd.ExitCode(err) == 1 { // none of them is ignored
		return nil
	}
	if err != nil {
		return err
	}
	for _, p := range gitcmd.Split(out, 0) {
		if p == "" || filepath.IsAbs(p) || strings.HasPrefix(filepath.Clean(p), "..") {
			continue
		}
		if err := copyFile(filepath.Join(src, p), filepath.Join(dst, filepath.FromSlash(p))); err != nil {
			return fmt.Errorf("copy %s from %s: %w", p, IncludeFile, err)
		}
	}
	return nil
}

// copyFile copies a regular file or symlink from src to dst unless dst
// exists. Parent directories get the permissions of src's parent.
func copyFile(src, dst string) error {
	if _, err := os.Lstat(dst); err == nil || !errors.Is(err, os.ErrNotExist) {
		return err // exists (nil) or cannot tell
	}
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	perm := os.FileMode(0o755)
	if pfi, err := os.Stat(filepath.Dir(src)); err == nil {
		perm = pfi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(dst), perm); err != nil {
		return err
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	case fi.Mode().IsRegular():
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	default:
		return nil // sockets, fifos: nothing to copy
	}
}
