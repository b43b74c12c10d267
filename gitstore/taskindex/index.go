// Package taskindex is the task index of one state of a feature, in an
// encoding read in part (the index file, file.go) and a delta that brings
// it forward (delta.go). It decodes and encodes bytes and answers queries
// — no files, no git: gitstore keeps the files and reads the trees.
//
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
package taskindex

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"maps"
	"sort"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitobj"
	"github.com/git-zerg/git-zerg/state"
)

// Entry is what the index keeps of one task.
type Entry struct {
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

	f *File
	// over are the entries changed since f, by position; cand the
	// candidacy (see file.go) of the entries it may have changed for.
	over map[int32]Entry
	cand map[int32]bool
	// stale counts the shards read since f was encoded.
	stale int

	allOnce sync.Once
	all     []Entry
	idOnce  sync.Once
	byID    map[string]int32
}

// Len is the number of tasks.
func (ix *Index) Len() int { return ix.f.n }

func (ix *Index) entryAt(p int32) Entry {
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
func (ix *Index) All() []Entry {
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
func (ix *Index) Entry(id string) (*Entry, bool) {
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
func (ix *Index) Candidates(yield func(e *Entry, status func(id string) state.Status) bool) {
	// The changed candidates, sorted; the file's list, minus every entry
	// whose candidacy may have changed, is sorted already.
	var extra []int32
	for p, ok := range ix.cand {
		if ok {
			extra = append(extra, p)
		}
	}
	entries := make(map[int32]*Entry, len(extra)+4)
	entry := func(p int32) *Entry {
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

// ShardOf is the shard of a feature's tasks tree that holds task id (the
// first byte of sha1(id), in hex): gitstore lays the tree out by it, and
// the index file keeps each shard's positions in the tree's order by it.
func ShardOf(id string) string {
	sum := sha1.Sum([]byte(id))
	return hex.EncodeToString(sum[:1])
}

// EntryOf is the index entry of a task read from blob.
func EntryOf(t *state.Task, blob plumbing.Hash) Entry {
	e := Entry{ID: t.ID(), Blob: blob, Status: t.Status, Level: t.Level, Dependents: len(t.Dependents),
		Deps: t.Deps(), Attempts: t.Attempts, NotBefore: t.NotBefore.UTC(),
		Unapproved: t.NeedsApproval() && t.Approved == ""}
	if u := t.Spent(); u != (state.Usage{}) {
		e.Spent = &u
	}
	return e
}

// derive is ix brought forward to the tasks tree tasks, nothing changed
// yet: the same encoding, maps of its own.
func (ix *Index) derive(tasks plumbing.Hash) *Index {
	return &Index{Tasks: tasks, Meta: ix.Meta, Shards: maps.Clone(ix.Shards), f: ix.f,
		over: maps.Clone(ix.over), cand: maps.Clone(ix.cand), stale: ix.stale}
}

// set records entry p as changed. A task's candidacy changes with its own
// status and its dependencies': p's and its dependents' are judged again.
func (ix *Index) set(p int32, e Entry) {
	if ix.over == nil {
		ix.over = map[int32]Entry{}
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

func sameDeps(f *File, p int32, deps []string) bool {
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

// Encoded is ix encoded again, every change folded in; nil when it cannot
// be encoded.
func (ix *Index) Encoded() *Index { return ix.encodedFrom(ix.All()) }

// Build is the index of entries, in plan order, for the tasks tree tasks,
// the plan meta (feature.json) and the shards' trees; nil when they cannot
// be encoded.
func Build(tasks, meta plumbing.Hash, shards map[string]plumbing.Hash, entries []Entry) *Index {
	return (&Index{Tasks: tasks, Meta: meta, Shards: shards}).encodedFrom(entries)
}

// encodedFrom is an index of entries, for ix's tasks tree, plan and
// shards; it keeps entries as they are, so that a reader of every entry
// (status) does not convert them back. nil when they cannot be encoded.
func (ix *Index) encodedFrom(entries []Entry) *Index {
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

// ParseFile reads the index file data: an error when it is none or is
// damaged. The File and every Index of it (Index, Forward, WithDelta)
// read data in place and keep f: data must stay as long as f is
// reachable (odb.MapFile maps it for as long).
func ParseFile(data []byte) (*File, error) { return parseIndexFile(data) }

// Index is the index f encodes, nothing changed since.
func (f *File) Index() *Index { return indexOf(f) }

// Encoding is the index file ix was read from or made as. It is all of
// ix only when ix is Pristine.
func (ix *Index) Encoding() []byte { return ix.f.data }

// Pristine reports whether nothing changed in ix since its encoding: no
// entry, and no shard brought forward.
func (ix *Index) Pristine() bool { return ix.stale == 0 && len(ix.over) == 0 && len(ix.cand) == 0 }

// Changed is how many entries changed since ix's encoding.
func (ix *Index) Changed() int { return len(ix.over) }

// Stale is how many shards were brought forward since ix's encoding or
// its delta was last written (DeltaWritten).
func (ix *Index) Stale() int { return ix.stale }

// DeltaWritten records that ix's Delta was written: a reader of it brings
// forward only what changes after this.
func (ix *Index) DeltaWritten() { ix.stale = 0 }

// ErrRebuild: the index cannot be brought forward, only rebuilt.
var ErrRebuild = errors.New("index needs a rebuild")

// Forward is ix brought forward to the tasks tree tasks, in which the
// shards named in changed hold other trees: tree reads one (its hash and
// entries, in the tree's order), task the task of a blob that changed.
// ErrRebuild when the change is more than new states of the same tasks of
// the same plan (tasks added or removed, dependencies changed).
func (ix *Index) Forward(tasks plumbing.Hash, changed []string,
	tree func(shard string) (plumbing.Hash, []gitobj.TreeEntry, error),
	task func(blob plumbing.Hash) (*state.Task, error)) (*Index, error) {
	out := ix.derive(tasks)
	out.stale += len(changed)
	for _, name := range changed {
		h, entries, err := tree(name)
		if err != nil {
			return nil, err
		}
		raw, ok := out.f.shardPos[name]
		if !ok {
			return nil, ErrRebuild // a shard the plan had none in
		}
		pos := positions(string(raw))
		if len(entries) != len(pos) {
			return nil, ErrRebuild // a task added or removed: a new plan
		}
		for j, e := range entries {
			p := pos[j]
			if out.blobIs(p, e.Hash) {
				continue
			}
			if out.f.id(p) != e.Name {
				return nil, ErrRebuild
			}
			t, err := task(e.Hash)
			if err != nil {
				return nil, err
			}
			ne := EntryOf(t, e.Hash)
			if ne.ID != e.Name || !sameDeps(out.f, p, ne.Deps) {
				return nil, ErrRebuild // dependencies are the plan's: this is not
			}
			out.set(p, ne)
		}
		out.Shards[name] = h
	}
	return out, nil
}

// indexOf is the index of what f encodes, nothing changed since.
func indexOf(f *File) *Index {
	return &Index{Tasks: f.tasks, Meta: f.meta, Shards: f.shards, f: f}
}
