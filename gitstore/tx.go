package gitstore

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitobj"
	"github.com/git-zerg/git-zerg/gitstore/codec"
	"github.com/git-zerg/git-zerg/gitstore/odb"
	"github.com/git-zerg/git-zerg/gitstore/refs"
	"github.com/git-zerg/git-zerg/gitstore/statemerge"
	"github.com/git-zerg/git-zerg/state"
)

// Tx is one attempt at a state change: reads are lazy and see the refs as
// they were when the attempt began; writes are buffered and land together,
// or not at all, when the attempt commits.
type Tx struct {
	s       *Store
	feature string

	featTip, locksTip plumbing.Hash
	root              entries // feature root; nil for a feature not planned yet
	tasksTree         entries
	shards            map[string]*shard
	clock             uint64

	meta      *state.Feature
	metaDirty bool

	workers      map[string]*state.Worker
	workersDirty bool
	// held collects the packs commit writes, for the update to release
	// when it is over.
	held *heldPacks
	// workersRead are the leases as read, with their blobs: a lease
	// unchanged at commit keeps its blob, not encoded again.
	workersRead map[string]readWorker

	locks      []state.Lock
	locksRead  bool
	locksDirty bool

	allLoaded bool
	index     *Index
	create    bool
	deleted   *plumbing.Hash // Delete's reason blob

	moved []refUpdate // what commit moved
	view  Lease       // what the arbiter held when this attempt began (Publisher)

	// extra refs moved in the same transaction (pins of verified work),
	// without a compare-and-swap: they only keep commits reachable.
	extra []refUpdate

	// also: refs moved on the arbiter only, in the transition's own push
	// (PushAlso); pushed says that push went through.
	also   []RefMove
	pushed bool
}

// Publisher is what every update of a store must reach before it counts
// (sync.arbiter: gitstore/remotes installs one with SetPublisher); without
// one an update is the local compare-and-swap alone. The transaction asks
// it, before each attempt, what to lease the update against, and hands it
// the attempt's moves to make instead of making them itself. It is how the
// sync layer above hooks into a transaction, which calls nothing of that
// layer. It is called from the goroutine of the store's transaction; one
// shared by several stores must be safe for concurrent use.
type Publisher interface {
	// Remote names where the moves go (the arbiter): transitions of one
	// process share a commit (UpdateTogether) only with those going to
	// the same place.
	Remote() string
	// Lease returns the values the attempt is leased against, caught up
	// with first when what this process knows of them is stale. An error
	// that is a lost race (refs.ErrRace) is no failure: the attempt goes
	// on with what Lease returned.
	Lease(ctx context.Context, feature string) (Lease, error)
	// Publish makes the moves of an attempt leased on l, with also, on
	// the arbiter and here, or nowhere: a lost race (refs.ErrRace) starts
	// the attempt over, ErrRemoteRefMoved tells the caller an also moved.
	Publish(ctx context.Context, feature string, l Lease, moves []refs.Update, also []RefMove) error
}

// Lease is what an arbiter held when an attempt began: the values its
// push is leased against (zero: none).
type Lease struct {
	Feature, Locks plumbing.Hash
}

// RefMove is a ref moved by compare-and-swap from Old ("" for none) to New.
type RefMove struct{ Ref, Old, New string }

// ErrRemoteRefMoved: a transaction's push carried a ref moved on the
// arbiter (PushAlso) and was refused. Nothing of it happened; the caller
// looks at the arbiter again rather than this update trying on its own.
var ErrRemoteRefMoved = errors.New("the arbiter's ref moved")

// PushAlso makes the push that takes this transaction to the arbiter move
// m.Ref there too, by compare-and-swap, atomically with the state: the
// level's tasks recorded done and the staging that holds their work reach
// the other hosts together, in one push instead of two. The local ref is
// the caller's to move. A refused push ends the update with
// ErrRemoteRefMoved; Pushed says whether the push went through (a
// transaction that changed nothing pushes nothing).
func (tx *Tx) PushAlso(m RefMove) { tx.also = append(tx.also, m) }

// Pushed reports whether this transaction reached the arbiter with the
// refs PushAlso gave it.
func (tx *Tx) Pushed() bool { return tx.pushed }

// SetRef moves another ref with the state, in the same transaction; an
// empty commit deletes it. Used for refs that keep work reachable.
func (tx *Tx) SetRef(name, commit string) {
	u := refUpdate{Name: name, Unchecked: true}
	if commit == "" {
		u.Delete = true
	} else {
		u.New = plumbing.NewHash(commit)
	}
	tx.extra = append(tx.extra, u)
}

