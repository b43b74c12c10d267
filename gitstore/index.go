package gitstore

import (
	"errors"
	"maps"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitstore/odb"
	"github.com/git-zerg/git-zerg/state"
)

// The index answers "what is ready" and "how many in each state" without
// decoding every task: per task, only the facts readiness and the counts
// depend on, a few dozen bytes instead of a task's JSON and history.
//
// It is a local cache file, not a blob in the state tree. In the tree every
// writer would pay for it on every transition (one more object, and its
// correctness would have to be checked on every fetch: a forged index
// could hide ready tasks from other machines), and sync would have to merge
// it. As a cache it is keyed like the task cache: by the tasks tree it
// describes, with the shard tree and task blob each entry was read from,
// so it is never stale. A reader brings it forward by the shards that
// changed since (a transition changes one or two; their entries are read
// again, nothing else), and the file is rewritten only once that saves
// more than the file creation costs, since creating a file is the dominant
// cost of a transition on an ordinary disk. Missing, unreadable, or for
// another plan, it is rebuilt from a full read.
//
// The index only proposes: a claim still reads the task it chose and asks
// the claim gate inside its transaction.

// IndexEntry is what the index keeps of one task.
type IndexEntry struct {
	ID string
	// Blob is the task blob the entry was read from.
	Blob       plumbing.Hash
	Status     state.Status
	Level      int
	Dependents int
	Deps       []string
	Attempts   int
	NotBefore  time.Time
	// Unapproved: the task's risk needs an approval it does not have.
	Unapproved bool
	Spent      *state.Usage // nil when the agents reported nothing
}

// Index describes the tasks of one state of a feature, in plan order: an
// encoding of every entry (the file, or what a rebuild encoded), and the
// entries changed since. It is not changed once made: a transaction that
// brings it forward makes another, sharing the encoding.
type Index struct {
	Tasks  plumbing.Hash            // the tasks tree described
	Meta   plumbing.Hash            // feature.json: levels and plan order
	Shards map[string]plumbing.Hash // shard name -> tree the entries of it came from

	f *indexFile
	// over are the entries changed since f, by position; cand the
	// candidacy (see index_file.go) of the entries it may have changed for.
	over map[int32]IndexEntry
	cand map[int32]bool
	// stale counts the shards read since f was encoded.
	stale int

	allOnce sync.Once
	all     []IndexEntry
	idOnce  sync.Once
	byID    map[string]int32
}

// Len is the number of tasks.
func (ix *Index) Len() int { return ix.f.n }

func (ix *Index) entryAt(p int32) IndexEntry {
	if e, ok := ix.over[p]; ok {
		return e
	}
	return ix.f.entry(p)
}

func (ix *Index) statusAt(p int32) state.Status {
	if p < 0 || int(p) >= ix.f.n {
		return ""
	}
	if e, ok := ix.over[p]; ok {
		return e.Status
	}
	return ix.f.status(p)
}

// All returns every entry, in plan order. Callers must not change them.
func (ix *Index) All() []IndexEntry {
	ix.allOnce.Do(func() {
		ix.all = ix.f.all()
		for p, e := range ix.over {
			ix.all[p] = e
		}
	})
	return ix.all
}

func (ix *Index) position(id string) (int32, bool) {
	ix.idOnce.Do(func() {
		all := ix.All()
		ix.byID = make(map[string]int32, len(all))
		for p := range all {
			ix.byID[all[p].ID] = int32(p)
		}
	})
	p, ok := ix.byID[id]
	return p, ok
}

// Entry returns the entry of task id.
func (ix *Index) Entry(id string) (*IndexEntry, bool) {
	p, ok := ix.position(id)
	if !ok {
		return nil, false
	}
	return &ix.All()[p], true
}

// Status is the status of task id, "" for an unknown id.
func (ix *Index) Status(id string) state.Status {
	if p, ok := ix.position(id); ok {
		return ix.all[p].Status
	}
	return ""
}

// Counts is the number of tasks in each status, every status named.
func (ix *Index) Counts() map[string]int {
	out := make(map[string]int, len(state.Statuses))
	for _, st := range state.Statuses {
		out[string(st)] = 0
	}
	all := ix.All()
	for p := range all {
		out[string(all[p].Status)]++
	}
	return out
}

