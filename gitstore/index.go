package gitstore

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

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

const indexFormat = 1

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

// Index describes the tasks of one state of a feature, in plan order.
type Index struct {
	Format  int
	Tasks   plumbing.Hash            // the tasks tree described
	Meta    plumbing.Hash            // feature.json: levels and plan order
	Shards  map[string]plumbing.Hash // shard name -> tree the entries of it came from
	Entries []IndexEntry             // plan order
	byID    map[string]int
}

// Entry returns the entry of task id.
func (ix *Index) Entry(id string) (*IndexEntry, bool) {
	i, ok := ix.byID[id]
	if !ok {
		return nil, false
	}
	return &ix.Entries[i], true
}

// Status is the status of task id, "" for an unknown id.
func (ix *Index) Status(id string) state.Status {
	if e, ok := ix.Entry(id); ok {
		return e.Status
	}
	return ""
}

// Counts is the number of tasks in each status, every status named.
func (ix *Index) Counts() map[string]int {
	out := make(map[string]int, len(state.Statuses))
	for _, st := range state.Statuses {
		out[string(st)] = 0
	}
	for i := range ix.Entries {
		out[string(ix.Entries[i].Status)]++
	}
	return out
}

// Len is the number of tasks.
func (ix *Index) Len() int { return len(ix.Entries) }

func (ix *Index) link() {
	ix.byID = make(map[string]int, len(ix.Entries))
	for i := range ix.Entries {
		ix.byID[ix.Entries[i].ID] = i
	}
}

func (ix *Index) clone() *Index {
	c := &Index{Format: ix.Format, Tasks: ix.Tasks, Meta: ix.Meta, Shards: make(map[string]plumbing.Hash, len(ix.Shards)),
		Entries: append([]IndexEntry(nil), ix.Entries...), byID: ix.byID}
	for k, v := range ix.Shards {
		c.Shards[k] = v
	}
	return c
}

// IndexEntryOf is the index entry of a task.
func IndexEntryOf(t *state.Task, blob plumbing.Hash) IndexEntry {
	e := IndexEntry{ID: t.ID(), Blob: blob, Status: t.Status, Level: t.Level, Dependents: len(t.Dependents),
		Deps: t.Deps(), Attempts: t.Attempts, NotBefore: t.NotBefore.UTC(),
		Unapproved: t.NeedsApproval() && t.Approved == ""}
	if u := t.Spent(); u != (state.Usage{}) {
		e.Spent = &u
	}
	return e
}

func (s *Store) indexPath(feature string) string {
	return filepath.Join(s.ZergDir(), "cache", feature+".index")
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
	changed := 0
	if old != nil {
		ix, changed, err = tx.refreshIndex(old, key)
	}
	if old == nil || errors.Is(err, errIndexRebuild) {
		ix, err = tx.rebuildIndex(key)
		changed = refreshMax
	}
	if err != nil {
		return nil, err
	}
	tx.s.setMemoIndex(tx.feature, ix)
	if !tx.s.Persistent && changed > rewriteAfter {
		tx.s.saveIndex(tx.feature, ix)
	}
	tx.index = ix
	return ix, nil
}

// refreshIndex brings old forward to the tasks tree key, reading again
// only the entries of the shards that changed.
func (tx *Tx) refreshIndex(old *Index, key plumbing.Hash) (*Index, int, error) {
	if old.Meta != tx.root["feature.json"].Hash {
		return nil, 0, errIndexRebuild // another plan: other levels, another order
	}
	if old.Tasks == key {
		return old, 0, nil
	}
	var changed []string
	for name, te := range tx.tasksTree {
		if old.Shards[name] != te.Hash {
			changed = append(changed, name)
		}
	}
	for name := range old.Shards {
		if _, ok := tx.tasksTree[name]; !ok {
			return nil, 0, errIndexRebuild
		}
	}
	if len(changed) > refreshMax {
		return nil, 0, errIndexRebuild
	}
	ix := old.clone()
	ix.Tasks = key
	perShard := map[string]int{}
	for i := range ix.Entries {
		perShard[shardOf(ix.Entries[i].ID)]++
	}
	for _, name := range changed {
		te := tx.tasksTree[name]
		t, err := tx.s.readTree(te.Hash)
		if err != nil {
			return nil, 0, err
		}
		if len(t.Entries) != perShard[name] {
			return nil, 0, errIndexRebuild // a task added or removed: a new plan
		}
		for _, e := range t.Entries {
			i, ok := ix.byID[e.Name]
			if !ok {
				return nil, 0, errIndexRebuild
			}
			if ix.Entries[i].Blob == e.Hash {
				continue
			}
			task, err := tx.s.readTask(e.Hash)
			if err != nil {
				return nil, 0, err
			}
			ix.Entries[i] = IndexEntryOf(task, e.Hash)
		}
		ix.Shards[name] = te.Hash
	}
	return ix, len(changed), nil
}

