package gitstore

import (
	"bytes"
	"crypto/sha1"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-zerg/git-zerg/gitobj"
)

func (s *Store) readBlob(h plumbing.Hash) ([]byte, error) {
	o, err := s.rawObject(h)
	if err == nil && o.typ != plumbing.BlobObject {
		err = fmt.Errorf("a %s, not a blob", o.typ)
	}
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	return o.data, nil
}

func (s *Store) readJSON(h plumbing.Hash, v any) error {
	b, err := s.readBlob(h)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode blob %s: %w", h, err)
	}
	return nil
}

func (s *Store) readTree(h plumbing.Hash) (*gitobj.Tree, error) {
	if h.IsZero() {
		return &gitobj.Tree{}, nil
	}
	return decodeObject(s, h, plumbing.TreeObject, gitobj.DecodeTree)
}

func (s *Store) readCommit(h plumbing.Hash) (*gitobj.Commit, error) {
	return decodeObject(s, h, plumbing.CommitObject, gitobj.DecodeCommit)
}

// decodeObject reads an object of type typ and decodes it.
func decodeObject[T any](s *Store, h plumbing.Hash, typ plumbing.ObjectType, decode func(plumbing.Hash, []byte) (*T, error)) (*T, error) {
	o, err := s.rawObject(h)
	if err == nil && o.typ != typ {
		err = fmt.Errorf("a %s, not a %s", o.typ, typ)
	}
	var v *T
	if err == nil {
		v, err = decode(h, o.data)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", typ, h, err)
	}
	return v, nil
}

func (s *Store) writeBlob(data []byte) (plumbing.Hash, error) {
	// Most of a transaction's objects already exist (the locks and leases
	// it did not change): a stat is far cheaper than writing them again.
	h := plumbing.ComputeHash(plumbing.BlobObject, data)
	if s.hasLoose(h) {
		return h, nil
	}
	return h, s.writeLoose(h, plumbing.BlobObject, data)
}

// writeJSON stores v indented, so that `git show` of a state blob reads well
// and `log -p` diffs line by line.
func (s *Store) writeJSON(v any) (plumbing.Hash, error) {
	data, err := encodeJSON(v)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return s.writeBlob(data)
}

func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (s *Store) writeCommit(c *gitobj.Commit) (plumbing.Hash, error) {
	return s.writeObject(plumbing.CommitObject, c.Encode())
}

func (s *Store) writeObject(typ plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	h := plumbing.ComputeHash(typ, data)
	if s.hasLoose(h) {
		return h, nil
	}
	return h, s.writeLoose(h, typ, data)
}

// entries is a mutable view of one tree level.
type entries map[string]gitobj.TreeEntry

func entriesOf(t *gitobj.Tree) entries {
	e := make(entries, len(t.Entries))
	for _, te := range t.Entries {
		e[te.Name] = te
	}
	return e
}

func (e entries) setBlob(name string, h plumbing.Hash) {
	e[name] = gitobj.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h}
}

func (e entries) setTree(name string, h plumbing.Hash) {
	e[name] = gitobj.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
}

// write stores the tree; an empty tree is stored too (git accepts it), but
// callers drop empty subtrees so that no empty directory lingers.
func (s *Store) writeTree(e entries) (plumbing.Hash, error) {
	return s.writeObject(plumbing.TreeObject, encodeEntries(e))
}

func encodeEntries(e entries) []byte {
	list := make([]gitobj.TreeEntry, 0, len(e))
	for name, te := range e {
		te.Name = name
		list = append(list, te)
	}
	gitobj.Sort(list)
	return gitobj.EncodeTree(list)
}

func sortStrings(s []string) { sort.Strings(s) }

// Message is what a state commit says about itself. Subject is the first
// line; the other fields become trailers, which `log` and `fsck` read back.
type Message struct {
	Subject string
	Op      string
	Feature string
	Task    string
	Worker  string
	From    string
	To      string
	Reason  string
	Clock   uint64
}

func (m *Message) String() string {
	var b strings.Builder
	b.WriteString(m.Subject)
	b.WriteString("\n\n")
	tr := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, strings.ReplaceAll(v, "\n", " "))
		}
	}
	tr("Zerg-Op", m.Op)
	tr("Zerg-Feature", m.Feature)
	tr("Zerg-Task", m.Task)
	tr("Zerg-Worker", m.Worker)
	tr("Zerg-From", m.From)
	tr("Zerg-To", m.To)
	tr("Zerg-Reason", m.Reason)
	if m.Clock > 0 {
		tr("Zerg-Clock", fmt.Sprint(m.Clock))
	}
	return b.String()
}