// Candidates calls yield with the tasks that are pending or failed with
// every dependency done, best first (gates.Better, then plan order), until
// it returns false; status answers for the entry's dependencies. The ready
// rule decides about the rest (attempts, backoff, approval): a claim looks
// at the first few, whatever the size of the feature.
func (ix *Index) Candidates(yield func(e *IndexEntry, status func(id string) state.Status) bool) {
	// The changed candidates, sorted; the file's list, minus every entry
	// whose candidacy may have changed, is sorted already.
	var extra []int32
	for p, ok := range ix.cand {
		if ok {
			extra = append(extra, p)
		}
	}
	entries := make(map[int32]*IndexEntry, len(extra)+4)
	entry := func(p int32) *IndexEntry {
		if e, ok := entries[p]; ok {
			return e
		}
		e := ix.entryAt(p)
		entries[p] = &e
		return &e
	}
	sort.Slice(extra, func(a, b int) bool { return better(entry(extra[a]), extra[a], entry(extra[b]), extra[b]) })
	// Read where it lies: the list names most of a large feature's tasks,
	// and a claim takes the first that is still a candidate.
	list := ix.f.cands
	next := func() (int32, bool) {
		for len(list) > 0 {
			v, n := int32(0), 0
			for n < len(list) && list[n] != ',' {
				c := list[n]
				if c < '0' || c > '9' || v > (1<<31-1)/10 {
					return 0, false
				}
				v = v*10 + int32(c-'0')
				n++
			}
			if n == 0 {
				return 0, false
			}
			list = list[min(n+1, len(list)):]
			if _, changed := ix.cand[v]; !changed {
				return v, true
			}
		}
		return 0, false
	}
	base, more := next()
	for more || len(extra) > 0 {
		var p int32
		if more && (len(extra) == 0 || better(entry(base), base, entry(extra[0]), extra[0])) {
			p = base
			base, more = next()
		} else {
			p, extra = extra[0], extra[1:]
		}
		e := entry(p)
		deps := ix.f.deps(p)
		status := func(id string) state.Status {
			for _, d := range deps {
				if d >= 0 && ix.f.id(d) == id {
					return ix.statusAt(d)
				}
			}
			return ix.Status(id)
		}
		if !yield(e, status) {
			return
		}
	}
}

// indexEntryOf is the index entry of a task.
func indexEntryOf(t *state.Task, blob plumbing.Hash) IndexEntry {
	e := IndexEntry{ID: t.ID(), Blob: blob, Status: t.Status, Level: t.Level, Dependents: len(t.Dependents),
		Deps: t.Deps(), Attempts: t.Attempts, NotBefore: t.NotBefore.UTC(),
		Unapproved: t.NeedsApproval() && t.Approved == ""}
	if u := t.Spent(); u != (state.Usage{}) {
		e.Spent = &u
	}
	return e
}

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
var errIndexRebuild = errors.New("index needs a rebuild")

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
	case len(ix.over) > rebaseIndexAfter:
		// Encoded again (and written): every reader converts each
		// changed entry, the file's candidates list then misses many.
		if re := ix.encoded(); re != nil {
			ix = re
			if !tx.s.Persistent {
				tx.s.saveIndex(tx.feature, ix)
			}
		}
	case ix.stale > rewriteIndexAfter && !tx.s.Persistent:
		// The next reader brings forward only what changed after this.
		tx.s.saveIndexDelta(tx.feature, ix)
		ix.stale = 0
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
	ix := old.derive(key)
	ix.stale += len(changed)
	for _, name := range changed {
		te := tx.tasksTree[name]
		t, err := tx.s.readTree(te.Hash)
		if err != nil {
			return nil, err
		}
		raw, ok := ix.f.shardPos[name]
		if !ok {
			return nil, errIndexRebuild // a shard the plan had none in
		}
		pos := positions(string(raw))
		if len(t.Entries) != len(pos) {
			return nil, errIndexRebuild // a task added or removed: a new plan
		}
		for j, e := range t.Entries {
			p := pos[j]
			if ix.blobIs(p, e.Hash) {
				continue
			}
			if ix.f.id(p) != e.Name {
				return nil, errIndexRebuild
			}
			task, err := tx.s.readTask(e.Hash)
			if err != nil {
				return nil, err
			}
			ne := indexEntryOf(task, e.Hash)
			if ne.ID != e.Name || !sameDeps(ix.f, p, ne.Deps) {
				return nil, errIndexRebuild // dependencies are the plan's: this is not
			}
			ix.set(p, ne)
		}
		ix.Shards[name] = te.Hash
	}
	return ix, nil
}

