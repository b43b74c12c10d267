package gitstore

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitobj"
	"github.com/git-zerg/git-zerg/gitstore/codec"
	"github.com/git-zerg/git-zerg/state"
)

// The task cache makes full reads (status, next, claim of the best task)
// cheap at 10,000 tasks: decoding one file (codec.DecodeTaskCache) instead of
// inflating and parsing 10,000 loose objects. Entries are keyed by the
// hash of the shard tree they were read from, so the cache is never stale
// — a shard that changed has another hash and is read again from git
// (Gerrit caches NoteDb the same way, by the ref's tip). Losing or
// corrupting the file only costs time.

// The files of format 1 (codec.Format), encoding/gob's, named .gob, are
// removed when the cache is next rewritten.
type cachedShard = codec.Shard

type taskCache struct {
	codec.TaskCache
	// delta names the shards that came from the delta file.
	delta map[string]bool
}

func newTaskCache() *taskCache {
	return &taskCache{TaskCache: codec.TaskCache{Format: codec.Format, Shards: map[string]cachedShard{}}}
}

// A transition changes one or two of 256 shards, and rewriting the whole
// file for them (10,000 tasks) would cost more than the rest of a claim:
// changed shards go to a small delta file beside it instead, folded into
// the main file once it holds more than deltaMax shards.
const deltaMax = 32

func (s *Store) cachePath(feature string) string {
	return s.Layout().TaskCache(feature)
}

func (s *Store) deltaPath(feature string) string {
	return s.Layout().TaskCacheDelta(feature)
}

func readTaskCache(path string) (*taskCache, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	got, err := codec.DecodeTaskCache(b)
	if err != nil {
		return nil, false
	}
	return &taskCache{TaskCache: *got}, true
}

// loadCache reads the main file and the delta over it. Any mix of the two
// is right: every entry holds for the shard hash it names.
func (s *Store) loadCache(feature string) *taskCache {
	c, ok := readTaskCache(s.cachePath(feature))
	if !ok {
		c = newTaskCache()
	}
	c.delta = map[string]bool{}
	if d, ok := readTaskCache(s.deltaPath(feature)); ok {
		for name, cs := range d.Shards {
			c.Shards[name] = cs
			c.delta[name] = true
		}
	}
	return c
}

// saveCacheDelta records the shards named changed: in the delta file when
// that is enough, else by rewriting the main file.
func (s *Store) saveCacheDelta(feature string, c *taskCache, changed []string) {
	if c.delta == nil {
		c.delta = map[string]bool{}
	}
	for _, name := range changed {
		c.delta[name] = true
	}
	if _, err := os.Stat(s.cachePath(feature)); err != nil || len(c.delta) > deltaMax {
		s.saveCache(feature, c)
		return
	}
	d := newTaskCache()
	for name := range c.delta {
		if cs, ok := c.Shards[name]; ok {
			d.Shards[name] = cs
		}
	}
	b, err := codec.EncodeTaskCache(&d.TaskCache)
	if err != nil {
		return
	}
	_ = s.writeCache(s.deltaPath(feature), b)
}

// DropCache removes the feature's cache files (a deleted feature), the
// tasks status --json renders (package report) among them.
func (s *Store) DropCache(feature string) {
	s.dropLegacyCache(feature)
	l := s.Layout()
	for _, p := range []string{s.cachePath(feature), s.deltaPath(feature),
		l.WorkersCache(feature), s.indexPath(feature), s.indexDeltaPath(feature), l.TaskJSON(feature)} {
		os.Remove(p)
	}
}

// dropLegacyCache removes the files of cache format 1.
func (s *Store) dropLegacyCache(feature string) {
	for _, p := range s.Layout().LegacyCaches(feature) {
		os.Remove(p)
	}
}

// saveCache rewrites the main file with everything, and drops the delta.
func (s *Store) saveCache(feature string, c *taskCache) {
	b, err := codec.EncodeTaskCache(&c.TaskCache)
	if err != nil {
		return
	}
	// Best effort: a cache that cannot be written is only a slower read.
	if s.writeCache(s.cachePath(feature), b) == nil {
		os.Remove(s.deltaPath(feature))
		s.dropLegacyCache(feature)
	}
}

