package odb

import (
	"crypto/sha1"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-zerg/git-zerg/gitobj"
	"github.com/git-zerg/git-zerg/gitstore/codec"
	"github.com/git-zerg/git-zerg/lazy"
)

// ReadBlob reads a blob's content.
func (db *DB) ReadBlob(h plumbing.Hash) ([]byte, error) {
	o, err := db.rawObject(h)
	if err == nil && o.typ != plumbing.BlobObject {
		err = fmt.Errorf("a %s, not a blob", o.typ)
	}
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	return o.data, nil
}

// ReadJSON reads a blob and decodes its JSON into v.
func (db *DB) ReadJSON(h plumbing.Hash, v any) error {
	b, err := db.ReadBlob(h)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode blob %s: %w", h, err)
	}
	return nil
}

// ReadTree reads a tree; the zero hash is the empty tree.
func (db *DB) ReadTree(h plumbing.Hash) (*gitobj.Tree, error) {
	if h.IsZero() {
		return &gitobj.Tree{}, nil
	}
	return decodeObject(db, h, plumbing.TreeObject, gitobj.DecodeTree)
}

// ReadCommit reads a commit.
func (db *DB) ReadCommit(h plumbing.Hash) (*gitobj.Commit, error) {
	return decodeObject(db, h, plumbing.CommitObject, gitobj.DecodeCommit)
}

// decodeObject reads an object of type typ and decodes it.
func decodeObject[T any](db *DB, h plumbing.Hash, typ plumbing.ObjectType, decode func(plumbing.Hash, []byte) (*T, error)) (*T, error) {
	o, err := db.rawObject(h)
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

// WriteBlob stores a blob, unless it is known to exist.
func (db *DB) WriteBlob(data []byte) (plumbing.Hash, error) {
	// Most of a transaction's objects already exist (the locks and leases
	// it did not change): a stat is far cheaper than writing them again.
	h := plumbing.ComputeHash(plumbing.BlobObject, data)
	if db.hasLoose(h) {
		return h, nil
	}
	return h, db.writeLoose(h, plumbing.BlobObject, data)
}

// WriteJSON stores v indented, so that `git show` of a state blob reads well
// and `log -p` diffs line by line.
func (db *DB) WriteJSON(v any) (plumbing.Hash, error) {
	data, err := codec.EncodeJSON(v)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return db.WriteBlob(data)
}

// WriteCommit stores a commit.
func (db *DB) WriteCommit(c *gitobj.Commit) (plumbing.Hash, error) {
	return db.WriteObject(plumbing.CommitObject, c.Encode())
}

// WriteObject stores an object of any type, unless it is known to exist.
func (db *DB) WriteObject(typ plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	h := plumbing.ComputeHash(typ, data)
	if db.hasLoose(h) {
		return h, nil
	}
	return h, db.writeLoose(h, typ, data)
}

// Entries is a mutable view of one tree level, one goroutine's.
type Entries map[string]gitobj.TreeEntry

// EntriesOf is the entries of t, to change.
func EntriesOf(t *gitobj.Tree) Entries {
	e := make(Entries, len(t.Entries))
	for _, te := range t.Entries {
		e[te.Name] = te
	}
	return e
}

// SetBlob sets name to a regular file.
func (e Entries) SetBlob(name string, h plumbing.Hash) {
	e[name] = gitobj.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h}
}

// SetTree sets name to a subtree.
func (e Entries) SetTree(name string, h plumbing.Hash) {
	e[name] = gitobj.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
}

// WriteTree stores the tree; an empty tree is stored too (git accepts it), but
// callers drop empty subtrees so that no empty directory lingers.
func (db *DB) WriteTree(e Entries) (plumbing.Hash, error) {
	return db.WriteObject(plumbing.TreeObject, encodeEntries(e))
}

func encodeEntries(e Entries) []byte {
	list := make([]gitobj.TreeEntry, 0, len(e))
	for name, te := range e {
		te.Name = name
		list = append(list, te)
	}
	gitobj.Sort(list)
	return gitobj.EncodeTree(list)
}

