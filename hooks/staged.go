package hooks

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitobj"
	"github.com/git-zerg/git-zerg/gitstore"
)

// The staged paths are what `git diff-index --cached --name-only
// --no-renames HEAD` prints; the process that prints them costs a hook run
// about 4 ms of CPU, which on a 2-core machine the hook's own work waits for.
// They are computed here instead, from the index git is committing and
// HEAD's trees, whenever that can be done exactly as git does it (or
// stricter: see intent-to-add in dir); otherwise (errUnsure) git is asked. A path missed here would be a
// commit the hook lets through unchecked, so every doubt goes to git.
//
// The index is parsed here rather than with go-git's decoder: that one
// drops the cache-tree entries git has invalidated, and with them the
// subtree counts that say where the valid ones sit, so the cache tree could
// not be used to skip unchanged directories.

// errUnsure: the staged paths cannot be computed here with certainty.
var errUnsure = errors.New("staged paths: ask git")

func unsure(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUnsure}, args...)...)
}

// stagedInProcess lists the staged paths of the work tree containing dir
// in this process, sorted; an error (errUnsure or a read error) means git
// must be asked instead.
func stagedInProcess(ctx context.Context, dir string) ([]string, error) {
	// Environments that point git at other objects or another layout
	// than the repository's own, which the reads here do not follow.
	for _, v := range []string{"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_REPLACE_REF_BASE", "GIT_WORK_TREE", "GIT_COMMON_DIR"} {
		if os.Getenv(v) != "" {
			return nil, unsure("%s is set", v)
		}
	}
	repo, ok := gitcmd.Discover(dir)
	if !ok || repo.Top == "" {
		return nil, unsure("repository not found in-process")
	}
	if err := plainFormat(repo.CommonDir); err != nil {
		return nil, err
	}
	indexPath := filepath.Join(repo.GitDir, "index")
	if v, set := os.LookupEnv("GIT_INDEX_FILE"); set {
		if v == "" {
			return nil, unsure("GIT_INDEX_FILE is empty")
		}
		// git runs hooks at the top of the work tree, where a relative
		// GIT_INDEX_FILE is both relative to the top and to the working
		// directory; elsewhere which one git takes is left to git.
		indexPath = v
		if !filepath.IsAbs(v) {
			if abs, err := filepath.Abs(dir); err != nil || abs != repo.Top {
				return nil, unsure("relative GIT_INDEX_FILE below the top")
			}
			indexPath = filepath.Join(repo.Top, v)
		}
	}
	// A missing index is an empty one to git: every path of HEAD staged
	// for deletion. Rare enough to leave to git.
	b, err := os.ReadFile(indexPath)
	if err != nil {
		return nil, unsure("read index: %v", err)
	}
	idx, err := parseIndex(b)
	if err != nil {
		return nil, err
	}
	s, err := gitstore.Open(ctx, repo.Top)
	if err != nil {
		return nil, err
	}
	// Replace refs change what git reads for HEAD and its trees.
	if rs, err := s.RefsUnder("refs/replace/"); err != nil || len(rs) > 0 {
		return nil, unsure("replace refs")
	}
	tree, err := headTree(s, repo.GitDir)
	if err != nil {
		return nil, err
	}
	d := &stagedDiff{s: s, idx: idx}
	if err := d.dir("", tree, 0, len(idx.entries)); err != nil {
		return nil, err
	}
	slices.Sort(d.out)
	return slices.Compact(d.out), nil
}

