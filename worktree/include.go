package worktree

import (
	"context"
	"errors"
	"fmt"
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
//
// Nothing is written through a symlink in the worktree (see WriteFile): a
// file whose path there passes through one is left out, and an
// *IncludeError names it once the others are copied.
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
	r, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	defer r.Close()
	var skipped []*UnsafePathError
	for _, p := range gitcmd.Split(out, 0) {
		if p == "" || filepath.IsAbs(p) || strings.HasPrefix(filepath.Clean(p), "..") {
			continue
		}
		from := filepath.Join(src, filepath.FromSlash(p))
		perm := os.FileMode(0o755)
		if pfi, err := os.Stat(filepath.Dir(from)); err == nil {
			perm = pfi.Mode().Perm()
		}
		err := createFrom(r, dst, p, from, perm)
		var ue *UnsafePathError
		if errors.As(err, &ue) {
			// The worktree's checkout, not the user, put a symlink where
			// the main work tree has a directory: a worker may have
			// committed it to send the user's secrets elsewhere. Copy the
			// rest, and say what was left out.
			skipped = append(skipped, ue)
			continue
		}
		if err != nil {
			return fmt.Errorf("copy %s from %s: %w", p, IncludeFile, err)
		}
	}
	if len(skipped) > 0 {
		return &IncludeError{Dir: dst, Skipped: skipped}
	}
	return nil
}

// IncludeError: files named by .worktreeinclude that were not copied into
// the worktree at Dir because a symbolic link is in their way there. The
// other files were copied.
type IncludeError struct {
	Dir     string
	Skipped []*UnsafePathError
}

func (e *IncludeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "worktree %s: %s not copied from %s: %v", e.Dir, plural(len(e.Skipped), "file"), IncludeFile, e.Skipped[0])
	if n := len(e.Skipped) - 1; n > 0 {
		fmt.Fprintf(&b, " (and %d more)", n)
	}
	return b.String()
}

func (e *IncludeError) Unwrap() error { return errUnsafePath }

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