// Batch collects the objects of one transaction in memory — their hashes
// are all a tree or commit needs — and writes them at the end, several at
// a time: a transaction's dozen small loose objects cost more in file
// system calls than in anything else. A Batch is one goroutine's.
type Batch struct {
	db   *DB
	objs []Object
	seen map[plumbing.Hash]bool
	// loose are the objects written loose even with the others in a pack:
	// a feature's commit, root tree, clock and meta, which the next
	// transaction reads first. Reading one from a pack lists and maps
	// every pack's index, and each plan leaves a pack.
	loose map[plumbing.Hash]bool
	// held gets the pack written, kept until the update is over.
	held *HeldPacks
}

// Object is an object to write, with its name.
type Object struct {
	Hash plumbing.Hash
	Type plumbing.ObjectType
	Data []byte
}

// NewBatch starts a batch whose pack, if it writes one, held keeps.
func (db *DB) NewBatch(held *HeldPacks) *Batch {
	return &Batch{db: db, seen: map[plumbing.Hash]bool{}, held: held}
}

// Add adds an object by its name; data is the batch's from then on.
func (b *Batch) Add(h plumbing.Hash, typ plumbing.ObjectType, data []byte) plumbing.Hash {
	if !b.seen[h] {
		b.seen[h] = true
		b.objs = append(b.objs, Object{Hash: h, Type: typ, Data: data})
	}
	return h
}

// Blob adds a blob; data is the batch's from then on.
func (b *Batch) Blob(data []byte) plumbing.Hash {
	return b.Add(BlobHash(data), plumbing.BlobObject, data)
}

// BlobHash is the object name of a blob. Computed with crypto/sha1: the
// objects hashed here are our own, and the collision-detecting hash go-git
// uses costs several times more on a plan's thousands of blobs.
func BlobHash(data []byte) plumbing.Hash {
	h := sha1.New()
	var hdr [32]byte
	h.Write(strconv.AppendInt(append(hdr[:0], "blob "...), int64(len(data)), 10))
	h.Write([]byte{0})
	h.Write(data)
	var out plumbing.Hash
	h.Sum(out[:0])
	return out
}

// KeepLoose has the objects written loose, whatever else is packed.
func (b *Batch) KeepLoose(hs ...plumbing.Hash) {
	if b.loose == nil {
		b.loose = map[plumbing.Hash]bool{}
	}
	for _, h := range hs {
		b.loose[h] = true
	}
}

// JSON adds the blob of v as the state stores it (codec.EncodeJSON).
func (b *Batch) JSON(v any) (plumbing.Hash, error) {
	data, err := codec.EncodeJSON(v)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return b.Blob(data), nil
}

func (b *Batch) obj(typ plumbing.ObjectType, data []byte) plumbing.Hash {
	return b.Add(plumbing.ComputeHash(typ, data), typ, data)
}

// Commit adds a commit.
func (b *Batch) Commit(c *gitobj.Commit) plumbing.Hash {
	return b.obj(plumbing.CommitObject, c.Encode())
}

// Tree adds a tree.
func (b *Batch) Tree(e Entries) plumbing.Hash {
	return b.obj(plumbing.TreeObject, encodeEntries(e))
}