// plainFormat refuses repositories whose objects or refs this package does
// not read: another hash (extensions.objectFormat) or reftable
// (extensions.refStorage). Any mention of either extension is enough.
func plainFormat(commonDir string) error {
	b, err := os.ReadFile(filepath.Join(commonDir, "config"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return unsure("read config: %v", err)
	}
	low := bytes.ToLower(b)
	for _, ext := range []string{"objectformat", "refstorage"} {
		if bytes.Contains(low, []byte(ext)) {
			return unsure("extensions.%s", ext)
		}
	}
	if _, err := os.Lstat(filepath.Join(commonDir, "reftable")); err == nil {
		return unsure("reftable")
	}
	return nil
}

// headTree is the tree of the commit HEAD names; an unborn branch has none,
// and then git compares with the empty tree (`git diff --cached`).
func headTree(s *gitstore.Store, gitDir string) (plumbing.Hash, error) {
	b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return plumbing.ZeroHash, unsure("read HEAD: %v", err)
	}
	line := strings.TrimSpace(string(b))
	var h plumbing.Hash
	if ref, ok := strings.CutPrefix(line, "ref:"); ok {
		ref = strings.TrimSpace(ref)
		if !strings.HasPrefix(ref, "refs/heads/") {
			return plumbing.ZeroHash, unsure("HEAD names %s", ref)
		}
		if h, err = s.ReadRef(ref); err != nil {
			return plumbing.ZeroHash, unsure("read %s: %v", ref, err)
		}
	} else if plumbing.IsHash(line) {
		h = plumbing.NewHash(line)
	}
	if h.IsZero() {
		return plumbing.ZeroHash, unsure("HEAD is unborn")
	}
	c, err := s.ReadCommit(h)
	if err != nil {
		return plumbing.ZeroHash, unsure("read HEAD %s: %v", h, err)
	}
	return c.TreeHash, nil
}

// indexEntry is one entry of the index, as far as a diff with a tree needs
// it.
type indexEntry struct {
	path  string
	mode  filemode.FileMode
	hash  plumbing.Hash
	stage uint8
	ita   bool // intent to add (git add -N)
}

// cacheNode is one directory of the index's cache tree: count index
// entries under it, whose tree is hash; count < 0 when git invalidated it.
type cacheNode struct {
	count int
	hash  plumbing.Hash
}

// stagedIndex is what of an index file the diff reads.
type stagedIndex struct {
	entries []indexEntry
	// cache is the cache tree by directory ("" for the top, "a/b" below).
	cache map[string]cacheNode
}

const (
	hashLen        = 20
	entryFixed     = 62 // stat data, mode, ids, object name, flags
	flagExtended   = 0x4000
	flagNameMask   = 0x0fff
	extIntentToAdd = 0x2000
	// Of the extended flags git writes only intent-to-add and
	// skip-worktree (0x4000), which changes nothing of what is compared.
	extReservedFlags = 0x9fff
)

// parseIndex reads an index file (format versions 2 to 4, as git's
// Documentation/gitformat-index.txt describes it). Split and sparse indexes
// are errUnsure: their entries are not all in the file, or not all files.
//
// The index keeps b: the caller must not change it afterwards.
func parseIndex(b []byte) (*stagedIndex, error) {
	if len(b) < 12+hashLen || string(b[:4]) != "DIRC" {
		return nil, unsure("not an index file")
	}
	version := binary.BigEndian.Uint32(b[4:])
	if version < 2 || version > 4 {
		return nil, unsure("index version %d", version)
	}
	body, sum := b[:len(b)-hashLen], b[len(b)-hashLen:]
	// index.skipHash leaves the checksum zero; git then does not check it.
	if !bytes.Equal(sum, make([]byte, hashLen)) {
		if got := sha1.Sum(body); !bytes.Equal(got[:], sum) {
			return nil, unsure("index checksum mismatch")
		}
	}
	n := int(binary.BigEndian.Uint32(b[8:]))
	if n > len(body)/entryFixed {
		return nil, unsure("index claims %d entries", n)
	}
	idx := &stagedIndex{entries: make([]indexEntry, 0, n)}
	// The names are substrings of the file as read, not copied: a string
	// each cost more than the rest of the parse, and one copy of the whole
	// file (250 KB at 3,000 files) a tenth of a hook run, in fresh pages.
	// b is never changed after this (parseIndex's contract).
	r := indexReader{body: body, text: unsafe.String(unsafe.SliceData(body), len(body)), version: version, off: 12}
	for i := 0; i < n; i++ {
		e, err := r.entry()
		if err != nil {
			return nil, err
		}
		// The diff groups entries by directory, which holds only for
		// git's order: by path, then stage.
		if len(idx.entries) > 0 {
			last := idx.entries[len(idx.entries)-1]
			if c := strings.Compare(last.path, e.path); c > 0 || c == 0 && last.stage >= e.stage {
				return nil, unsure("index out of order at %q", e.path)
			}
		}
		idx.entries = append(idx.entries, e)
	}
	if err := r.extensions(idx); err != nil {
		return nil, err
	}
	return idx, nil
}