// rebuildIndex reads every task (through the task cache).
func (tx *Tx) rebuildIndex(key plumbing.Hash) (*Index, error) {
	tasks, err := tx.Tasks()
	if err != nil {
		return nil, err
	}
	ix := &Index{Format: indexFormat, Tasks: key, Meta: tx.root["feature.json"].Hash, Shards: make(map[string]plumbing.Hash, len(tx.tasksTree)),
		Entries: make([]IndexEntry, 0, len(tasks))}
	for name, te := range tx.tasksTree {
		ix.Shards[name] = te.Hash
		// Each entry names its blob, so that bringing the index forward
		// reads only the tasks that changed: the shard trees cost one
		// read each, once per plan.
		if sh := tx.shards[name]; sh != nil {
			if err := tx.s.loadShardTree(sh); err != nil {
				return nil, err
			}
		}
	}
	for _, t := range tasks {
		ix.Entries = append(ix.Entries, IndexEntryOf(t, tx.shards[shardOf(t.ID())].e[t.ID()].Hash))
	}
	ix.link()
	return ix, nil
}

func (s *Store) readIndex(feature string) *Index {
	b, err := os.ReadFile(s.indexPath(feature))
	if err != nil {
		return nil
	}
	ix, err := decodeIndex(b)
	if err != nil {
		return nil
	}
	return ix
}

// saveIndex writes the file, best effort: without it a reader only
// rebuilds.
func (s *Store) saveIndex(feature string, ix *Index) {
	if b := encodeIndex(ix); b != nil {
		_ = writeFileAtomic(s.indexPath(feature), b)
	}
}

// The file is lines of tab-separated fields, not gob: reading it is the
// whole cost of choosing a task, and gob spends most of it on reflection
// and on a time.Time decoder call per entry (25 ms at 10,000 tasks, against
// a few for this).
//
//	zerg-index <format> <tasks tree> <feature.json>
//	<shard> <tree>                      one line per shard, then an empty line
//	<id> <blob or nothing> <status> <level> <dependents> <attempts> <not before, unix ns> <unapproved 0|1> <deps, comma-separated> <cost> <input> <output> <turns>

// encodeIndex returns nil for state it cannot write: plans allow only
// ids without separators, but state fetched from elsewhere is not trusted
// to be a plan's.
func encodeIndex(ix *Index) []byte {
	for i := range ix.Entries {
		e := &ix.Entries[i]
		if strings.ContainsAny(e.ID, "\t\n,") || strings.ContainsAny(string(e.Status), "\t\n") {
			return nil
		}
		for _, d := range e.Deps {
			if strings.ContainsAny(d, "\t\n,") {
				return nil
			}
		}
	}
	b := make([]byte, 0, 64*len(ix.Entries)+64*len(ix.Shards)+128)
	b = fmt.Appendf(b, "zerg-index %d %s %s\n", indexFormat, ix.Tasks, ix.Meta)
	names := make([]string, 0, len(ix.Shards))
	for name := range ix.Shards {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		h := ix.Shards[name]
		b = append(b, name...)
		b = append(b, '\t')
		b = hex.AppendEncode(b, h[:])
		b = append(b, '\n')
	}
	b = append(b, '\n')
	for i := range ix.Entries {
		e := &ix.Entries[i]
		b = append(b, e.ID...)
		b = append(b, '\t')
		if !e.Blob.IsZero() {
			b = hex.AppendEncode(b, e.Blob[:])
		}
		b = append(b, '\t')
		b = append(b, e.Status...)
		b = append(b, '\t')
		b = strconv.AppendInt(b, int64(e.Level), 10)
		b = append(b, '\t')
		b = strconv.AppendInt(b, int64(e.Dependents), 10)
		b = append(b, '\t')
		b = strconv.AppendInt(b, int64(e.Attempts), 10)
		b = append(b, '\t')
		if !e.NotBefore.IsZero() {
			b = strconv.AppendInt(b, e.NotBefore.UnixNano(), 10)
		}
		b = append(b, '\t')
		if e.Unapproved {
			b = append(b, '1')
		} else {
			b = append(b, '0')
		}
		b = append(b, '\t')
		for j, d := range e.Deps {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, d...)
		}
		if e.Spent != nil {
			b = append(b, '\t')
			b = strconv.AppendFloat(b, e.Spent.CostUSD, 'g', -1, 64)
			b = append(b, '\t')
			b = strconv.AppendInt(b, e.Spent.InputTokens, 10)
			b = append(b, '\t')
			b = strconv.AppendInt(b, e.Spent.OutputTokens, 10)
			b = append(b, '\t')
			b = strconv.AppendInt(b, int64(e.Spent.Turns), 10)
		}
		b = append(b, '\n')
	}
	return b
}

