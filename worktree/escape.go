package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/git-zerg/git-zerg/gitcmd"
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

// escapesRepo reports whether writing to path (a task's owned path:
// slash-separated, relative to root) could go through a symbolic link in the
// tree at root to somewhere outside it, or into its .git. See FindEscape.
func escapesRepo(root, path string) (bool, error) {
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
// something fixed. Links further down are FindOwnedEscape's business.
//
// It only reads the file system (Lstat and Readlink), so it is cheap enough
// to run at every claim, on the worktree the task's agent will work in.
func FindEscape(root, path string) (*Escape, error) {
	fixed, _ := ownedPrefix(path)
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

// FindOwnedEscape is FindEscape for each of a task's owned paths in the
// worktree at root, and it also looks below directory and glob owners: a
// symlink committed anywhere under "src/" (or under the fixed part of
// "src/**/*.go") that leads out counts, since the agent may write through
// it. Only links git tracks there are looked at below the fixed part, so
// links a setup command made (node_modules, say) do not refuse a task. One
// git process.
func FindOwnedEscape(ctx context.Context, git *gitcmd.Runner, root string, owned []string) (*Escape, error) {
	var below []string
	for _, p := range owned {
		e, err := FindEscape(root, p)
		if e != nil || err != nil {
			return e, err
		}
		if _, many := ownedPrefix(p); many {
			below = append(below, p)
		}
	}
	if len(below) == 0 {
		return nil, nil
	}
	r := &gitcmd.Runner{Dir: root, Env: git.Env}
	fields, err := r.Fields(ctx, 0, "ls-files", "-s", "-z")
	if err != nil {
		return nil, err
	}
	for _, f := range fields {
		meta, file, ok := strings.Cut(f, "\t")
		if !ok || !strings.HasPrefix(meta, "120000 ") {
			continue
		}
		for _, w := range below {
			if !onTheWay(w, file) {
				continue
			}
			e, err := FindEscape(root, file)
			if err != nil {
				return nil, err
			}
			if e != nil {
				e.Path = w
				return e, nil
			}
		}
	}
	return nil, nil
}

// ownedPrefix returns the fixed part of an owned path, without a trailing
// slash, and whether the path owns more than that one name (a directory or
// a glob).
func ownedPrefix(p string) (string, bool) {
	if i := strings.IndexAny(p, "*?["); i >= 0 {
		return strings.TrimSuffix(p[:strings.LastIndexByte(p[:i], '/')+1], "/"), true
	}
	if strings.HasSuffix(p, "/") {
		return strings.TrimSuffix(p, "/"), true
	}
	return p, false
}

// onTheWay reports whether writing some path that owned names could pass
// through, or end at, link: every component of link matches the owned
// path's component at the same place, until the owned path ends in a
// directory or reaches a "**", below which anything may be written.
func onTheWay(owned, link string) bool {
	dir := strings.HasSuffix(owned, "/")
	pc := strings.Split(strings.TrimSuffix(owned, "/"), "/")
	for i, c := range strings.Split(link, "/") {
		if i == len(pc) {
			return dir
		}
		if pc[i] == "**" {
			return true
		}
		if ok, err := path.Match(pc[i], c); err != nil || !ok {
			return err != nil // a pattern we cannot read: be cautious
		}
	}
	return true
}
