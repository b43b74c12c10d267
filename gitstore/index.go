package gitstore

import (
	"errors"
	"os"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitobj"
	"github.com/git-zerg/git-zerg/gitstore/odb"
	"github.com/git-zerg/git-zerg/gitstore/taskindex"
)

// The task index (gitstore/taskindex) answers "what is ready" and "how
// many in each state" without decoding every task. It is a local cache
// file, keyed like the task cache by the tasks tree it describes; this
// file reads and writes it, and brings it forward from the trees of a
// transaction.

// Index describes the tasks of one state of a feature (taskindex.Index).
type Index = taskindex.Index

// IndexEntry is what the index keeps of one task (taskindex.Entry).
type IndexEntry = taskindex.Entry

func (s *Store) indexPath(feature string) string {
	return s.Layout().Index(feature)
}

// refreshMax is how many changed shards a reader brings forward before a
// full read (through the task cache) is cheaper.
const refreshMax = 64

// ErrIndexAfterChange: the transaction already changed a task, and the
// index describes the state it began from.
var ErrIndexAfterChange = errors.New("gitstore: task index asked for after a change")

// errIndexRebuild: the index cannot be brought forward, only rebuilt.
var errIndexRebuild = taskindex.ErrRebuild

// errIndexFile: the entries could not be encoded.
var errIndexFile = errors.New("index file unreadable")

// Index returns the index of the feature's tasks as this transaction
// found them. It describes the committed state, so it must be asked for
// before the transaction changes a task.
func (tx *Tx) Index() (*Index, error) {
	if tx.index != nil {
		return tx.index, nil
	}
	if tx.root == nil {
		return nil, ErrNotFound
	}
	if tx.tasksDirty() {
		return nil, ErrIndexAfterChange
	}
	if err := tx.loadTasksTree(); err != nil {
		return nil, err
	}
	key := tx.root["tasks"].Hash
	// Only the latest index of each feature is kept in memory: one per
	// state seen would grow a long-lived process by the size of the index
	// at every transition.
	old := tx.s.memoIndex(tx.feature)
	if old == nil {
		old = tx.s.readIndex(tx.feature)
	}
	var ix *Index
	var err error
	if old != nil {
		ix, err = tx.refreshIndex(old, key)
	}
	if old == nil || errors.Is(err, errIndexRebuild) {
		ix, err = tx.rebuildIndex(key)
		if err == nil && !tx.s.Persistent {
			tx.s.saveIndex(tx.feature, ix)
		}
	}
	if err != nil {
		return nil, err
	}
	switch {
	case ix.Changed() > rebaseIndexAfter:
		// Encoded again (and written): every reader converts each
		// changed entry, the file's candidates list then misses many.
		if re := ix.Encoded(); re != nil {
			ix = re
			if !tx.s.Persistent {
				tx.s.saveIndex(tx.feature, ix)
			}
		}
	case ix.Stale() > rewriteIndexAfter && !tx.s.Persistent:
		// The next reader brings forward only what changed after this.
		tx.s.saveIndexDelta(tx.feature, ix)
		ix.DeltaWritten()
	}
	tx.s.setMemoIndex(tx.feature, ix)
	tx.index = ix
	return ix, nil
}

// rewriteIndexAfter is how many shards an index may have brought forward
// before its delta is written again: each costs the next reader a shard
// tree, the delta a file creation.
const rewriteIndexAfter = 8

// refreshIndex brings old forward to the tasks tree key, reading again
// only the entries of the shards that changed.
func (tx *Tx) refreshIndex(old *Index, key plumbing.Hash) (*Index, error) {
	if old.Meta != tx.root["feature.json"].Hash {
		return nil, errIndexRebuild // another plan: other levels, another order
	}
	if old.Tasks == key {
		return old, nil
	}
	var changed []string
	for name, te := range tx.tasksTree {
		if old.Shards[name] != te.Hash {
			changed = append(changed, name)
		}
	}
	for name := range old.Shards {
		if _, ok := tx.tasksTree[name]; !ok {
			return nil, errIndexRebuild
		}
	}
	if len(changed) > refreshMax {
		return nil, errIndexRebuild
	}
	return old.Forward(key, changed, func(name string) (plumbing.Hash, []gitobj.TreeEntry, error) {
		te := tx.tasksTree[name]
		t, err := tx.s.readTree(te.Hash)
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		return te.Hash, t.Entries, nil
	}, tx.s.readTask)
}

// rebuildIndex reads every task (through the task cache).
func (tx *Tx) rebuildIndex(key plumbing.Hash) (*Index, error) {
	tasks, err := tx.Tasks()
	if err != nil {
		return nil, err
	}
	shards := make(map[string]plumbing.Hash, len(tx.tasksTree))
	for name, te := range tx.tasksTree {
		shards[name] = te.Hash
		// Each entry names its blob, so that bringing the index forward
		// reads only the tasks that changed: the shard trees cost one
		// read each, once per plan.
		if sh := tx.shards[name]; sh != nil {
			if err := tx.s.loadShardTree(sh); err != nil {
				return nil, err
			}
		}
	}
	entries := make([]IndexEntry, 0, len(tasks))
	for _, t := range tasks {
		entries = append(entries, taskindex.EntryOf(t, tx.shards[shardOf(t.ID())].e[t.ID()].Hash))
	}
	ix := taskindex.Build(key, tx.root["feature.json"].Hash, shards, entries)
	if ix == nil {
		return nil, errIndexFile
	}
	return ix, nil
}

func (s *Store) readIndex(feature string) *Index {
	// Every index of the file keeps it, and the file its mapping.
	f, err := odb.MapFile(s.indexPath(feature), taskindex.ParseFile)
	if err != nil || f == nil {
		return nil
	}
	return s.readIndexDelta(feature, f.Index())
}

// saveIndex writes the file, best effort: without it a reader only
// rebuilds. Only an index with nothing changed since its encoding is
// written as it is; any other is encoded again first.
func (s *Store) saveIndex(feature string, ix *Index) {
	if !ix.Pristine() {
		if ix = ix.Encoded(); ix == nil {
			return
		}
	}
	if s.writeCache(s.indexPath(feature), ix.Encoding()) == nil {
		os.Remove(s.indexDeltaPath(feature)) // made on the file replaced
	}
}

// WriteIndex writes the feature's index file from what this process holds:
// a long-lived process does so once at its end (as WriteCache).
func (s *Store) WriteIndex(feature string) {
	if ix := s.memoIndex(feature); ix != nil {
		s.saveIndex(feature, ix)
	}
}

// The memo keeps the latest index of each feature, from which the next
// transaction of the process brings it forward without reading the file.
func (s *Store) memoIndex(feature string) *Index {
	m := s.memo()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.indexes[feature]
}

func (s *Store) setMemoIndex(feature string, ix *Index) {
	m := s.memo()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.indexes == nil {
		m.indexes = map[string]*Index{}
	}
	m.indexes[feature] = ix
}