// ParseMessage reads back a state commit message.
func ParseMessage(msg string) Message {
	var m Message
	subject, rest, _ := strings.Cut(msg, "\n")
	m.Subject = subject
	for _, line := range strings.Split(rest, "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		switch k {
		case "Zerg-Op":
			m.Op = v
		case "Zerg-Feature":
			m.Feature = v
		case "Zerg-Task":
			m.Task = v
		case "Zerg-Worker":
			m.Worker = v
		case "Zerg-From":
			m.From = v
		case "Zerg-To":
			m.To = v
		case "Zerg-Reason":
			m.Reason = v
		case "Zerg-Clock":
			fmt.Sscan(v, &m.Clock)
		}
	}
	return m
}

// batch collects the objects of one transaction in memory — their hashes
// are all a tree or commit needs — and writes them at the end, several at
// a time: a transaction's dozen small loose objects cost more in file
// system calls than in anything else.
type batch struct {
	s    *Store
	objs []batchObject
	seen map[plumbing.Hash]bool
	// loose are the objects written loose even with the others in a pack:
	// a feature's commit, root tree, clock and meta, which the next
	// transaction reads first. Reading one from a pack lists and maps
	// every pack's index, and each plan leaves a pack.
	loose map[plumbing.Hash]bool
	// held gets the pack written, kept until the update is over.
	held *heldPacks
}

type batchObject struct {
	hash plumbing.Hash
	typ  plumbing.ObjectType
	data []byte
}

func (s *Store) newBatch(held *heldPacks) *batch {
	return &batch{s: s, seen: map[plumbing.Hash]bool{}, held: held}
}

func (b *batch) add(h plumbing.Hash, typ plumbing.ObjectType, data []byte) plumbing.Hash {
	if !b.seen[h] {
		b.seen[h] = true
		b.objs = append(b.objs, batchObject{hash: h, typ: typ, data: data})
	}
	return h
}

// blob adds a blob; data is the batch's from then on.
func (b *batch) blob(data []byte) plumbing.Hash {
	return b.add(blobHash(data), plumbing.BlobObject, data)
}

// blobHash is the object name of a blob. Computed with crypto/sha1: the
// objects hashed here are our own, and the collision-detecting hash go-git
// uses costs several times more on a plan's thousands of blobs.
func blobHash(data []byte) plumbing.Hash {
	h := sha1.New()
	var hdr [32]byte
	h.Write(strconv.AppendInt(append(hdr[:0], "blob "...), int64(len(data)), 10))
	h.Write([]byte{0})
	h.Write(data)
	var out plumbing.Hash
	h.Sum(out[:0])
	return out
}

// keepLoose has the objects written loose, whatever else is packed.
func (b *batch) keepLoose(hs ...plumbing.Hash) {
	if b.loose == nil {
		b.loose = map[plumbing.Hash]bool{}
	}
	for _, h := range hs {
		b.loose[h] = true
	}
}

func (b *batch) json(v any) (plumbing.Hash, error) {
	data, err := encodeJSON(v)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return b.blob(data), nil
}

func (b *batch) object(typ plumbing.ObjectType, data []byte) plumbing.Hash {
	return b.add(plumbing.ComputeHash(typ, data), typ, data)
}

func (b *batch) commit(c *gitobj.Commit) plumbing.Hash {
	return b.object(plumbing.CommitObject, c.Encode())
}

func (b *batch) tree(e entries) plumbing.Hash {
	return b.object(plumbing.TreeObject, encodeEntries(e))
}

// flush writes the objects that do not exist yet: as loose objects, or
// as one pack when there are many.
func (b *batch) flush() error {
	// A plan's objects are all new, each looked for in a failed stat: at
	// 100,000 tasks a fifth of a second, shared out between the processors.
	const chunk = 1024
	have := make([]bool, len(b.objs))
	parallel((len(b.objs)+chunk-1)/chunk, func(c int) error {
		for i := c * chunk; i < min((c+1)*chunk, len(b.objs)); i++ {
			have[i] = b.s.hasLoose(b.objs[i].hash)
		}
		return nil
	})
	var missing []batchObject
	for i, o := range b.objs {
		if !have[i] {
			missing = append(missing, o)
		}
	}
	b.objs = nil
	if len(missing) > packAbove {
		var packed, loose []batchObject
		for _, o := range missing {
			if b.loose[o.hash] {
				loose = append(loose, o)
			} else {
				packed = append(packed, o)
			}
		}
		keep, err := b.s.writePack(packed)
		b.held.add(keep, packed)
		if err != nil {
			return err
		}
		missing = loose
	}
	for _, o := range missing {
		if err := b.s.writeLoose(o.hash, o.typ, o.data); err != nil {
			return err
		}
	}
	return nil
}
