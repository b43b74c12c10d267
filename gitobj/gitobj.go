// Package gitobj reads and writes git's commit and tree objects: the two
// kinds git-zerg builds its state from and walks in a work tree's
// history. It knows the encodings only, never where objects are stored
// (that is gitstore's).
//
// go-git has these types too, but its object package links OpenPGP,
// encoding/gob and a configuration parser into every program that uses
// it, whose initialisation every process of git-zerg paid at start, a
// hook or a `--version` as much as a rush: about a tenth of a hook run.
package gitobj

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// ErrNotFound: no entry at that path of a tree.
var ErrNotFound = errors.New("no such path in the tree")

// Signature is an author or committer line.
type Signature struct {
	Name, Email string
	When        time.Time
}

// Commit is a commit object. Headers other than these (gpgsig, encoding,
// mergetag) are read past, and never written.
type Commit struct {
	Hash         plumbing.Hash
	TreeHash     plumbing.Hash
	ParentHashes []plumbing.Hash
	Author       Signature
	Committer    Signature
	Message      string
}

// TreeEntry is one name in a tree.
type TreeEntry struct {
	Name string
	Mode filemode.FileMode
	Hash plumbing.Hash
}

// Tree is a tree object, its entries in git's order.
type Tree struct {
	Hash    plumbing.Hash
	Entries []TreeEntry
}

// Entry returns the entry named name (one level, no slashes).
func (t *Tree) Entry(name string) (TreeEntry, bool) {
	if name == "" || strings.Contains(name, "/") {
		return TreeEntry{}, false
	}
	// git's order sorts a directory as if its name ended in '/': a file
	// and a directory named name sit in different places.
	for _, dir := range []bool{false, true} {
		i := sort.Search(len(t.Entries), func(i int) bool { return compare(t.Entries[i], name, dir) >= 0 })
		if i < len(t.Entries) && compare(t.Entries[i], name, dir) == 0 {
			return t.Entries[i], true
		}
	}
	return TreeEntry{}, false
}

// compare orders an entry against a name in git's order, the name a
// directory's when dir is set, as git's base_name_compare does: without
// building "name/" strings, since trees are sorted for every transition.
func compare(e TreeEntry, name string, dir bool) int {
	n := min(len(e.Name), len(name))
	if c := strings.Compare(e.Name[:n], name[:n]); c != 0 {
		return c
	}
	return nextByte(e.Name, n, e.Mode == filemode.Dir) - nextByte(name, n, dir)
}

// nextByte is name's byte at n, past its end '/' for a directory and
// nothing (below every byte) for a file.
func nextByte(name string, n int, dir bool) int {
	switch {
	case n < len(name):
		return int(name[n])
	case dir:
		return '/'
	}
	return -1
}

// Sort puts entries in git's order: by name, a directory's name as if it
// ended in '/'.
func Sort(entries []TreeEntry) {
	sort.Slice(entries, func(i, j int) bool { return compare(entries[i], entries[j].Name, entries[j].Mode == filemode.Dir) < 0 })
}

// EncodeTree is the content of a tree of entries, which must be in git's
// order (Sort).
func EncodeTree(entries []TreeEntry) []byte {
	n := 0
	for _, e := range entries {
		n += len(e.Name) + 28
	}
	b := make([]byte, 0, n)
	for _, e := range entries {
		b = strconv.AppendUint(b, uint64(e.Mode), 8)
		b = append(b, ' ')
		b = append(b, e.Name...)
		b = append(b, 0)
		b = append(b, e.Hash[:]...)
	}
	return b
}

// DecodeTree reads a tree's content.
func DecodeTree(h plumbing.Hash, data []byte) (*Tree, error) {
	t := &Tree{Hash: h}
	// Every entry is at least 23 bytes: a guess that saves regrowing.
	t.Entries = make([]TreeEntry, 0, len(data)/32+1)
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp <= 0 {
			return nil, fmt.Errorf("tree %s: bad entry mode", h)
		}
		mode, err := strconv.ParseUint(string(data[:sp]), 8, 32)
		if err != nil {
			return nil, fmt.Errorf("tree %s: bad entry mode %q", h, data[:sp])
		}
		data = data[sp+1:]
		nul := bytes.IndexByte(data, 0)
		if nul < 0 || len(data) < nul+1+20 {
			return nil, fmt.Errorf("tree %s: truncated entry", h)
		}
		var e TreeEntry
		e.Mode = filemode.FileMode(mode)
		e.Name = string(data[:nul])
		copy(e.Hash[:], data[nul+1:nul+21])
		t.Entries = append(t.Entries, e)
		data = data[nul+21:]
	}
	return t, nil
}

