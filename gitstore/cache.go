package gitstore

import (
	"bytes"
	"encoding/gob"
	"os"
	"path/filepath"

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