// indexReader reads an index file's entries and extensions in order.
type indexReader struct {
	body    []byte
	text    string // body, as a string the names are cut from
	version uint32
	off     int
	prev    string // the last entry's path: version 4 compresses against it
}

// entry reads the entry at off, and moves off past it.
func (r *indexReader) entry() (indexEntry, error) {
	body, off := r.body, r.off
	if off+entryFixed > len(body) {
		return indexEntry{}, unsure("index truncated")
	}
	e := indexEntry{mode: filemode.FileMode(binary.BigEndian.Uint32(body[off+24:]))}
	copy(e.hash[:], body[off+40:off+60])
	flags := binary.BigEndian.Uint16(body[off+60:])
	e.stage = uint8(flags>>12) & 3
	p := off + entryFixed
	if flags&flagExtended != 0 {
		if r.version < 3 || p+2 > len(body) {
			return e, unsure("extended flags in a version %d index", r.version)
		}
		// Flags this reader does not know may change what an entry
		// means.
		ext := binary.BigEndian.Uint16(body[p:])
		if ext&extReservedFlags != 0 {
			return e, unsure("unknown extended index flags")
		}
		e.ita = ext&extIntentToAdd != 0
		p += 2
	}
	var name string
	if r.version == 4 {
		strip, k := offsetVarint(body[p:])
		if k == 0 || strip > uint64(len(r.prev)) {
			return e, unsure("bad path compression")
		}
		p += k
		end := bytes.IndexByte(body[p:], 0)
		if end < 0 {
			return e, unsure("index truncated")
		}
		name = r.prev[:len(r.prev)-int(strip)] + string(body[p:p+end])
		r.off = p + end + 1
	} else {
		end := bytes.IndexByte(body[p:], 0)
		if end < 0 {
			return e, unsure("index truncated")
		}
		name = r.text[p : p+end]
		// The name and its 1 to 8 NULs pad the entry to a multiple
		// of 8 bytes.
		r.off += (p - off + len(name) + 8) &^ 7
		if r.off > len(body) {
			return e, unsure("index truncated")
		}
	}
	if l := int(flags & flagNameMask); l != len(name) && (l < flagNameMask || len(name) < flagNameMask) {
		return e, unsure("entry %q: name length %d", name, l)
	}
	e.path = name
	switch e.mode {
	case filemode.Regular, filemode.Executable, filemode.Symlink, filemode.Submodule:
	default:
		// A sparse index's directory entries among them.
		return e, unsure("entry %q: mode %o", name, uint32(e.mode))
	}
	if name == "" || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.Contains(name, "//") {
		return e, unsure("entry %q", name)
	}
	r.prev = name
	return e, nil
}

// extensions reads the extensions after the entries: the cache tree is
// kept, the optional ones skipped, any other makes the index one this
// reader cannot be sure of.
func (r *indexReader) extensions(idx *stagedIndex) error {
	body, off := r.body, r.off
	for off+8 <= len(body) {
		sig := string(body[off : off+4])
		size := int(binary.BigEndian.Uint32(body[off+4:]))
		data := body[off+8:]
		if size > len(data) {
			return unsure("extension %q truncated", sig)
		}
		data = data[:size]
		switch {
		case sig == "TREE":
			idx.cache = map[string]cacheNode{}
			rest, err := parseCacheTree(data, "", idx.cache)
			if err != nil || len(rest) > 0 {
				// Without it every directory is compared: slower, as
				// certain.
				idx.cache = nil
			}
		case sig[0] >= 'A' && sig[0] <= 'Z':
			// Optional: git may ignore it, and so may this reader
			// (resolve-undo, untracked cache, fsmonitor, offsets).
		default:
			// "link" (split index), "sdir" (sparse index) and whatever
			// comes next that git must understand.
			return unsure("index extension %q", sig)
		}
		off += 8 + size
	}
	if off != len(body) {
		return unsure("index has %d stray bytes", len(body)-off)
	}
	return nil
}