// Flush writes the objects that do not exist yet: as loose objects, or
// as one pack when there are many.
func (b *Batch) Flush() error {
	// A plan's objects are all new, each looked for in a failed stat: at
	// 100,000 tasks a fifth of a second, shared out between the processors.
	const chunk = 1024
	have := make([]bool, len(b.objs))
	Parallel((len(b.objs)+chunk-1)/chunk, func(c int) error {
		for i := c * chunk; i < min((c+1)*chunk, len(b.objs)); i++ {
			have[i] = b.db.hasLoose(b.objs[i].Hash)
		}
		return nil
	})
	var missing []Object
	for i, o := range b.objs {
		if !have[i] {
			missing = append(missing, o)
		}
	}
	b.objs = nil
	// While git gc runs, its prune may delete any loose object no ref
	// reaches yet: the objects go into a pack kept until the update is
	// over, which neither prune nor repack touches (see above).
	pruning := len(missing) > 0 && b.db.gcRunning()
	if len(missing) > PackAbove || pruning {
		var packed, loose []Object
		for _, o := range missing {
			if b.loose[o.Hash] && !pruning {
				loose = append(loose, o)
			} else {
				packed = append(packed, o)
			}
		}
		keep, err := b.db.writePack(packed, true)
		b.held.Add(keep, packed)
		if err != nil {
			return err
		}
		missing = loose
	}
	for _, o := range missing {
		if err := b.db.writeLoose(o.Hash, o.Type, o.Data); err != nil {
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

// RestoreUnconfirmed writes again every object written loose since the
// last update confirmed whose file is gone: an update git refused for a
// missing object (a prune deleted it between its write and the update)
// can then be made again.
func (db *DB) RestoreUnconfirmed() error {
	objs, _ := db.memo.unconfirmedObjects()
	return db.restoreWritten(objs)
}

func (m *Memo) noteWritten(o Object) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.unconfirmed = append(m.unconfirmed, o)
}

// unconfirmedObjects returns the objects not yet confirmed, and the mark
// that confirms them (confirmed).
func (m *Memo) unconfirmedObjects() ([]Object, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.unconfirmed, m.dropped + len(m.unconfirmed)
}

// confirmed drops the objects up to mark from the front of the list: those
// another update confirmed meanwhile are gone already, and those written
// since stay for the next update to check.
func (m *Memo) confirmed(mark int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := min(max(mark-m.dropped, 0), len(m.unconfirmed))
	m.unconfirmed = append(m.unconfirmed[:0:0], m.unconfirmed[n:]...)
	m.dropped += n
}

// ConfirmWritten makes the objects this process wrote loose since the
// last update made safe from git prune, now that one is (see above):
// all of them, not only this update's, since an update can reuse an
// object an attempt before it wrote.
func (db *DB) ConfirmWritten() error {
	m := db.memo
	objs, mark := m.unconfirmedObjects()
	if len(objs) == 0 {
		return nil
	}
	err := db.restoreWritten(objs)
	if err == nil && db.gcRunning() {
		_, err = db.writePack(objs, false)
	}
	if err != nil {
		return fmt.Errorf("the state moved, but keeping the objects it needs failed: %w", err)
	}
	m.confirmed(mark)
	return nil
}

// restoreWritten writes again, from the bytes held, every object of objs
// whose loose file is gone. An object git gc moved into a pack is written
// too: one more copy harms nothing (git gc drops it), where looking for it
// in every pack would cost more.
func (db *DB) restoreWritten(objs []Object) error {
	for _, o := range objs {
		path := db.loosePath(o.Hash)
		_, err := os.Lstat(path)
		if err == nil {
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		raw, err := looseBytes(o.Type, o.Data)
		if err == nil {
			err = db.placeLoose(path, raw)
		}
		if err != nil {
			return fmt.Errorf("object %s: %w", o.Hash, err)
		}
	}
	return nil
}

// hostname is the machine's name, read once: a gc.pid names the host of
// its git gc.
var hostname = &lazy.Value[string]{Build: func() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		h = "localhost"
	}
	return h
}}

// gcStale is when git itself takes a gc.pid for the leftover of a gc that
// died without removing it.
const gcStale = 12 * time.Hour

// gcRunning reports whether a `git gc` may be running on this repository,
// as git gc itself decides whether another one is: its gc.pid ("<pid>
// <host>") exists, is not older than 12 hours, and names a live process
// or another host.
func (db *DB) gcRunning() bool {
	path := filepath.Join(db.commonDir, "gc.pid")
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) > gcStale {
		return false
	}
	pid, host, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	n, err := strconv.Atoi(pid)
	if err != nil || host != hostname.Get() {
		return true
	}
	return processAlive(n)
}

// processAlive: a signal 0 reaches it (EPERM: it exists, another user's).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