type shard struct {
	hash plumbing.Hash // tree the shard was read from; zero for a new shard
	// e is nil until needed: a shard served from the cache holds all its
	// tasks (complete) and needs its tree only to be written.
	e        entries
	complete bool
	tasks    map[string]*state.Task
	dirty    map[string]bool
}

// Feature is the feature this transaction changes ("" for locks only).
func (tx *Tx) Feature() string { return tx.feature }

// Exists reports whether the feature is planned.
func (tx *Tx) Exists() bool { return tx.root != nil }

// Clock is the feature's Lamport clock before this transaction.
func (tx *Tx) Clock() uint64 { return tx.clock }

func (s *Store) begin(feature string) (*Tx, error) {
	tx := &Tx{s: s, feature: feature, shards: map[string]*shard{}}
	var err error
	if tx.locksTip, err = s.ReadRef(LocksRef); err != nil {
		return nil, err
	}
	if feature == "" {
		return tx, nil
	}
	if tx.featTip, err = s.ReadRef(FeatureRef(feature)); err != nil {
		return nil, err
	}
	if tx.featTip.IsZero() {
		return tx, nil
	}
	c, err := s.readCommit(tx.featTip)
	if err != nil {
		return nil, tx.damaged(err)
	}
	t, err := s.readTree(c.TreeHash)
	if err != nil {
		return nil, tx.damaged(err)
	}
	tx.root = entriesOf(t)
	if _, ok := tx.root[tombstone]; ok {
		// A deleted feature reads as absent; planning it again builds on
		// the tombstone, so the deletion stays in its history.
		tx.root = nil
		return tx, nil
	}
	if te, ok := tx.root["clock"]; ok {
		b, err := s.readBlob(te.Hash)
		if err != nil {
			return nil, tx.damaged(err)
		}
		tx.clock, _ = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	}
	return tx, nil
}

// Meta returns the feature's plan description.
func (tx *Tx) Meta() (*state.Feature, error) {
	if tx.meta != nil {
		return tx.meta, nil
	}
	if tx.root == nil {
		return nil, fmt.Errorf("feature %q: %w", tx.feature, ErrNotFound)
	}
	te, ok := tx.root["feature.json"]
	if !ok {
		return nil, fmt.Errorf("feature %q has no feature.json", tx.feature)
	}
	var f state.Feature
	if err := tx.s.readJSON(te.Hash, &f); err != nil {
		return nil, tx.damaged(err)
	}
	tx.meta = &f
	return tx.meta, nil
}

func (tx *Tx) loadTasksTree() error {
	if tx.tasksTree != nil {
		return nil
	}
	if tx.root == nil {
		tx.tasksTree = entries{}
		return nil
	}
	t, err := tx.s.readTree(tx.root["tasks"].Hash)
	if err != nil {
		return tx.damaged(err)
	}
	tx.tasksTree = entriesOf(t)
	return nil
}

func (tx *Tx) shard(name string) (*shard, error) {
	if sh, ok := tx.shards[name]; ok {
		return sh, nil
	}
	if err := tx.loadTasksTree(); err != nil {
		return nil, err
	}
	sh := &shard{tasks: map[string]*state.Task{}, dirty: map[string]bool{}}
	if te, ok := tx.tasksTree[name]; ok {
		sh.hash = te.Hash
	}
	if err := tx.s.loadShardTree(sh); err != nil {
		return nil, tx.damaged(err)
	}
	tx.shards[name] = sh
	return sh, nil
}

// Task returns the task with id; changes to it are kept only after Put.
func (tx *Tx) Task(id string) (*state.Task, error) {
	sh, err := tx.shard(shardOf(id))
	if err != nil {
		return nil, err
	}
	if t, ok := sh.tasks[id]; ok {
		return t, nil
	}
	if sh.complete {
		return nil, fmt.Errorf("task %q: %w", id, ErrNotFound)
	}
	if err := tx.s.loadShardTree(sh); err != nil {
		return nil, tx.damaged(err)
	}
	te, ok := sh.e[id]
	if !ok {
		return nil, fmt.Errorf("task %q: %w", id, ErrNotFound)
	}
	t, err := tx.s.readTask(te.Hash)
	if err != nil {
		return nil, tx.damaged(err)
	}
	sh.tasks[id] = t
	return t, nil
}

