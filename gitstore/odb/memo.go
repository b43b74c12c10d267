package odb

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// A long-lived process (a rush makes hundreds of transitions) would read the
// same objects again and again: the tip it just wrote, the shards it did not
// change, the locks and leases. The Memo keeps, per repository and for the
// whole process, the objects read or written. Everything in it is keyed by
// object hash, so it can never be stale; every DB of the process's
// repository shares it.
//
// A Memo is safe for concurrent use.
type Memo struct {
	mu      sync.Mutex
	objs    map[plumbing.Hash]memoObject
	size    int
	present map[plumbing.Hash]bool
	// unconfirmed are the objects written loose since the last update
	// acknowledged, for it to check (objects.go); dropped counts the
	// objects ever taken off its front, so that two updates confirming at
	// once drop each object once.
	unconfirmed []Object
	dropped     int
	// limit bounds the bytes of objects kept; past it the memo starts over
	// (it only saves time). presentLimit bounds the hashes known to exist
	// (20 bytes and a map entry each) for the same reason.
	limit, presentLimit int
	// resets counts the times the memo started over, for what is memoized
	// above it to start over too (Resets).
	resets atomic.Uint64
}

type memoObject struct {
	typ  plumbing.ObjectType
	data []byte
}

// NewMemo returns an empty memo, bounded to 64 MB of objects and a
// million hashes.
func NewMemo() *Memo {
	m := &Memo{limit: 64 << 20, presentLimit: 1 << 20}
	m.reset()
	return m
}

// SetLimits bounds the memo to bytes of objects and hashes known present:
// tests make it small to see it start over.
func (m *Memo) SetLimits(bytes, hashes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.limit, m.presentLimit = bytes, hashes
}

// Limits returns the bounds SetLimits set.
func (m *Memo) Limits() (bytes, hashes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.limit, m.presentLimit
}

// Usage is what the memo holds: bytes of objects and hashes known present.
func (m *Memo) Usage() (bytes, hashes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.size, len(m.present)
}

// Resets counts the times the memo started over: a cache built on it
// (decoded state) starts over when the count moves, so that the two stay
// bounded together.
func (m *Memo) Resets() uint64 { return m.resets.Load() }

func (m *Memo) object(h plumbing.Hash) (memoObject, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objs[h]
	return o, ok
}

func (m *Memo) putObject(h plumbing.Hash, o memoObject) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objs[h]; ok {
		return
	}
	if m.size+len(o.data) > m.limit {
		m.reset()
		m.resets.Add(1)
	}
	m.objs[h] = o
	m.size += len(o.data)
	m.notePresent(h)
}

// reset forgets everything: the memo only saves time, and a long rush must
// not grow it without end.
func (m *Memo) reset() {
	m.objs, m.size, m.present = map[plumbing.Hash]memoObject{}, 0, map[plumbing.Hash]bool{}
}

// Has reports whether the object is known to exist: read or written by
// this process.
func (m *Memo) Has(h plumbing.Hash) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.present[h]
}

// unmarkPresent drops objects from what writers take as stored: they are
// in a pack no ref may reach, which git may repack away (see HeldPacks).
// They stay readable from the memo.
func (m *Memo) unmarkPresent(hs []plumbing.Hash) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, h := range hs {
		delete(m.present, h)
	}
}

func (m *Memo) markPresent(h plumbing.Hash) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.notePresent(h)
}

// notePresent records h as existing; m.mu is held.
func (m *Memo) notePresent(h plumbing.Hash) {
	if len(m.present) >= m.presentLimit {
		m.present = map[plumbing.Hash]bool{}
	}
	m.present[h] = true
}

// rawObject returns an object's type and content: from the memo, else from
// its loose file, else from a pack.
//
// git gc and git repack move objects while we read: a loose object goes
// into a new pack, and the old packs are deleted. At every moment the
// object is somewhere, but the packs are listed once, so a read that
// missed (or found its pack deleted) looks again, from the loose file on,
// once the packs have changed.
func (db *DB) rawObject(h plumbing.Hash) (memoObject, error) {
	m := db.memo
	if o, ok := m.object(h); ok {
		return o, nil
	}
	var o memoObject
	var err error
	for moves := 0; ; moves++ {
		if o, err = db.readLoose(h); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		if o, err = db.readPacked(h); err == nil || moves == packMovesFollowed {
			break
		}
		if !packGone(err) && !db.packsMoved() {
			break
		}
		if packGone(err) {
			// Deleted after its index was read (git repack unlinks the
			// .pack before the .idx, so the listing may not show it yet).
			db.packMu.Lock()
			db.dropDirectPacks()
			db.packMu.Unlock()
		}
	}
	if err != nil {
		return memoObject{}, err
	}
	m.putObject(h, o)
	return o, nil
}

// packGone tells a read that failed because the pack file it read went.
func packGone(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && errors.Is(err, fs.ErrNotExist) && strings.HasSuffix(pe.Path, ".pack")
}

