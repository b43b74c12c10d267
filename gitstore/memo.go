package gitstore

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/json"
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

	"github.com/git-zerg/git-zerg/state"
)

// A long-lived process (a rush makes hundreds of transitions) would read the
// same objects again and again: the tip it just wrote, the shards it did not
// change, the locks and leases. The memo keeps, per repository and for the
// whole process, the objects read or written and what their state blobs
// decode to. Everything in it is keyed by object hash, so it can never be
// stale; every Store of the process's Repo shares it, and it is safe for
// concurrent use.
type memo struct {
	mu      sync.Mutex
	objs    map[plumbing.Hash]memoObject
	size    int
	present map[plumbing.Hash]bool
	// Decoded state, never changed once stored: handed out as copies.
	tasks  map[plumbing.Hash]*state.Task   // task blob -> task
	shards map[plumbing.Hash][]*state.Task // shard tree -> its tasks
	// written holds shards a transaction wrote, their new tasks still as
	// the bytes written: a plan writes every task of the feature, and
	// most processes end before reading any of them back.
	written map[plumbing.Hash]writtenShard
	values  map[plumbing.Hash]any // lock and lease blobs, task indexes by tasks tree
	// indexes is the latest index of each feature, to bring forward.
	indexes map[string]*Index

	packed *packedRefs
	// unconfirmed are the objects written loose since the last update
	// acknowledged, for it to check (objects.go).
	unconfirmed []batchObject
	// checked is how far each state ref's reflog was checked (repair.go).
	checked map[string]checked
}

type memoObject struct {
	typ  plumbing.ObjectType
	data []byte
}

// memoLimit bounds the bytes of objects kept; past it the memo starts over
// (it only saves time).
var memoLimit = 64 << 20 // a variable for tests

func (s *Store) memo() *memo { return s.repo.memo }

func newMemo() *memo {
	m := &memo{checked: map[string]checked{}}
	m.reset()
	return m
}

func (m *memo) object(h plumbing.Hash) (memoObject, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objs[h]
	return o, ok
}

func (m *memo) putObject(h plumbing.Hash, o memoObject) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objs[h]; ok {
		return
	}
	if m.size+len(o.data) > memoLimit {
		m.reset()
	}
	m.objs[h] = o
	m.size += len(o.data)
	m.notePresent(h)
}

// reset forgets everything: the memo only saves time, and a long rush must
// not grow it without end.
func (m *memo) reset() {
	m.objs, m.size, m.present = map[plumbing.Hash]memoObject{}, 0, map[plumbing.Hash]bool{}
	m.tasks, m.shards, m.values = map[plumbing.Hash]*state.Task{}, map[plumbing.Hash][]*state.Task{}, map[plumbing.Hash]any{}
	m.written = map[plumbing.Hash]writtenShard{}
}

// presentLimit bounds the hashes known to exist (20 bytes and a map entry
// each) for the same reason.
var presentLimit = 1 << 20

func (m *memo) has(h plumbing.Hash) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.present[h]
}

// unmarkPresent drops objects from what writers take as stored: they are
// in a pack no ref may reach, which git may repack away (see heldPacks).
// They stay readable from the memo.
func (m *memo) unmarkPresent(hs []plumbing.Hash) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, h := range hs {
		delete(m.present, h)
	}
}

func (m *memo) markPresent(h plumbing.Hash) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.notePresent(h)
}

// notePresent records h as existing; m.mu is held.
func (m *memo) notePresent(h plumbing.Hash) {
	if len(m.present) >= presentLimit {
		m.present = map[plumbing.Hash]bool{}
	}
	m.present[h] = true
}

// copyTask gives a caller its own task: callers change the fields and
// append to (or edit) the history of what they get.
func copyTask(t *state.Task) *state.Task {
	c := *t
	c.History = append([]state.Event(nil), t.History...)
	return &c
}

func (m *memo) task(blob plumbing.Hash) (*state.Task, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[blob]
	if !ok {
		return nil, false
	}
	return copyTask(t), true
}

func (m *memo) putTask(blob plumbing.Hash, t *state.Task) {
	c := copyTask(t)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tasks[blob] = c
}

