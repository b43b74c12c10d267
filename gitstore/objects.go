package gitstore

import (
	"context"
	"crypto/sha1"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitobj"
	"github.com/git-zerg/git-zerg/gitstore/codec"
	"github.com/git-zerg/git-zerg/state"
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
	data, err := codec.EncodeJSON(v)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return s.writeBlob(data)
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
	Op      state.Op
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
	tr("Zerg-Op", string(m.Op))
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
			m.Op = state.Op(v)
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
	data, err := codec.EncodeJSON(v)
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
	// While git gc runs, its prune may delete any loose object no ref
	// reaches yet: the objects go into a pack kept until the update is
	// over, which neither prune nor repack touches (see above).
	pruning := len(missing) > 0 && b.s.gcRunning()
	if len(missing) > packAbove || pruning {
		var packed, loose []batchObject
		for _, o := range missing {
			if b.loose[o.hash] && !pruning {
				loose = append(loose, o)
			} else {
				packed = append(packed, o)
			}
		}
		keep, err := b.s.writePack(packed, true)
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

// A loose object no ref reaches yet is one `git prune` may delete: git
// gives such objects a grace period (gc.pruneExpire, two weeks by
// default) for their writer to make them reachable, and `git gc
// --prune=now` takes it away ("now" is every object, whatever its date).
// A transition writes its objects a moment before its ref moves; a prune
// that listed the refs in between deleted them after the update was
// acknowledged, and the state ref pointed at a missing commit.
//
// No loose object is safe from such a prune: it deletes whatever it did
// not reach when it listed the refs, up to its last moment, so no check
// made after the update can tell it is over. A pack is safe: git prune
// never deletes one, and `git repack -d` deletes only the packs that were
// there, without a .keep, when it started. Hence:
//
//   - while `git gc` runs (its gc.pid exists from before it lists the refs
//     until its prune is over), a transition's objects go into a pack kept
//     until its refs are updated, as a plan's always do (flush);
//   - once an update is made, every object written loose since the last
//     one is looked at, a stat each, and written again from the bytes
//     still held if it is gone; if a gc runs by then (it began after the
//     objects were written), a pack of them is written too: only a repack
//     that starts after that pack can delete it, and it sees the update;
//     with no gc running, every prune that listed the refs before the
//     update is over, and the stat saw all it deleted;
//   - an update git refuses because its commit was deleted first is made
//     again once the objects are written again.
//
// Outside a gc, transitions stay loose objects and pay one stat each. A
// `git prune --expire=now` run by hand (not through git gc) leaves no
// mark: only the stat after the update covers it, and a state left with
// an object missing is named as such, with its repair (DamagedError).

// updateRefs is moveRefs, made safe from git prune: an update git refuses
// for a missing object (a prune deleted it between its write and the
// update) is made again once the objects written are, and an update made
// has its objects confirmed.
func (s *Store) updateRefs(ctx context.Context, us []refUpdate) error {
	err := s.moveRefs(ctx, us)
	if missingObject(err) && s.restoreWritten(s.memo().unconfirmedObjects()) == nil {
		err = s.moveRefs(ctx, us)
	}
	if err != nil {
		return err
	}
	return s.confirmWritten()
}

func missingObject(err error) bool {
	var ge *gitcmd.Error
	return errors.As(err, &ge) && strings.Contains(ge.Stderr, "with nonexistent object")
}

func (m *memo) noteWritten(o batchObject) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.unconfirmed = append(m.unconfirmed, o)
}

func (m *memo) unconfirmedObjects() []batchObject {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.unconfirmed
}

func (m *memo) confirmed(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.unconfirmed = append(m.unconfirmed[:0:0], m.unconfirmed[n:]...)
}

// confirmWritten makes the objects this process wrote loose since the
// last update made safe from git prune, now that one is (see above):
// all of them, not only this update's, since an update can reuse an
// object an attempt before it wrote.
func (s *Store) confirmWritten() error {
	m := s.memo()
	objs := m.unconfirmedObjects()
	if len(objs) == 0 {
		return nil
	}
	err := s.restoreWritten(objs)
	if err == nil && s.gcRunning() {
		_, err = s.writePack(objs, false)
	}
	if err != nil {
		return fmt.Errorf("the state moved, but keeping the objects it needs failed: %w", err)
	}
	m.confirmed(len(objs))
	return nil
}

// restoreWritten writes again, from the bytes held, every object of objs
// whose loose file is gone. An object git gc moved into a pack is written
// too: one more copy harms nothing (git gc drops it), where looking for it
// in every pack would cost more.
func (s *Store) restoreWritten(objs []batchObject) error {
	for _, o := range objs {
		path := s.loosePath(o.hash)
		_, err := os.Lstat(path)
		if err == nil {
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		raw, err := looseBytes(o.typ, o.data)
		if err == nil {
			err = s.placeLoose(path, raw)
		}
		if err != nil {
			return fmt.Errorf("object %s: %w", o.hash, err)
		}
	}
	return nil
}

// gcStale is when git itself takes a gc.pid for the leftover of a gc that
// died without removing it.
const gcStale = 12 * time.Hour

// gcRunning reports whether a `git gc` may be running on this repository,
// as git gc itself decides whether another one is: its gc.pid ("<pid>
// <host>") exists, is not older than 12 hours, and names a live process
// or another host.
func (s *Store) gcRunning() bool {
	path := filepath.Join(s.CommonDir, "gc.pid")
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) > gcStale {
		return false
	}
	pid, host, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	n, err := strconv.Atoi(pid)
	if err != nil || host != hostname() {
		return true
	}
	return processAlive(n)
}

// processAlive: a signal 0 reaches it (EPERM: it exists, another user's).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