// packMovesFollowed bounds the reads of one object: each read after the
// first follows a change of the packs, and one is enough unless git
// repacks again meanwhile.
const packMovesFollowed = 5

// ErrMissingObject: the object is in no object directory (fs.ErrNotExist, for
// callers that tell a missing object from a damaged one). A type of its own
// rather than fmt.Errorf, which would run at every start of the program.
var ErrMissingObject error = missingObject{}

type missingObject struct{}

func (missingObject) Error() string { return "object not found: " + fs.ErrNotExist.Error() }
func (missingObject) Unwrap() error { return fs.ErrNotExist }

func (db *DB) readPacked(h plumbing.Hash) (memoObject, error) {
	db.packMu.Lock()
	o, err := db.readDirect(h, 0)
	foreign := db.foreign
	db.packMu.Unlock()
	if !errors.Is(err, errNotInPacks) {
		return o, err
	}
	if !foreign {
		return memoObject{}, ErrMissingObject
	}
	return db.catFile(h)
}

// catFile asks git for an object in a pack whose index this package does
// not read (version 1, written by gits before 2007): rare enough that a
// process for each such object costs nothing in practice.
func (db *DB) catFile(h plumbing.Hash) (memoObject, error) {
	ctx := context.Background()
	typ, err := db.git.Line(ctx, "cat-file", "-t", h.String())
	if err != nil {
		return memoObject{}, ErrMissingObject
	}
	t, err := plumbing.ParseObjectType(typ)
	if err != nil {
		return memoObject{}, fmt.Errorf("object %s: %w", h, err)
	}
	data, err := db.git.Run(ctx, "cat-file", typ, h.String())
	if err != nil {
		return memoObject{}, fmt.Errorf("object %s: %w", h, err)
	}
	return memoObject{typ: t, data: data}, nil
}

// packsMoved reports whether the packs (this repository's and its
// alternates') differ from those last listed, and if so forgets them, so
// that the next read lists them again. The packs were unknown before the
// first call, which therefore reports a change when there are any.
func (db *DB) packsMoved() bool {
	names := db.packNames()
	db.packMu.Lock()
	defer db.packMu.Unlock()
	if db.packsLoaded && names == db.directSeen {
		return false
	}
	db.dropDirectPacks()
	return true
}

// objectDirs are the repository's object directory and its alternates'.
func (db *DB) objectDirs() []string {
	return append([]string{filepath.Join(db.commonDir, "objects")}, db.alternates()...)
}

// alternates are the object directories objects/info/alternates names,
// read once: git does not change them while a command runs.
func (db *DB) alternates() []string {
	db.altOnce.Do(func() {
		alt, err := os.ReadFile(filepath.Join(db.commonDir, "objects", "info", "alternates"))
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(alt), "\n") {
			if line = strings.TrimSpace(line); line != "" && line[0] != '#' {
				if !filepath.IsAbs(line) {
					line = filepath.Join(db.commonDir, "objects", line)
				}
				db.altDirs = append(db.altDirs, line)
			}
		}
	})
	return db.altDirs
}