// derive is ix brought forward to the tasks tree tasks, nothing changed
// yet: the same encoding, maps of its own.
func (ix *Index) derive(tasks plumbing.Hash) *Index {
	return &Index{Tasks: tasks, Meta: ix.Meta, Shards: maps.Clone(ix.Shards), f: ix.f,
		over: maps.Clone(ix.over), cand: maps.Clone(ix.cand), stale: ix.stale}
}

// set records entry p as changed. A task's candidacy changes with its own
// status and its dependencies': p's and its dependents' are judged again.
func (ix *Index) set(p int32, e IndexEntry) {
	if ix.over == nil {
		ix.over = map[int32]IndexEntry{}
	}
	if ix.cand == nil {
		ix.cand = map[int32]bool{}
	}
	ix.over[p] = e
	for _, q := range append([]int32{p}, ix.f.dependents(p)...) {
		ix.cand[q] = candidate(ix.statusAt(q), ix.f.deps(q), ix.statusAt)
	}
}

// blobIs tells whether entry p was read from blob h.
func (ix *Index) blobIs(p int32, h plumbing.Hash) bool {
	if e, ok := ix.over[p]; ok {
		return e.Blob == h
	}
	return ix.f.blobIs(p, h)
}

func sameDeps(f *indexFile, p int32, deps []string) bool {
	ps := f.deps(p)
	if len(ps) != len(deps) {
		return false
	}
	for i, d := range ps {
		if f.id(d) != deps[i] {
			return false
		}
	}
	return true
}

// encoded is ix encoded again, every change folded in.
func (ix *Index) encoded() *Index { return ix.encodedFrom(ix.All()) }

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
		entries = append(entries, indexEntryOf(t, tx.shards[shardOf(t.ID())].e[t.ID()].Hash))
	}
	ix := (&Index{Tasks: key, Meta: tx.root["feature.json"].Hash, Shards: shards}).encodedFrom(entries)
	if ix == nil {
		return nil, errIndexFile
	}
	return ix, nil
}

// encodedFrom is an index of entries, for ix's tasks tree, plan and
// shards; it keeps entries as they are, so that a reader of every entry
// (status) does not convert them back. nil when they cannot be encoded.
func (ix *Index) encodedFrom(entries []IndexEntry) *Index {
	data := encodeIndexFile(ix.Tasks, ix.Meta, ix.Shards, entries)
	if data == nil {
		return nil
	}
	f, err := parseIndexFile(data)
	if err != nil {
		return nil
	}
	out := indexOf(f)
	out.allOnce.Do(func() { out.all = entries })
	return out
}

func (s *Store) readIndex(feature string) *Index {
	f, err := odb.MapFile(s.indexPath(feature), parseIndexFile)
	if err != nil || f == nil {
		return nil
	}
	return s.readIndexDelta(feature, indexOf(f))
}

// indexOf is the index of what f encodes, nothing changed since.
func indexOf(f *indexFile) *Index {
	return &Index{Tasks: f.tasks, Meta: f.meta, Shards: f.shards, f: f}
}

// saveIndex writes the file, best effort: without it a reader only
// rebuilds. Only an index with nothing changed since its encoding is
// written as it is; any other is encoded again first.
func (s *Store) saveIndex(feature string, ix *Index) {
	if ix.stale > 0 || len(ix.over) > 0 || len(ix.cand) > 0 {
		if ix = ix.encoded(); ix == nil {
			return
		}
	}
	if s.writeCache(s.indexPath(feature), ix.f.data) == nil {
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