// loadAllShards reads every shard of the feature into the transaction:
// from the memo, else from the cache file, else from git.
func (tx *Tx) loadAllShards() error {
	if tx.allLoaded {
		return nil
	}
	if err := tx.loadTasksTree(); err != nil {
		return err
	}
	m := tx.s.memo()
	var names []string
	for name := range tx.tasksTree {
		if _, ok := tx.shards[name]; !ok { // else already read (and perhaps changed) in this transaction
			names = append(names, name)
		}
	}
	// Shards this process wrote are decoded from the bytes it wrote: all
	// of them after a plan, 15 µs a task, so shared out between the
	// processors.
	found := make([][]*state.Task, len(names))
	parallel(len(names), func(i int) error {
		found[i], _ = m.shard(tx.tasksTree[names[i]].Hash)
		return nil
	})
	var missing []string
	for i, name := range names {
		if found[i] != nil {
			tx.shards[name] = completeShard(tx.tasksTree[name].Hash, found[i])
			continue
		}
		missing = append(missing, name)
	}
	tx.allLoaded = true
	if len(missing) == 0 {
		return nil
	}
	cache := tx.s.loadCache(tx.feature)
	var changed []string
	pruned := false
	for _, name := range missing {
		te := tx.tasksTree[name]
		if cs, ok := cache.Shards[name]; ok && cs.Hash == te.Hash {
			// The shard's tree is read only if the transaction writes it.
			m.putShard(te.Hash, cs.Tasks)
			tx.shards[name] = completeShard(te.Hash, cs.Tasks)
			continue
		}
		sh := &shard{hash: te.Hash, tasks: map[string]*state.Task{}, dirty: map[string]bool{}}
		if err := tx.s.loadShardTree(sh); err != nil {
			tx.allLoaded = false
			return err
		}
		cs := cachedShard{Hash: te.Hash}
		for id, e := range sh.e {
			task, err := tx.s.readTask(e.Hash)
			if err != nil {
				tx.allLoaded = false
				return err
			}
			sh.tasks[id] = task
			cs.Tasks = append(cs.Tasks, task)
		}
		m.putShard(te.Hash, cs.Tasks)
		cache.Shards[name] = cs
		sh.complete = true
		changed = append(changed, name)
		tx.shards[name] = sh
	}
	for name := range cache.Shards {
		if _, ok := tx.tasksTree[name]; !ok {
			delete(cache.Shards, name)
			pruned = true
		}
	}
	// A long-lived process keeps the memo instead, and writes the file once
	// (WriteCache).
	switch {
	case tx.s.Persistent:
	case pruned:
		tx.s.saveCache(tx.feature, cache)
	case len(changed) > 0:
		tx.s.saveCacheDelta(tx.feature, cache, changed)
	}
	return nil
}

func completeShard(h plumbing.Hash, tasks []*state.Task) *shard {
	sh := &shard{hash: h, tasks: make(map[string]*state.Task, len(tasks)), dirty: map[string]bool{}, complete: true}
	for _, t := range tasks {
		sh.tasks[t.ID()] = t
	}
	return sh
}

// readTask decodes a task blob, through the memo.
func (s *Store) readTask(blob plumbing.Hash) (*state.Task, error) {
	m := s.memo()
	if t, ok := m.task(blob); ok {
		return t, nil
	}
	var t state.Task
	if err := s.readJSON(blob, &t); err != nil {
		return nil, err
	}
	m.putTask(blob, &t)
	return &t, nil
}

// memoShard remembers a shard written by a transaction, so that the next
// one reads nothing: the tasks it did not change are those of the shard it
// was built from, the others are decoded from the bytes written when first
// asked for.
func (s *Store) memoShard(old, tree plumbing.Hash, fresh map[string][]byte) {
	m := s.memo()
	var tasks []*state.Task
	if !old.IsZero() {
		var ok bool
		if tasks, ok = m.shard(old); !ok {
			return
		}
	}
	kept := make([]*state.Task, 0, len(tasks))
	for _, t := range tasks {
		if _, changed := fresh[t.ID()]; !changed {
			kept = append(kept, t)
		}
	}
	m.putWritten(tree, kept, fresh)
}

// WriteCache writes the feature's cache file from the memo: what a
// long-lived process does once at its end instead of after every
// transaction.
func (s *Store) WriteCache(feature string) error {
	tx, err := s.View(feature)
	if err != nil {
		return err
	}
	if err := tx.loadTasksTree(); err != nil {
		return err
	}
	c := newTaskCache()
	for name, te := range tx.tasksTree {
		tasks, ok := s.memo().shard(te.Hash)
		if !ok {
			continue // not read by this process: the next reader fills it in
		}
		c.Shards[name] = cachedShard{Hash: te.Hash, Tasks: tasks}
	}
	s.saveCache(feature, c)
	return nil
}