// packNames lists the pack files, one name a line: a pack's name is the
// hash of its content, so equal lists are equal packs.
func (db *DB) packNames() string {
	var b strings.Builder
	for _, d := range db.objectDirs() {
		es, _ := os.ReadDir(filepath.Join(d, "pack"))
		b.WriteString(d)
		b.WriteByte('\n')
		for _, e := range es {
			if strings.HasSuffix(e.Name(), ".pack") || strings.HasSuffix(e.Name(), ".idx") {
				b.WriteString(e.Name())
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

var zlibReaders sync.Pool

func (db *DB) loosePath(h plumbing.Hash) string {
	hex := h.String()
	return filepath.Join(db.commonDir, "objects", hex[:2], hex[2:])
}

func (db *DB) readLoose(h plumbing.Hash) (memoObject, error) {
	raw, err := os.ReadFile(db.loosePath(h))
	if errors.Is(err, fs.ErrNotExist) {
		hex := h.String()
		for _, d := range db.alternates() {
			if raw, err = os.ReadFile(filepath.Join(d, hex[:2], hex[2:])); !errors.Is(err, fs.ErrNotExist) {
				break
			}
		}
	}
	if err != nil {
		return memoObject{}, err
	}
	var zr io.ReadCloser
	if v := zlibReaders.Get(); v != nil {
		zr = v.(io.ReadCloser)
		err = zr.(zlib.Resetter).Reset(bytes.NewReader(raw), nil)
	} else {
		zr, err = zlib.NewReader(bytes.NewReader(raw))
	}
	if err != nil {
		return memoObject{}, fmt.Errorf("object %s: %w", h, err)
	}
	defer zlibReaders.Put(zr)
	data, err := io.ReadAll(zr)
	if err != nil {
		return memoObject{}, fmt.Errorf("object %s: %w", h, err)
	}
	header, body, ok := bytes.Cut(data, []byte{0})
	typ, size, ok2 := bytes.Cut(header, []byte{' '})
	n, err := strconv.Atoi(string(size))
	if !ok || !ok2 || err != nil || n != len(body) {
		return memoObject{}, fmt.Errorf("object %s: bad loose object header", h)
	}
	t, err := plumbing.ParseObjectType(string(typ))
	if err != nil {
		return memoObject{}, fmt.Errorf("object %s: %w", h, err)
	}
	return memoObject{typ: t, data: body}, nil
}

// Has reports whether the object is in the repository.
func (db *DB) Has(h plumbing.Hash) bool {
	if db.hasLoose(h) {
		return true
	}
	db.packMu.Lock()
	found := db.hasDirect(h)
	db.packMu.Unlock()
	if found {
		db.memo.markPresent(h)
		return true
	}
	// Not in the packs last listed: they may have moved, or the object
	// is loose in an alternate.
	_, err := db.rawObject(h)
	return err == nil
}

// hasLoose reports whether the object is known to this process or stored
// loose. Writers ask only this: nearly every object they write is new, and
// looking for it in every pack first would cost more than the rare loose
// copy of a packed object, which harms nothing (git gc drops it).
func (db *DB) hasLoose(h plumbing.Hash) bool {
	m := db.memo
	if m.Has(h) {
		return true
	}
	if fi, err := os.Lstat(db.loosePath(h)); err == nil {
		// git prune deletes unreachable loose objects by age; one that
		// is old and about to become reachable again is made new, as git
		// does when it reuses one.
		if time.Since(fi.ModTime()) > time.Hour {
			now := time.Now()
			os.Chtimes(db.loosePath(h), now, now)
		}
		m.markPresent(h)
		return true
	}
	return false
}

// zlibWriters are reused: a new zlib writer allocates over half a megabyte,
// which cost more than the rest of writing a small object.
var zlibWriters = sync.Pool{New: func() any {
	w, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	return w
}}

// smallObject is the size below which a loose object is stored, not
// compressed (zlib level 0, which every git reads): a loose object takes
// a whole file system block whatever its size, so compressing one smaller
// than a block saves no space, only time.
const smallObject = 4096

var zlibStored = sync.Pool{New: func() any {
	w, _ := zlib.NewWriterLevel(nil, zlib.NoCompression)
	return w
}}

var tmpSeq atomic.Uint64

// writeLoose writes an object as git does: zlib("<type> <size>\x00<content>")
// in objects/xx/yyyy, read-only, through a temporary file renamed into
// place. Compressed in memory first (at git's default for loose objects,
// level 1, unless small): one write, and four system calls in all when the
// fan-out directory exists. The object is checked once the update that
// needs it is made (ConfirmWritten).
func (db *DB) writeLoose(h plumbing.Hash, typ plumbing.ObjectType, data []byte) error {
	raw, err := looseBytes(typ, data)
	if err != nil {
		return err
	}
	if err := db.placeLoose(db.loosePath(h), raw); err != nil {
		return err
	}
	m := db.memo
	m.putObject(h, memoObject{typ: typ, data: data})
	m.noteWritten(Object{Hash: h, Type: typ, Data: data})
	return nil
}

// looseBytes is an object as a loose file holds it.
func looseBytes(typ plumbing.ObjectType, data []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(data) + 64)
	pool := &zlibWriters
	if len(data) < smallObject {
		pool = &zlibStored
	}
	zw := pool.Get().(*zlib.Writer)
	zw.Reset(&buf)
	fmt.Fprintf(zw, "%s %d\x00", typ, len(data))
	zw.Write(data)
	err := zw.Close()
	pool.Put(zw)
	return buf.Bytes(), err
}

// placeLoose puts a loose object's bytes at final.
func (db *DB) placeLoose(final string, raw []byte) error {
	var err error
	// git prune deletes the tmp_obj_ files older than its expiry, which
	// under --prune=now is every one: the write is then made again.
	for attempt := 0; attempt < 5; attempt++ {
		if err = placeLooseOnce(final, raw); !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	return err
}

func placeLooseOnce(final string, raw []byte) error {
	dir := filepath.Dir(final)
	tmp := filepath.Join(dir, fmt.Sprintf("tmp_obj_%d_%d", os.Getpid(), tmpSeq.Add(1)))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	// git prune removes the fan-out directories it empties, possibly
	// between our mkdir and our create; the file, once created, keeps the
	// directory.
	// (MkdirAll's "file exists" is the same race: made by another, then
	// removed again before it looked.)
	for attempt := 0; (errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrExist)) && attempt < 5; attempt++ {
		if err = os.MkdirAll(dir, 0o755); err == nil {
			f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
		}
	}
	if err != nil {
		return err
	}
	_, err = f.Write(raw)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		os.Remove(tmp)
		if errors.Is(err, syscall.EEXIST) {
			return nil
		}
		return err
	}
	return nil
}