// loadShardTree reads the shard's tree entries if they are not read yet.
func (s *Store) loadShardTree(sh *shard) error {
	if sh.e != nil {
		return nil
	}
	if sh.hash.IsZero() {
		sh.e = entries{}
		return nil
	}
	t, err := s.readTree(sh.hash)
	if err != nil {
		return err
	}
	sh.e = entriesOf(t)
	return nil
}

// Tasks returns every task of the feature in plan order (level, then file
// order).
func (tx *Tx) Tasks() ([]*state.Task, error) {
	meta, err := tx.Meta()
	if err != nil {
		return nil, err
	}
	if err := tx.loadAllShards(); err != nil {
		return nil, err
	}
	var out []*state.Task
	for _, lvl := range meta.Levels {
		for _, id := range lvl {
			t, err := tx.Task(id)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
	}
	return out, nil
}

// Put records t as changed.
func (tx *Tx) Put(t *state.Task) error {
	sh, err := tx.shard(shardOf(t.ID()))
	if err != nil {
		return err
	}
	sh.tasks[t.ID()] = t
	sh.dirty[t.ID()] = true
	return nil
}

// tombstone marks a deleted feature (the name is the merge's: see
// statemerge.Tombstone).
const tombstone = statemerge.Tombstone

// Delete replaces the feature's state with a tombstone.
func (tx *Tx) Delete(reason string) error {
	h, err := tx.s.writeBlob([]byte(reason + "\n"))
	if err != nil {
		return err
	}
	tx.deleted = &h
	return nil
}

// Init plans the feature: meta and every task. Allowed only in a
// transaction from Create.
func (tx *Tx) Init(meta *state.Feature, tasks []*state.Task) error {
	if !tx.create {
		return errors.New("Init outside Create")
	}
	tx.root = entries{}
	tx.tasksTree = entries{}
	tx.shards = map[string]*shard{}
	tx.workers = map[string]*state.Worker{}
	tx.workersDirty = true
	tx.meta = meta
	tx.metaDirty = true
	for _, t := range tasks {
		if err := tx.Put(t); err != nil {
			return err
		}
	}
	return nil
}

// Workers returns the leases of the feature's workers, by name.
func (tx *Tx) Workers() (map[string]*state.Worker, error) {
	if tx.workers != nil {
		return tx.workers, nil
	}
	tx.workers = map[string]*state.Worker{}
	if tx.root == nil {
		return tx.workers, nil
	}
	te, ok := tx.root["workers"]
	if !ok {
		return tx.workers, nil
	}
	ws, err := decodeEntries(tx.s, tx.s.Layout().WorkersCache(tx.feature), codec.Workers, te.Hash)
	if err != nil {
		return nil, tx.damaged(err)
	}
	t, err := tx.s.readTree(te.Hash)
	if err != nil {
		return nil, tx.damaged(err)
	}
	tx.workersRead = make(map[string]readWorker, len(t.Entries))
	for _, e := range t.Entries {
		if w, ok := ws[e.Name]; ok {
			tx.workersRead[e.Name] = readWorker{blob: e.Hash, w: w}
		}
	}
	for name, w := range ws {
		w := w
		tx.workers[name] = &w
	}
	return tx.workers, nil
}

type readWorker struct {
	blob plumbing.Hash
	w    state.Worker
}

// PutWorker records a worker's lease; DeleteWorker drops it.
func (tx *Tx) PutWorker(w *state.Worker) error {
	ws, err := tx.Workers()
	if err != nil {
		return err
	}
	ws[w.Name] = w
	tx.workersDirty = true
	return nil
}

func (tx *Tx) DeleteWorker(name string) error {
	ws, err := tx.Workers()
	if err != nil {
		return err
	}
	if _, ok := ws[name]; ok {
		delete(ws, name)
		tx.workersDirty = true
	}
	return nil
}

// Locks returns every lock of the repository, expired ones included
// (callers decide what expiry means), sorted by path.
func (tx *Tx) Locks() ([]state.Lock, error) {
	if tx.locksRead {
		return tx.locks, nil
	}
	locks, err := tx.s.readLocks(tx.locksTip)
	if err != nil {
		return nil, tx.locksDamaged(err)
	}
	tx.locks, tx.locksRead = locks, true
	return tx.locks, nil
}

// SetLocks replaces the repository's locks.
func (tx *Tx) SetLocks(locks []state.Lock) {
	sort.Slice(locks, func(i, j int) bool { return locks[i].Path < locks[j].Path })
	tx.locks, tx.locksRead, tx.locksDirty = locks, true, true
}

func (s *Store) readLocks(tip plumbing.Hash) ([]state.Lock, error) {
	if tip.IsZero() {
		return nil, nil
	}
	// Not LocksAt: a transaction moves the tip, so a snapshot of this one
	// would only cost a file write.
	locks, err := s.locksAt(tip)
	// Callers change the slice they get; the cached one stays as it was.
	return append([]state.Lock(nil), locks...), err
}

func (tx *Tx) dirty() bool {
	if tx.deleted != nil || tx.metaDirty || tx.workersDirty || tx.locksDirty {
		return true
	}
	for _, sh := range tx.shards {
		if len(sh.dirty) > 0 {
			return true
		}
	}
	return false
}

// commit writes the objects and moves the refs; errRace means another
// writer got there first.
func (tx *Tx) commit(ctx context.Context, msg *Message, now time.Time) error {
	s := tx.s
	// git starts while the objects are written: the two overlap, instead
	// of the update waiting a process start after the last object.
	if !s.Persistent && s.publisher == nil && s.pre.Load() == nil {
		if p, err := s.refs.StartUpdate(); err == nil {
			s.pre.Store(p)
			defer func() {
				if p := s.pre.Swap(nil); p != nil {
					p.Close() // not used: an empty input ends it
				}
			}()
		}
	}
	b := s.newBatch(tx.held)
	sig := gitobj.Signature{Name: "git-zerg", Email: "git-zerg@" + hostname.Get(), When: now}
	var updates []refUpdate

	featureChanged := tx.feature != "" && (tx.deleted != nil || tx.metaDirty || tx.workersDirty || tx.tasksDirty())
	if featureChanged {
		u, err := tx.commitFeature(b, sig, msg)
		if err != nil {
			return err
		}
		updates = append(updates, u)
	}
	if tx.locksDirty {
		u, err := tx.commitLocks(b, sig, msg)
		if err != nil {
			return err
		}
		updates = append(updates, u)
	} else if featureChanged && tx.locksRead {
		// The decision depended on the locks: make sure they did not move
		// meanwhile, or a claim could slip past a lock taken concurrently.
		updates = append(updates, refUpdate{Name: LocksRef, New: tx.locksTip, Old: tx.locksTip, Verify: true})
	}
	if len(updates) == 0 {
		return nil
	}
	updates = append(updates, tx.extra...)
	if s.beforeCommit != nil {
		s.beforeCommit()
	}
	if err := b.Flush(); err != nil {
		return err
	}
	if s.afterObjects != nil {
		s.afterObjects()
	}
	tx.moved = updates
	if s.publisher != nil {
		err := s.publisher.Publish(ctx, tx.feature, tx.view, updates, tx.also)
		tx.pushed = err == nil
		return err
	}
	return s.updateRefs(ctx, updates)
}

// commitFeature adds the feature's next commit to b (its tombstone, when
// the feature is deleted) and returns the move of its ref.
func (tx *Tx) commitFeature(b *batch, sig gitobj.Signature, msg *Message) (refUpdate, error) {
	s := tx.s
	tx.clock++
	msg.Clock = tx.clock
	if tx.deleted != nil {
		root := entries{}
		root.SetBlob(tombstone, *tx.deleted)
		th := b.Tree(root)
		c := &gitobj.Commit{Author: sig, Committer: sig, Message: msg.String(), TreeHash: th, ParentHashes: []plumbing.Hash{tx.featTip}}
		if err := s.seal(c); err != nil {
			return refUpdate{}, err
		}
		return refUpdate{Name: FeatureRef(tx.feature), New: b.Commit(c), Old: tx.featTip}, nil
	}
	if msg.Feature == "" {
		msg.Feature = tx.feature
	}
	root := tx.root
	if root == nil {
		root = entries{}
	}
	if tx.metaDirty {
		h, err := b.JSON(tx.meta)
		if err != nil {
			return refUpdate{}, err
		}
		root.SetBlob("feature.json", h)
		b.KeepLoose(h)
	}
	h := b.Blob([]byte(strconv.FormatUint(tx.clock, 10) + "\n"))
	root.SetBlob("clock", h)
	b.KeepLoose(h)
	if tx.tasksDirty() {
		h, err := tx.writeTasks(b)
		if err != nil {
			return refUpdate{}, err
		}
		root.SetTree("tasks", h)
	}
	if tx.workersDirty {
		if err := tx.writeWorkers(b, root); err != nil {
			return refUpdate{}, err
		}
	}
	th := b.Tree(root)
	c := &gitobj.Commit{Author: sig, Committer: sig, Message: msg.String(), TreeHash: th}
	// A forced re-plan keeps the old history as parent too, so the
	// audit log survives `plan --force`.
	if !tx.featTip.IsZero() {
		c.ParentHashes = []plumbing.Hash{tx.featTip}
	}
	if err := s.seal(c); err != nil {
		return refUpdate{}, err
	}
	ch := b.Commit(c)
	b.KeepLoose(th, ch)
	return refUpdate{Name: FeatureRef(tx.feature), New: ch, Old: tx.featTip}, nil
}

// writeTasks adds the changed tasks and the shards holding them to b, and
// returns the tasks tree.
func (tx *Tx) writeTasks(b *batch) (plumbing.Hash, error) {
	s := tx.s
	if err := tx.loadTasksTree(); err != nil {
		return plumbing.ZeroHash, err
	}
	encoded, err := tx.encodeDirty()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	for name, sh := range tx.shards {
		if len(sh.dirty) == 0 {
			continue
		}
		if err := s.loadShardTree(sh); err != nil {
			return plumbing.ZeroHash, err
		}
		fresh := make(map[string][]byte, len(sh.dirty))
		for id := range sh.dirty {
			e := encoded[id]
			sh.e.SetBlob(id, b.Add(e.Hash, plumbing.BlobObject, e.Data))
			fresh[id] = e.Data
		}
		h := b.Tree(sh.e)
		tx.tasksTree.SetTree(name, h)
		s.memoShard(sh.hash, h, fresh)
	}
	return b.Tree(tx.tasksTree), nil
}

// writeWorkers puts the workers' tree in root, each unchanged worker as
// the blob it was read from.
func (tx *Tx) writeWorkers(b *batch, root entries) error {
	we := entries{}
	for name, w := range tx.workers {
		if r, ok := tx.workersRead[name]; ok && r.w == *w {
			we.SetBlob(name, r.blob)
			continue
		}
		h, err := b.JSON(w)
		if err != nil {
			return err
		}
		we.SetBlob(name, h)
	}
	if len(we) == 0 {
		delete(root, "workers")
	} else {
		root.SetTree("workers", b.Tree(we))
	}
	return nil
}

// commitLocks adds the locks' next commit to b and returns the move of
// their ref.
func (tx *Tx) commitLocks(b *batch, sig gitobj.Signature, msg *Message) (refUpdate, error) {
	le := entries{}
	for _, l := range tx.locks {
		h, err := b.JSON(l)
		if err != nil {
			return refUpdate{}, err
		}
		le.SetBlob(lockKey(l.Path), h)
	}
	th := b.Tree(le)
	lm := *msg
	c := &gitobj.Commit{Author: sig, Committer: sig, Message: lm.String(), TreeHash: th}
	if !tx.locksTip.IsZero() {
		c.ParentHashes = []plumbing.Hash{tx.locksTip}
	}
	if err := tx.s.seal(c); err != nil {
		return refUpdate{}, err
	}
	return refUpdate{Name: LocksRef, New: b.Commit(c), Old: tx.locksTip}, nil
}

// encodeDirty encodes the changed tasks and hashes their blobs, shared out
// between the processors when there are many (a plan writes them all).
func (tx *Tx) encodeDirty() (map[string]batchObject, error) {
	var ids []string
	var ts []*state.Task
	for _, sh := range tx.shards {
		for id := range sh.dirty {
			ids, ts = append(ids, id), append(ts, sh.tasks[id])
		}
	}
	objs := make([]batchObject, len(ts))
	const chunk = 256
	err := parallel((len(ts)+chunk-1)/chunk, func(c int) error {
		for i := c * chunk; i < min((c+1)*chunk, len(ts)); i++ {
			data, err := codec.EncodeTask(ts[i])
			if err != nil {
				return err
			}
			objs[i] = batchObject{Hash: odb.BlobHash(data), Type: plumbing.BlobObject, Data: data}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]batchObject, len(ts))
	for i, id := range ids {
		out[id] = objs[i]
	}
	return out, nil
}

func (tx *Tx) tasksDirty() bool {
	for _, sh := range tx.shards {
		if len(sh.dirty) > 0 {
			return true
		}
	}
	return false
}