var errIndexFile = errors.New("index file unreadable")

func decodeIndex(data []byte) (*Index, error) {
	// One string for the file: every id is a substring of it, not an
	// allocation of its own.
	s := string(data)
	line, s, ok := strings.Cut(s, "\n")
	head := strings.Fields(line)
	if !ok || len(head) != 4 || head[0] != "zerg-index" || head[1] != strconv.Itoa(indexFormat) {
		return nil, errIndexFile
	}
	ix := &Index{Format: indexFormat, Tasks: plumbing.NewHash(head[2]), Meta: plumbing.NewHash(head[3]),
		Shards: map[string]plumbing.Hash{}}
	for {
		if line, s, ok = strings.Cut(s, "\n"); !ok {
			return nil, errIndexFile
		}
		if line == "" {
			break
		}
		name, h, ok := strings.Cut(line, "\t")
		if !ok || len(h) != 40 {
			return nil, errIndexFile
		}
		ix.Shards[name] = plumbing.NewHash(h)
	}
	ix.Entries = make([]IndexEntry, 0, strings.Count(s, "\n"))
	var f [13]string
	for s != "" {
		if line, s, ok = strings.Cut(s, "\n"); !ok {
			return nil, errIndexFile
		}
		n := 0
		for more := true; more; n++ {
			if n == len(f) {
				return nil, errIndexFile
			}
			f[n], line, more = strings.Cut(line, "\t")
		}
		if n != 9 && n != 13 {
			return nil, errIndexFile
		}
		e := IndexEntry{ID: f[0], Status: statusOf(f[2]), Unapproved: f[7] == "1"}
		if f[1] != "" {
			if len(f[1]) != 40 {
				return nil, errIndexFile
			}
			if _, err := hex.Decode(e.Blob[:], []byte(f[1])); err != nil {
				return nil, errIndexFile
			}
		}
		var err error
		if e.Level, err = strconv.Atoi(f[3]); err != nil {
			return nil, errIndexFile
		}
		if e.Dependents, err = strconv.Atoi(f[4]); err != nil {
			return nil, errIndexFile
		}
		if e.Attempts, err = strconv.Atoi(f[5]); err != nil {
			return nil, errIndexFile
		}
		if f[6] != "" {
			ns, err := strconv.ParseInt(f[6], 10, 64)
			if err != nil {
				return nil, errIndexFile
			}
			e.NotBefore = time.Unix(0, ns).UTC()
		}
		if f[8] != "" {
			e.Deps = strings.Split(f[8], ",")
		}
		if n == 13 {
			var err1, err2, err3, err4 error
			e.Spent = &state.Usage{}
			e.Spent.CostUSD, err1 = strconv.ParseFloat(f[9], 64)
			e.Spent.InputTokens, err2 = strconv.ParseInt(f[10], 10, 64)
			e.Spent.OutputTokens, err3 = strconv.ParseInt(f[11], 10, 64)
			e.Spent.Turns, err4 = strconv.Atoi(f[12])
			if err := errors.Join(err1, err2, err3, err4); err != nil {
				return nil, errIndexFile
			}
		}
		ix.Entries = append(ix.Entries, e)
	}
	ix.link()
	return ix, nil
}

// statusOf returns the status named s, sharing the constant's string.
func statusOf(s string) state.Status {
	for _, st := range state.Statuses {
		if string(st) == s {
			return st
		}
	}
	return state.Status(s)
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
