package gitstore

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/state"
)

// The task cache makes full reads (status, next, claim of the best task)
// cheap at 10,000 tasks: decoding one gob file instead of inflating and
// parsing 10,000 loose objects. Entries are keyed by the hash of the shard
// tree they were read from, so the cache is never stale — a shard that
// changed has another hash and is read again from git (Gerrit caches NoteDb
// the same way, by the ref's tip). Losing or corrupting the file only costs
// time.

const cacheFormat = 1

type cachedShard struct {
	Hash  plumbing.Hash
	Tasks []*state.Task
}

type taskCache struct {
	Format int
	Shards map[string]cachedShard
}

func (s *Store) cachePath(feature string) string {
	return filepath.Join(s.ZergDir(), "cache", feature+".gob")
}

func (s *Store) loadCache(feature string) *taskCache {
	c := &taskCache{Format: cacheFormat, Shards: map[string]cachedShard{}}
	b, err := os.ReadFile(s.cachePath(feature))
	if err != nil {
		return c
	}
	var got taskCache
	if gob.NewDecoder(bytes.NewReader(b)).Decode(&got) != nil || got.Format != cacheFormat || got.Shards == nil {
		return c
	}
	return &got
}

func (s *Store) saveCache(feature string, c *taskCache) {
	var buf bytes.Buffer
	if gob.NewEncoder(&buf).Encode(c) != nil {
		return
	}
	// Best effort: a cache that cannot be written is only a slower read.
	_ = writeFileAtomic(s.cachePath(feature), buf.Bytes())
}

// loadAllShards reads every shard of the feature into the transaction,
// through the cache.
func (tx *Tx) loadAllShards() error {
	if tx.allLoaded {
		return nil
	}
	if err := tx.loadTasksTree(); err != nil {
		return err
	}
	cache := tx.s.loadCache(tx.feature)
	changed := false
	seen := map[string]bool{}
	for name, te := range tx.tasksTree {
		seen[name] = true
		if _, ok := tx.shards[name]; ok {
			continue // already read (and perhaps changed) in this transaction
		}
		sh := &shard{hash: te.Hash, tasks: map[string]*state.Task{}, dirty: map[string]bool{}}
		if cs, ok := cache.Shards[name]; ok && cs.Hash == te.Hash {
			// The shard's tree is read only if the transaction writes it.
			for _, task := range cs.Tasks {
				sh.tasks[task.ID()] = task
			}
			sh.complete = true
		} else {
			if err := tx.s.loadShardTree(sh); err != nil {
				return err
			}
			cs := cachedShard{Hash: te.Hash}
			for id, e := range sh.e {
				var task state.Task
				if err := tx.s.readJSON(e.Hash, &task); err != nil {
					return err
				}
				sh.tasks[id] = &task
				cs.Tasks = append(cs.Tasks, &task)
			}
			cache.Shards[name] = cs
			sh.complete = true
			changed = true
		}
		tx.shards[name] = sh
	}
	for name := range cache.Shards {
		if !seen[name] {
			delete(cache.Shards, name)
			changed = true
		}
	}
	if changed {
		tx.s.saveCache(tx.feature, cache)
	}
	tx.allLoaded = true
	return nil
}

// Locks and leases are read by every transition and every hook: one blob
// per lock or lease. They are cached by blob hash — content-addressed, so
// never stale — and a transition that changed one lock reads one blob, not
// all of them.

type blobCache[T any] struct {
	Format int                 `json:"format"`
	Blobs  map[plumbing.Hash]T `json:"blobs"`
}

// decodeEntries decodes the JSON blob of every entry of tree, through the
// cache file name.
func decodeEntries[T any](s *Store, name string, tree plumbing.Hash) (map[string]T, error) {
	t, err := s.readTree(tree)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(s.ZergDir(), "cache", name)
	var c blobCache[T]
	if b, err := os.ReadFile(path); err != nil || json.Unmarshal(b, &c) != nil || c.Format != cacheFormat {
		c = blobCache[T]{Format: cacheFormat}
	}
	if c.Blobs == nil {
		c.Blobs = map[plumbing.Hash]T{}
	}
	out := make(map[string]T, len(t.Entries))
	used := make(map[plumbing.Hash]bool, len(t.Entries))
	changed := false
	for _, e := range t.Entries {
		v, ok := c.Blobs[e.Hash]
		if !ok {
			if err := s.readJSON(e.Hash, &v); err != nil {
				return nil, err
			}
			c.Blobs[e.Hash] = v
			changed = true
		}
		used[e.Hash] = true
		out[e.Name] = v
	}
	for h := range c.Blobs {
		if !used[h] {
			delete(c.Blobs, h)
			changed = true
		}
	}
	if changed {
		if b, err := json.Marshal(c); err == nil {
			_ = writeFileAtomic(path, b) // best effort, as for the task cache
		}
	}
	return out, nil
}

// LocksAt returns the locks of one commit of refs/zerg/locks, sorted by
// path, expired ones included.
func (s *Store) LocksAt(tip plumbing.Hash) ([]state.Lock, error) {
	if tip.IsZero() {
		return nil, nil
	}
	// A hook asks for the same tip again and again: one small file read
	// answers it, without reading the tree.
	snapshot := filepath.Join(s.ZergDir(), "cache", "locks-tip.json")
	var snap struct {
		Format int           `json:"format"`
		Tip    plumbing.Hash `json:"tip"`
		Locks  []state.Lock  `json:"locks"`
	}
	if b, err := os.ReadFile(snapshot); err == nil && json.Unmarshal(b, &snap) == nil && snap.Format == cacheFormat && snap.Tip == tip {
		return snap.Locks, nil
	}
	locks, err := s.locksAt(tip)
	if err == nil {
		snap.Format, snap.Tip, snap.Locks = cacheFormat, tip, locks
		if b, err := json.Marshal(snap); err == nil {
			_ = writeFileAtomic(snapshot, b)
		}
	}
	return locks, err
}

func (s *Store) locksAt(tip plumbing.Hash) ([]state.Lock, error) {
	c, err := s.readCommit(tip)
	if err != nil {
		return nil, err
	}
	m, err := decodeEntries[state.Lock](s, "locks.json", c.TreeHash)
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