// writtenShard is a shard as a transaction wrote it: the tasks it kept
// from the shard it was built from, and the others as encoded.
type writtenShard struct {
	kept  []*state.Task
	fresh map[string][]byte
}

func (m *memo) shard(tree plumbing.Hash) ([]*state.Task, bool) {
	m.mu.Lock()
	ts, ok := m.shards[tree]
	w, isWritten := m.written[tree]
	m.mu.Unlock()
	if !ok && isWritten {
		ts, ok = m.decodeWritten(tree, w)
	}
	if !ok {
		return nil, false
	}
	out := make([]*state.Task, len(ts))
	for i, t := range ts {
		out[i] = copyTask(t)
	}
	return out, true
}

// decodeWritten decodes a written shard's new tasks from the bytes written
// (what a reader would get, to the time zone) and keeps the result.
func (m *memo) decodeWritten(tree plumbing.Hash, w writtenShard) ([]*state.Task, bool) {
	out := make([]*state.Task, 0, len(w.kept)+len(w.fresh))
	out = append(out, w.kept...)
	for _, data := range w.fresh {
		var t state.Task
		if json.Unmarshal(data, &t) != nil {
			m.mu.Lock()
			delete(m.written, tree)
			m.mu.Unlock()
			return nil, false
		}
		out = append(out, &t)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.written[tree]; ok {
		delete(m.written, tree)
		m.shards[tree] = out
	}
	return out, true
}

// putWritten remembers a shard written: kept are the caller's to give.
func (m *memo) putWritten(tree plumbing.Hash, kept []*state.Task, fresh map[string][]byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.shards[tree]; ok {
		return
	}
	m.written[tree] = writtenShard{kept: kept, fresh: fresh}
}

func (m *memo) putShard(tree plumbing.Hash, tasks []*state.Task) {
	c := make([]*state.Task, len(tasks))
	for i, t := range tasks {
		c[i] = copyTask(t)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.shards[tree] = c
}

func (m *memo) value(blob plumbing.Hash) (any, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.values[blob]
	return v, ok
}

func (m *memo) putValue(blob plumbing.Hash, v any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.values[blob] = v
}

// rawObject returns an object's type and content: from the memo, else from
// its loose file, else from a pack.
//
// git gc and git repack move objects while we read: a loose object goes
// into a new pack, and the old packs are deleted. At every moment the
// object is somewhere, but the packs are listed once, so a read that
// missed (or found its pack deleted) looks again, from the loose file on,
// once the packs have changed.
func (s *Store) rawObject(h plumbing.Hash) (memoObject, error) {
	m := s.memo()
	if o, ok := m.object(h); ok {
		return o, nil
	}
	var o memoObject
	var err error
	for moves := 0; ; moves++ {
		if o, err = s.readLoose(h); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		if o, err = s.readPacked(h); err == nil || moves == packMovesFollowed {
			break
		}
		if !packGone(err) && !s.packsMoved() {
			break
		}
		if packGone(err) {
			// Deleted after its index was read (git repack unlinks the
			// .pack before the .idx, so the listing may not show it yet).
			s.packMu.Lock()
			s.dropDirectPacks()
			s.packMu.Unlock()
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
// callers that tell a missing object from a damaged one).
var ErrMissingObject = fmt.Errorf("object not found: %w", fs.ErrNotExist)

func (s *Store) readPacked(h plumbing.Hash) (memoObject, error) {
	s.packMu.Lock()
	o, err := s.readDirect(h, 0)
	foreign := s.foreign
	s.packMu.Unlock()
	if !errors.Is(err, errNotInPacks) {
		return o, err
	}
	if !foreign {
		return memoObject{}, ErrMissingObject
	}
	return s.catFile(h)
}

// catFile asks git for an object in a pack whose index this package does
// not read (version 1, written by gits before 2007): rare enough that a
// process for each such object costs nothing in practice.
func (s *Store) catFile(h plumbing.Hash) (memoObject, error) {
	ctx := context.Background()
	typ, err := s.git.Line(ctx, "cat-file", "-t", h.String())
	if err != nil {
		return memoObject{}, ErrMissingObject
	}
	t, err := plumbing.ParseObjectType(typ)
	if err != nil {
		return memoObject{}, fmt.Errorf("object %s: %w", h, err)
	}
	data, err := s.git.Run(ctx, "cat-file", typ, h.String())
	if err != nil {
		return memoObject{}, fmt.Errorf("object %s: %w", h, err)
	}
	return memoObject{typ: t, data: data}, nil
}

// packsMoved reports whether the packs (this repository's and its
// alternates') differ from those last listed, and if so forgets them, so
// that the next read lists them again. The packs were unknown before the
// first call, which therefore reports a change when there are any.
func (s *Store) packsMoved() bool {
	names := s.packNames()
	s.packMu.Lock()
	defer s.packMu.Unlock()
	if s.packsLoaded && names == s.directSeen {
		return false
	}
	s.dropDirectPacks()
	return true
}

// objectDirs are the repository's object directory and its alternates'.
func (s *Store) objectDirs() []string {
	return append([]string{filepath.Join(s.CommonDir, "objects")}, s.alternates()...)
}

// alternates are the object directories objects/info/alternates names,
// read once: git does not change them while a command runs.
func (s *Store) alternates() []string {
	s.altOnce.Do(func() {
		alt, err := os.ReadFile(filepath.Join(s.CommonDir, "objects", "info", "alternates"))
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(alt), "\n") {
			if line = strings.TrimSpace(line); line != "" && line[0] != '#' {
				if !filepath.IsAbs(line) {
					line = filepath.Join(s.CommonDir, "objects", line)
				}
				s.altDirs = append(s.altDirs, line)
			}
		}
	})
	return s.altDirs
}

// packNames lists the pack files, one name a line: a pack's name is the
// hash of its content, so equal lists are equal packs.
func (s *Store) packNames() string {
	var b strings.Builder
	for _, d := range s.objectDirs() {
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

func (s *Store) loosePath(h plumbing.Hash) string {
	hex := h.String()
	return filepath.Join(s.CommonDir, "objects", hex[:2], hex[2:])
}

func (s *Store) readLoose(h plumbing.Hash) (memoObject, error) {
	raw, err := os.ReadFile(s.loosePath(h))
	if errors.Is(err, fs.ErrNotExist) {
		hex := h.String()
		for _, d := range s.alternates() {
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

// hasObject reports whether the object is in the repository.
func (s *Store) hasObject(h plumbing.Hash) bool {
	if s.hasLoose(h) {
		return true
	}
	s.packMu.Lock()
	found := s.hasDirect(h)
	s.packMu.Unlock()
	if found {
		s.memo().markPresent(h)
		return true
	}
	// Not in the packs last listed: they may have moved, or the object
	// is loose in an alternate.
	_, err := s.rawObject(h)
	return err == nil
}

// hasLoose reports whether the object is known to this process or stored
// loose. Writers ask only this: nearly every object they write is new, and
// looking for it in every pack first would cost more than the rare loose
// copy of a packed object, which harms nothing (git gc drops it).
func (s *Store) hasLoose(h plumbing.Hash) bool {
	m := s.memo()
	if m.has(h) {
		return true
	}
	if fi, err := os.Lstat(s.loosePath(h)); err == nil {
		// git prune deletes unreachable loose objects by age; one that
		// is old and about to become reachable again is made new, as git
		// does when it reuses one.
		if time.Since(fi.ModTime()) > time.Hour {
			now := time.Now()
			os.Chtimes(s.loosePath(h), now, now)
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

// A loose object takes a whole file system block whatever its size, so
// compressing one smaller than a block saves no space, only time: those
// are stored (zlib level 0, which every git reads).
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
// needs it is made (confirmWritten).
func (s *Store) writeLoose(h plumbing.Hash, typ plumbing.ObjectType, data []byte) error {
	raw, err := looseBytes(typ, data)
	if err != nil {
		return err
	}
	if err := s.placeLoose(s.loosePath(h), raw); err != nil {
		return err
	}
	m := s.memo()
	m.putObject(h, memoObject{typ: typ, data: data})
	m.noteWritten(batchObject{hash: h, typ: typ, data: data})
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
func (s *Store) placeLoose(final string, raw []byte) error {
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