// Encode is the content of the commit.
func (c *Commit) Encode() []byte {
	var b bytes.Buffer
	b.Grow(len(c.Message) + 256)
	b.WriteString("tree ")
	b.WriteString(c.TreeHash.String())
	b.WriteByte('\n')
	for _, p := range c.ParentHashes {
		b.WriteString("parent ")
		b.WriteString(p.String())
		b.WriteByte('\n')
	}
	b.WriteString("author ")
	c.Author.encode(&b)
	b.WriteString("\ncommitter ")
	c.Committer.encode(&b)
	b.WriteString("\n\n")
	b.WriteString(c.Message)
	return b.Bytes()
}

func (s Signature) encode(b *bytes.Buffer) {
	b.WriteString(s.Name)
	b.WriteString(" <")
	b.WriteString(s.Email)
	b.WriteString("> ")
	b.WriteString(strconv.FormatInt(s.When.Unix(), 10))
	b.WriteByte(' ')
	b.WriteString(s.When.Format("-0700"))
}

// DecodeCommit reads a commit's content.
func DecodeCommit(h plumbing.Hash, data []byte) (*Commit, error) {
	c := &Commit{Hash: h}
	seenTree := false
	for {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			// Headers only, no message: git writes none such, but reads it.
			if len(data) > 0 {
				if err := c.header(data, &seenTree); err != nil {
					return nil, fmt.Errorf("commit %s: %w", h, err)
				}
			}
			data = nil
			break
		}
		line := data[:nl]
		data = data[nl+1:]
		if len(line) == 0 {
			break
		}
		if line[0] == ' ' {
			continue // a continuation of a multi-line header (gpgsig)
		}
		if err := c.header(line, &seenTree); err != nil {
			return nil, fmt.Errorf("commit %s: %w", h, err)
		}
	}
	if !seenTree {
		return nil, fmt.Errorf("commit %s: no tree", h)
	}
	c.Message = string(data)
	return c, nil
}

func (c *Commit) header(line []byte, seenTree *bool) error {
	key, val, _ := bytes.Cut(line, []byte{' '})
	switch string(key) {
	case "tree":
		if !plumbing.IsHash(string(val)) {
			return fmt.Errorf("bad tree %q", val)
		}
		c.TreeHash = plumbing.NewHash(string(val))
		*seenTree = true
	case "parent":
		if !plumbing.IsHash(string(val)) {
			return fmt.Errorf("bad parent %q", val)
		}
		c.ParentHashes = append(c.ParentHashes, plumbing.NewHash(string(val)))
	case "author":
		c.Author = decodeSignature(val)
	case "committer":
		c.Committer = decodeSignature(val)
	}
	return nil
}

// decodeSignature reads "Name <email> seconds +zone" as git does: leniently,
// a part it cannot read left zero.
func decodeSignature(b []byte) Signature {
	var s Signature
	open := bytes.LastIndexByte(b, '<')
	closing := bytes.LastIndexByte(b, '>')
	if open < 0 || closing < open {
		s.Name = strings.TrimSpace(string(b))
		return s
	}
	s.Name = strings.TrimSpace(string(b[:open]))
	s.Email = string(b[open+1 : closing])
	f := strings.Fields(string(b[closing+1:]))
	if len(f) == 0 {
		return s
	}
	sec, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return s
	}
	loc := time.UTC
	if len(f) > 1 {
		if z, ok := parseZone(f[1]); ok {
			loc = z
		}
	}
	s.When = time.Unix(sec, 0).In(loc)
	return s
}

func parseZone(z string) (*time.Location, bool) {
	if len(z) != 5 || (z[0] != '+' && z[0] != '-') {
		return nil, false
	}
	hh, err1 := strconv.Atoi(z[1:3])
	mm, err2 := strconv.Atoi(z[3:5])
	if err1 != nil || err2 != nil {
		return nil, false
	}
	off := hh*3600 + mm*60
	if z[0] == '-' {
		off = -off
	}
	return time.FixedZone("", off), true
}
