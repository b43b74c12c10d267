package refs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// Every ref is read here, as git reads it: the loose file first, then
// packed-refs. Only names git itself accepts are refs: during every
// update git creates <ref>.lock beside the ref (empty at first), and a
// killed git leaves it behind; such files, and anything else that is not
// a ref, are not state and must never fail a read. go-git's reference
// iterator takes every file under refs/ for a ref, so it is not used.

// Read returns the commit a ref points at, or the zero hash. A name git
// would refuse (a lock file's, say) is no ref: zero.
func (d *DB) Read(name string) (plumbing.Hash, error) {
	if !strings.HasPrefix(name, "refs/") {
		return d.readPseudoRef(name)
	}
	if !validName(name) {
		return plumbing.ZeroHash, nil
	}
	dir := d.commonDir
	if perWorktreeRef(name) && d.gitDir != "" {
		// The worktree's own, never packed.
		dir = d.gitDir
	}
	h, ok, err := readLooseRef(filepath.Join(dir, filepath.FromSlash(name)), name)
	if err != nil || ok || dir != d.commonDir {
		return h, err
	}
	p, err := d.packed()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return p.refs[name], nil
}

// readLooseRef reads one loose ref file; ok is false when there is none
// (then packed-refs has the ref, if anything does).
func readLooseRef(path, name string) (h plumbing.Hash, ok bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EISDIR) {
		return plumbing.ZeroHash, false, nil
	}
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	line := strings.TrimSpace(string(b))
	if strings.HasPrefix(line, "ref:") {
		return plumbing.ZeroHash, false, fmt.Errorf("%s is a symbolic ref", name)
	}
	if !plumbing.IsHash(line) {
		return plumbing.ZeroHash, false, fmt.Errorf("%s: not a ref file", name)
	}
	return plumbing.NewHash(line), true, nil
}

// Under lists the refs whose names start with prefix (a directory
// such as "refs/zerg/work/f/", or one ref's full name), with their commits.
func (d *DB) Under(prefix string) (map[string]plumbing.Hash, error) {
	out := map[string]plumbing.Hash{}
	root := filepath.Join(d.commonDir, filepath.FromSlash(strings.TrimSuffix(prefix, "/")))
	if dir := filepath.Dir(root); !strings.HasSuffix(prefix, "/") {
		// A partial last component ("refs/zerg/gates-"): walk its parent.
		root = dir
	}
	// Loose refs first, then packed-refs: a ref pruned by a concurrent
	// `git pack-refs` after the walk passed it was packed before the
	// prune, so the packed read, which comes second, has it.
	err := filepath.WalkDir(root, func(path string, de fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // gone while walking (an emptied directory)
			}
			return err
		}
		if de.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(d.commonDir, path)
		if err != nil {
			return nil
		}
		name := filepath.ToSlash(rel)
		if !strings.HasPrefix(name, prefix) || !validName(name) || !de.Type().IsRegular() {
			return nil
		}
		h, ok, err := readLooseRef(path, name)
		if err != nil {
			// Not a ref git would read either (a symbolic ref is not
			// state, and git never leaves a ref file half written).
			return nil
		}
		if ok {
			out[name] = h
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	p, err := d.packed()
	if err != nil {
		return nil, err
	}
	for name, h := range p.refs {
		if _, loose := out[name]; !loose && strings.HasPrefix(name, prefix) && !h.IsZero() {
			out[name] = h
		}
	}
	return out, nil
}

// validName applies git's rules for ref names (check-ref-format) that
// tell a ref from the other files git keeps among them.
func validName(name string) bool {
	if name == "" || strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".") || strings.Contains(name, "..") || strings.Contains(name, "@{") {
		return false
	}
	for _, c := range strings.Split(name, "/") {
		if c == "" || c[0] == '.' || strings.HasSuffix(c, ".lock") {
			return false
		}
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c < 0x20 || c == 0x7f:
			return false
		case strings.IndexByte(" ~^:?*[\\", c) >= 0:
			return false
		}
	}
	return true
}

// perWorktreeRef: refs that live in each worktree's own git dir.
func perWorktreeRef(name string) bool {
	for _, p := range []string{"refs/worktree/", "refs/bisect/", "refs/rewritten/"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// readPseudoRef reads a ref outside refs/ (HEAD, ORIG_HEAD): a file of
// the worktree's own git dir, never packed. A symbolic one is refused, as
// callers want a commit, not a branch name.
func (d *DB) readPseudoRef(name string) (plumbing.Hash, error) {
	for _, r := range name {
		if (r < 'A' || r > 'Z') && r != '_' {
			return plumbing.ZeroHash, fmt.Errorf("%q is not a ref name", name)
		}
	}
	dir := d.gitDir
	if dir == "" {
		dir = d.commonDir
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	line := strings.TrimSpace(string(b))
	if strings.HasPrefix(line, "ref:") {
		return plumbing.ZeroHash, fmt.Errorf("%s is a symbolic ref", name)
	}
	if f := strings.Fields(line); len(f) > 0 && plumbing.IsHash(f[0]) {
		return plumbing.NewHash(f[0]), nil
	}
	return plumbing.ZeroHash, fmt.Errorf("%s: not a commit id: %q", name, line)
}

// packedRefs is the parsed packed-refs file, kept while the file is the
// same. git replaces the file by rename, so a change is a new inode or a
// new time, except when a replacement gets the freed inode back within
// the file system's time granularity, with the same size (pack-refs of
// the same refs with other values does exactly that). A file that was
// that recent when parsed is racy, as git calls it, and is parsed again.
type packedRefs struct {
	stamp string
	racy  bool
	refs  map[string]plumbing.Hash
}

// racyWindow exceeds any file system's timestamp granularity.
const racyWindow = 2 * time.Second

func (d *DB) packed() (*packedRefs, error) {
	path := filepath.Join(d.commonDir, "packed-refs")
	for attempt := 0; ; attempt++ {
		fi, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return &packedRefs{}, nil
		}
		if err != nil {
			return nil, err
		}
		stamp := fmt.Sprint(fi.Size(), " ", fi.ModTime().UnixNano()) + inodeStamp(fi)
		m := d.shared
		m.mu.Lock()
		p := m.packed
		m.mu.Unlock()
		if p != nil && p.stamp == stamp && !p.racy {
			return p, nil
		}
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) && attempt < 3 {
			continue // replaced between the stat and the read
		}
		if err != nil {
			return nil, err
		}
		p = &packedRefs{stamp: stamp, racy: time.Since(fi.ModTime()) < racyWindow, refs: map[string]plumbing.Hash{}}
		for _, line := range strings.Split(string(b), "\n") {
			if line == "" || line[0] == '#' || line[0] == '^' {
				continue
			}
			h, ref, ok := strings.Cut(line, " ")
			if ok && plumbing.IsHash(h) {
				p.refs[ref] = plumbing.NewHash(h)
			}
		}
		m.mu.Lock()
		m.packed = p
		m.mu.Unlock()
		return p, nil
	}
}
