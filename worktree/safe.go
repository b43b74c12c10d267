package worktree

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// errUnsafePath: a path to be written passes through a symbolic link. A
// worker can commit any symlink, so a link in a worktree is never trusted to
// lead somewhere harmless: following it could write outside the worktree.
var errUnsafePath = errors.New("path passes through a symbolic link")

// UnsafePathError is a write refused because Link, a component of Path, is a
// symbolic link.
type UnsafePathError struct {
	Root string // the directory the write was confined to
	Path string // what was to be written, slash-separated, relative to Root
	Link string // the symlink in its way, relative to Root
}

func (e *UnsafePathError) Error() string {
	if e.Link == e.Path {
		return fmt.Sprintf("%s: not written: it is a symbolic link", e.Path)
	}
	return fmt.Sprintf("%s: not written: %s is a symbolic link, which could lead outside %s", e.Path, e.Link, e.Root)
}

func (e *UnsafePathError) Unwrap() error { return errUnsafePath }

// splitRel checks that name is a plain relative path (no "..", no empty or
// "." component, not absolute) and returns its components.
func splitRel(name string) ([]string, error) {
	name = filepath.ToSlash(name)
	if name == "" || path.IsAbs(name) {
		return nil, fmt.Errorf("worktree: %q is not a relative path", name)
	}
	comps := strings.Split(name, "/")
	for _, c := range comps {
		if c == "" || c == "." || c == ".." {
			return nil, fmt.Errorf("worktree: %q is not a plain relative path", name)
		}
	}
	return comps, nil
}

// openParent opens the directory that holds name under root, one component
// at a time, refusing any component that is a symlink. Missing directories
// are made with perm when mkdir is set.
//
// The Lstat before each step is what refuses links; os.Root is what keeps a
// link swapped in between the Lstat and the open from leading outside root,
// and the SameFile check then refuses such a swap even within root. The
// returned *os.Root is the caller's to close.
func openParent(root *os.Root, rootName string, comps []string, mkdir bool, perm fs.FileMode) (*os.Root, error) {
	cur, err := root.OpenRoot(".")
	if err != nil {
		return nil, err
	}
	for i, c := range comps[:len(comps)-1] {
		unsafe := &UnsafePathError{Root: rootName, Path: strings.Join(comps, "/"), Link: strings.Join(comps[:i+1], "/")}
		fi, err := cur.Lstat(c)
		if errors.Is(err, fs.ErrNotExist) && mkdir {
			if err = cur.Mkdir(c, perm); err == nil || errors.Is(err, fs.ErrExist) {
				fi, err = cur.Lstat(c)
			}
		}
		if err != nil {
			cur.Close()
			return nil, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			cur.Close()
			return nil, unsafe
		}
		next, err := cur.OpenRoot(c)
		cur.Close()
		if err != nil {
			return nil, err
		}
		if st, err := next.Stat("."); err != nil || !os.SameFile(st, fi) {
			next.Close()
			if err != nil {
				return nil, err
			}
			return nil, unsafe
		}
		cur = next
	}
	return cur, nil
}

// WriteFile writes data to name (slash-separated, relative to root),
// replacing a regular file there and making missing parent directories. It
// never follows a symbolic link: a link in any component of name, the last
// one included, refuses the write with an *UnsafePathError (ErrUnsafePath),
// so nothing it writes can land outside root. The file is replaced by a
// rename, so a reader never sees it half written.
//
// Use it for every file git-zerg writes into a worktree.
func WriteFile(root, name string, data []byte, perm fs.FileMode) error {
	comps, err := splitRel(name)
	if err != nil {
		return err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	dir, err := openParent(r, root, comps, true, 0o755)
	if err != nil {
		return err
	}
	defer dir.Close()
	base := comps[len(comps)-1]
	if fi, err := dir.Lstat(base); err == nil {
		if fi.Mode()&fs.ModeSymlink != 0 {
			return &UnsafePathError{Root: root, Path: strings.Join(comps, "/"), Link: strings.Join(comps, "/")}
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("worktree: %s in %s is not a regular file", name, root)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := "." + base + ".zerg-" + hex.EncodeToString(rnd[:])
	f, err := dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm) // the umask is not ours to apply: the caller chose perm
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = dir.Rename(tmp, base)
	}
	if err != nil {
		dir.Remove(tmp)
	}
	return err
}

// CheckWrite refuses, before anything is written, a name under root that
// WriteFile would refuse for a symbolic link: it returns an
// *UnsafePathError for the first component of name (the last one
// included) that is a link, and nil when none of those that exist is. A
// command that writes several files checks them all first, so that a link
// writes nothing at all rather than half.
func CheckWrite(root, name string) error {
	comps, err := splitRel(name)
	if err != nil {
		return err
	}
	p := root
	for i, c := range comps {
		p = filepath.Join(p, c)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return &UnsafePathError{Root: root, Path: strings.Join(comps, "/"), Link: strings.Join(comps[:i+1], "/")}
		}
	}
	return nil
}

// createFrom makes name under root as a copy of the regular file or
// symlink at src, unless name exists already (then it does nothing). Like
// WriteFile it follows no symlink under root; new parent directories get
// dirPerm.
func createFrom(r *os.Root, rootName, name, src string, dirPerm fs.FileMode) error {
	comps, err := splitRel(name)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink == 0 && !fi.Mode().IsRegular() {
		return nil // sockets, fifos: nothing to copy
	}
	dir, err := openParent(r, rootName, comps, true, dirPerm)
	if err != nil {
		return err
	}
	defer dir.Close()
	base := comps[len(comps)-1]
	if _, err := dir.Lstat(base); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return err // exists (nil) or cannot tell
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return dir.Symlink(target, base)
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	// O_EXCL: a symlink created at base since the Lstat is not followed.
	out, err := dir.OpenFile(base, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
