package gitstore

import (
	"encoding/json"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitstore/odb"
	"github.com/git-zerg/git-zerg/state"
)

// memo is what a Repo's stores share in the process beside the objects
// (odb.Memo): what state blobs decode to, the latest index of each
// feature. The decoded state is keyed by object hash, so it can never be
// stale, and it starts over whenever the objects' memo does (see sync),
// which bounds both. It is safe for concurrent use.
type memo struct {
	objs *odb.Memo

	mu sync.Mutex
	// resets is objs.Resets() when the decoded state was last emptied.
	resets uint64
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
}

func (s *Store) memo() *memo { return s.repo.memo }

func newMemo() *memo {
	m := &memo{objs: odb.NewMemo()}
	m.reset()
	return m
}

// reset forgets the decoded state; m.mu is held.
func (m *memo) reset() {
	m.tasks, m.shards, m.values = map[plumbing.Hash]*state.Task{}, map[plumbing.Hash][]*state.Task{}, map[plumbing.Hash]any{}
	m.written = map[plumbing.Hash]writtenShard{}
}

// sync starts the decoded state over if the objects' memo did since it
// last looked; m.mu is held.
func (m *memo) sync() {
	if n := m.objs.Resets(); n != m.resets {
		m.resets = n
		m.reset()
	}
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
	m.sync()
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
	m.sync()
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
	m.sync()
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
			m.sync()
			delete(m.written, tree)
			m.mu.Unlock()
			return nil, false
		}
		out = append(out, &t)
	}
	m.mu.Lock()
	m.sync()
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
	m.sync()
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
	m.sync()
	defer m.mu.Unlock()
	m.shards[tree] = c
}

func (m *memo) value(blob plumbing.Hash) (any, bool) {
	m.mu.Lock()
	m.sync()
	defer m.mu.Unlock()
	v, ok := m.values[blob]
	return v, ok
}

func (m *memo) putValue(blob plumbing.Hash, v any) {
	m.mu.Lock()
	m.sync()
	defer m.mu.Unlock()
	m.values[blob] = v
}