// Locks and leases are read by every transition and every hook: one blob
// per lock or lease. They are cached by blob hash — content-addressed, so
// never stale — and a transition that changed one lock reads one blob, not
// all of them.

// decodeEntries decodes the JSON blob of every entry of tree: from the
// memo, else from the cache file at path (encoded by ec), else from git.
func decodeEntries[T any](s *Store, path string, ec codec.Entry[T], tree plumbing.Hash) (map[string]T, error) {
	t, err := s.readTree(tree)
	if err != nil {
		return nil, err
	}
	m := s.memo()
	out := make(map[string]T, len(t.Entries))
	var missing []gitobj.TreeEntry
	for _, e := range t.Entries {
		if v, ok := m.value(e.Hash); ok {
			if tv, ok := v.(T); ok {
				out[e.Name] = tv
				continue
			}
		}
		missing = append(missing, e)
	}
	if len(missing) == 0 {
		return out, nil
	}
	var blobs map[plumbing.Hash]T
	if b, err := os.ReadFile(path); err == nil {
		blobs, _ = ec.DecodeBlobs(b)
	}
	if blobs == nil {
		blobs = map[plumbing.Hash]T{}
	}
	changed := false
	var fromGit []gitobj.TreeEntry
	for _, e := range missing {
		if _, ok := blobs[e.Hash]; !ok {
			fromGit = append(fromGit, e)
		}
	}
	if len(fromGit) > 0 {
		// Read and decoded on every processor: after many locks changed
		// (a level's claims, a sync), this is most of a hook.
		vs := make([]T, len(fromGit))
		const chunk = 16
		if err := parallel((len(fromGit)+chunk-1)/chunk, func(c int) error {
			for i := c * chunk; i < min((c+1)*chunk, len(fromGit)); i++ {
				if err := s.readJSON(fromGit[i].Hash, &vs[i]); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
		for i, e := range fromGit {
			blobs[e.Hash] = vs[i]
		}
		changed = true
	}
	for _, e := range missing {
		v := blobs[e.Hash]
		m.putValue(e.Hash, v)
		out[e.Name] = v
	}
	used := make(map[plumbing.Hash]bool, len(t.Entries))
	for _, e := range t.Entries {
		used[e.Hash] = true
		if _, ok := blobs[e.Hash]; !ok {
			blobs[e.Hash] = out[e.Name]
			changed = true
		}
	}
	for h := range blobs {
		if !used[h] {
			delete(blobs, h)
			changed = true
		}
	}
	// A file is rewritten only when it saves more than it costs: a
	// transition changes one or two blobs, and reading those from git is
	// cheaper than creating a new file with all of them.
	if changed && !s.Persistent && len(missing) > rewriteAfter {
		b, err := ec.EncodeBlobs(blobs)
		if err != nil {
			return nil, fmt.Errorf("cache %s: %w", filepath.Base(path), err) // a bug, not bad luck: say so
		}
		if s.writeCache(path, b) == nil { // best effort, as for the task cache
			os.Remove(path + ".json") // the file of cache format 1
		}
	}
	return out, nil
}

// rewriteAfter is how many blobs a cache file may lack before it is
// written again.
const rewriteAfter = 8

// LocksAt returns the locks of one commit of refs/zerg/locks, sorted by
// path, expired ones included.
func (s *Store) LocksAt(tip plumbing.Hash) ([]state.Lock, error) {
	if tip.IsZero() {
		return nil, nil
	}
	// A hook asks for the same tip again and again: one small file read
	// answers it, without reading the tree.
	snapshot := s.Layout().LocksTip()
	if b, err := os.ReadFile(snapshot); err == nil {
		if at, locks, err := codec.DecodeLocksTip(b); err == nil && at == tip {
			return locks, nil
		}
	}
	locks, err := s.locksAt(tip)
	if err == nil {
		if b, err := codec.EncodeLocksTip(tip, locks); err == nil && s.writeCache(snapshot, b) == nil {
			os.Remove(snapshot + ".json") // the file of cache format 1
		}
	}
	return locks, err
}

func (s *Store) locksAt(tip plumbing.Hash) ([]state.Lock, error) {
	c, err := s.readCommit(tip)
	if err != nil {
		return nil, err
	}
	m, err := decodeEntries(s, s.Layout().LocksCache(), codec.Locks, c.TreeHash)
	if err != nil {
		return nil, err
	}
	locks := make([]state.Lock, 0, len(m))
	for _, l := range m {
		locks = append(locks, l)
	}
	sort.Slice(locks, func(i, j int) bool { return locks[i].Path < locks[j].Path })
	return locks, nil
}
