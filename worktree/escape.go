package worktree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Escape is a symbolic link by which a path leaves the tree it is in.
type Escape struct {
	Path   string // the path asked about, as given
	Link   string // the symlink on its way, slash-separated, relative to the root
	Target string // where the link leads, resolved as far as it exists
}

func (e *Escape) Error() string {
	if strings.TrimSuffix(e.Path, "/") == e.Link {
		return fmt.Sprintf("%s is a symbolic link to %s, outside the repository", e.Link, e.Target)
	}
	return fmt.Sprintf("%s: %s is a symbolic link to %s, outside the repository", e.Path, e.Link, e.Target)
}

// maxHops bounds how many links one resolution follows, as the kernel's
// own limit does (40 on Linux).
const maxHops = 40

// EscapesRepo reports whether writing to path (a task's owned path:
// slash-separated, relative to root) could go through a symbolic link in the
// tree at root to somewhere outside it, or into its .git. See FindEscape.
func EscapesRepo(root, path string) (bool, error) {
	e, err := FindEscape(root, path)
	return e != nil, err
}

// FindEscape returns the symbolic link by which path (slash-separated,
// relative to root) leads outside the tree at root, or into its .git; nil
// when it stays inside. Every component is looked at, the last one too (a
// link to a file outside is written through just the same), and a chain of
// links is followed to its end, dangling ones included: writing to a
// dangling link creates its target. Links that stay inside root are
// allowed.
//
// A directory path ("src/") is checked as the directory; a glob is checked
// up to its first component with a wildcard, since only that part names
// something fixed. Links further down are not looked at.
//
// It only reads the file system (Lstat and Readlink), so it is cheap enough
// to run at every claim, on the worktree the task's agent will work in.
func FindEscape(root, path string) (*Escape, error) {
	fixed := strings.TrimSuffix(path, "/")
	if i := strings.IndexAny(fixed, "*?["); i >= 0 {
		fixed = strings.TrimSuffix(fixed[:strings.LastIndexByte(fixed[:i], '/')+1], "/")
	}
	if fixed == "" {
		return nil, nil // the whole tree: nothing on the way to it
	}
	comps, err := splitRel(fixed)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	top, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	cur := top
	for i, c := range comps {
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if notThere(err) {
			return nil, nil // made under cur, which is inside
		}
		if err != nil {
			return nil, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			to, err := resolve(next, maxHops)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", strings.Join(comps[:i+1], "/"), err)
			}
			if outside(top, to) {
				return &Escape{Path: path, Link: strings.Join(comps[:i+1], "/"), Target: to}, nil
			}
			cur = to
			continue
		}
		if !fi.IsDir() {
			return nil, nil // nothing can be written beneath a file
		}
		cur = next
	}
	return nil, nil
}

// notThere: nothing at the path, or a file where a directory should be;
// either way nothing there leads anywhere.
func notThere(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// resolve returns where the absolute path p really leads: every symlink in
// it followed, dangling ones too, and the part that does not exist kept as
// it is.
func resolve(p string, hops int) (string, error) {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r, nil
	} else if !notThere(err) {
		return "", err
	}
	parent, base := filepath.Dir(p), filepath.Base(p)
	if parent == p {
		return p, nil
	}
	rp, err := resolve(parent, hops)
	if err != nil {
		return "", err
	}
	q := filepath.Join(rp, base)
	fi, err := os.Lstat(q)
	if notThere(err) {
		return q, nil
	}
	if err != nil {
		return "", err
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		return q, nil
	}
	if hops == 0 {
		return "", errors.New("too many levels of symbolic links")
	}
	t, err := os.Readlink(q)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(t) {
		t = filepath.Join(rp, t)
	}
	return resolve(filepath.Clean(t), hops-1)
}

// outside reports whether p, resolved, is outside top or inside its .git.
func outside(top, p string) bool {
	rel, err := filepath.Rel(top, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return true
	}
	return rel == ".git" || strings.HasPrefix(rel, ".git"+string(filepath.Separator))
}