// offsetVarint decodes git's offset varint (the one of OFS_DELTA); k is 0
// when b holds none.
func offsetVarint(b []byte) (v uint64, k int) {
	for k < len(b) && k < 9 {
		c := b[k]
		if k > 0 {
			v++
		}
		v = v<<7 | uint64(c&0x7f)
		k++
		if c&0x80 == 0 {
			return v, k
		}
	}
	return 0, 0
}

// parseCacheTree reads one cache tree node and its subtrees (pre-order,
// each "<name>\0<entry count> <subtree count>\n<tree id>", no id when the
// count is negative) into m, returning what follows.
func parseCacheTree(b []byte, prefix string, m map[string]cacheNode) ([]byte, error) {
	nul := bytes.IndexByte(b, 0)
	if nul < 0 {
		return nil, unsure("cache tree")
	}
	path := prefix + string(b[:nul])
	b = b[nul+1:]
	sp := bytes.IndexByte(b, ' ')
	lf := bytes.IndexByte(b, '\n')
	if sp < 0 || lf < sp {
		return nil, unsure("cache tree")
	}
	count, err1 := strconv.Atoi(string(b[:sp]))
	subs, err2 := strconv.Atoi(string(b[sp+1 : lf]))
	if err1 != nil || err2 != nil || subs < 0 || subs > len(b) {
		return nil, unsure("cache tree")
	}
	b = b[lf+1:]
	n := cacheNode{count: count}
	if count >= 0 {
		if len(b) < hashLen {
			return nil, unsure("cache tree")
		}
		copy(n.hash[:], b[:hashLen])
		b = b[hashLen:]
	}
	if _, dup := m[path]; dup {
		return nil, unsure("cache tree names %q twice", path)
	}
	m[path] = n
	sub := path + "/"
	if path == "" {
		sub = ""
	}
	for i := 0; i < subs; i++ {
		var err error
		if b, err = parseCacheTree(b, sub, m); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// stagedDiff compares the index with HEAD's tree, directory by directory.
type stagedDiff struct {
	s   *gitstore.Store
	idx *stagedIndex
	out []string
	// reads counts the trees read, for tests.
	reads int
}

// emptyTree, 4b825dc642cb6eb9a060e54bf8d69288fbee4904, may be named by a
// commit without being stored: git knows it without reading it. Spelled
// as bytes, not decoded from hex at every start of the program.
var emptyTree = plumbing.Hash{0x4b, 0x82, 0x5d, 0xc6, 0x42, 0xcb, 0x6e, 0xb9, 0xa0, 0x60,
	0xe5, 0x4b, 0xf8, 0xd6, 0x92, 0x88, 0xfb, 0xee, 0x49, 0x04}

// tree reads a tree's entries by name, their modes as git reads them.
func (d *stagedDiff) tree(h plumbing.Hash) (map[string]gitobj.TreeEntry, error) {
	if h.IsZero() || h == emptyTree {
		return nil, nil
	}
	d.reads++
	t, err := d.s.ReadTree(h)
	if err != nil {
		return nil, unsure("read tree %s: %v", h, err)
	}
	m := make(map[string]gitobj.TreeEntry, len(t.Entries))
	for _, e := range t.Entries {
		mode, ok := canonMode(e.Mode)
		if _, dup := m[e.Name]; dup || !ok || e.Name == "" || strings.Contains(e.Name, "/") {
			return nil, unsure("tree %s: entry %q, mode %o", h, e.Name, uint32(e.Mode))
		}
		e.Mode = mode
		m[e.Name] = e
	}
	return m, nil
}

// canonMode is a tree entry's mode as git compares it: old trees hold
// modes such as 100664, which git reads as 100644.
func canonMode(m filemode.FileMode) (filemode.FileMode, bool) {
	switch m & 0o170000 {
	case 0o100000:
		if m&0o100 != 0 {
			return filemode.Executable, true
		}
		return filemode.Regular, true
	case 0o120000:
		return filemode.Symlink, true
	case 0o040000:
		return filemode.Dir, true
	case 0o160000:
		return filemode.Submodule, true
	}
	return 0, false
}

// dir compares the index entries [lo, hi), all under prefix ("" or
// "a/b/"), with tree (zero: none), listing what differs. A directory whose
// cache tree entry git kept valid, for exactly those entries, and that
// names tree is unchanged as a whole: git itself commits that tree
// without looking at the entries again.
func (d *stagedDiff) dir(prefix string, tree plumbing.Hash, lo, hi int) error {
	if !tree.IsZero() {
		if n, ok := d.idx.cache[strings.TrimSuffix(prefix, "/")]; ok && n.count >= 0 && n.count == hi-lo && n.hash == tree {
			return nil
		}
	}
	entries, err := d.tree(tree)
	if err != nil {
		return err
	}
	ents := d.idx.entries
	for i := lo; i < hi; {
		e := ents[i]
		rest := e.path[len(prefix):]
		if slash := strings.IndexByte(rest, '/'); slash >= 0 {
			// A directory's entries are contiguous: they share a prefix.
			name := rest[:slash]
			sub := prefix + name + "/"
			j := i + 1
			for j < hi && strings.HasPrefix(ents[j].path, sub) {
				j++
			}
			var subtree plumbing.Hash
			if te, ok := entries[name]; ok && te.Mode == filemode.Dir {
				subtree = te.Hash
				delete(entries, name)
			}
			if err := d.dir(sub, subtree, i, j); err != nil {
				return err
			}
			i = j
			continue
		}
		j := i + 1
		for j < hi && ents[j].path == e.path {
			j++
		}
		te, inTree := entries[rest]
		if inTree && te.Mode != filemode.Dir {
			delete(entries, rest)
		} else {
			inTree = false // a directory in HEAD is listed as deleted below
		}
		switch {
		case j-i > 1 || e.stage != 0:
			// Unmerged: git lists the path whatever its stages hold.
			d.out = append(d.out, e.path)
		case e.ita:
			// git lists an intent-to-add path unless HEAD has the empty
			// blob there; but the commit leaves the entry out of its tree,
			// deleting that blob, so the path is listed all the same.
			d.out = append(d.out, e.path)
		case !inTree || te.Mode != e.mode || te.Hash != e.hash:
			// git may leave a submodule's change out (diff.ignoreSubmodules,
			// submodule.<name>.ignore); it decides.
			if e.mode == filemode.Submodule || inTree && te.Mode == filemode.Submodule {
				return unsure("submodule %s changed", e.path)
			}
			d.out = append(d.out, e.path)
		}
		i = j
	}
	for name, te := range entries {
		if err := d.deleted(prefix+name, te); err != nil {
			return err
		}
	}
	return nil
}

// deleted lists a path of HEAD the index does not have: a file, or every
// file of a directory.
func (d *stagedDiff) deleted(path string, te gitobj.TreeEntry) error {
	switch te.Mode {
	case filemode.Submodule:
		return unsure("submodule %s deleted", path)
	case filemode.Dir:
	default:
		d.out = append(d.out, path)
		return nil
	}
	entries, err := d.tree(te.Hash)
	if err != nil {
		return err
	}
	for name, sub := range entries {
		if err := d.deleted(path+"/"+name, sub); err != nil {
			return err
		}
	}
	return nil
}
