package gitstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitobj"
	"github.com/git-zerg/git-zerg/gitstore/codec"
	"github.com/git-zerg/git-zerg/gitstore/odb"
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
	view  arbiterView // what the arbiter held when this attempt began

	// extra refs moved in the same transaction (pins of verified work),
	// without a compare-and-swap: they only keep commits reachable.
	extra []refUpdate

	// also: refs moved on the arbiter only, in the transition's own push
	// (PushAlso); pushed says that push went through.
	also   []RefMove
	pushed bool
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
	u := refUpdate{name: name, unchecked: true}
	if commit == "" {
		u.delete = true
	} else {
		u.new = plumbing.NewHash(commit)
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

// tombstone marks a deleted feature. Deleting the ref instead would not
// last: the next fetch from a machine that still has it brings it back.
const tombstone = "deleted"

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
	if !s.Persistent && s.arbiter == "" && s.pre.Load() == nil {
		if p, err := s.git.StartPipe(updateRefArgs...); err == nil {
			s.pre.Store(p)
			defer func() {
				if p := s.pre.Swap(nil); p != nil {
					p.Close() // not used: an empty input ends it
				}
			}()
		}
	}
	b := s.newBatch(tx.held)
	sig := gitobj.Signature{Name: "git-zerg", Email: "git-zerg@" + hostname(), When: now}
	var updates []refUpdate

	featureChanged := tx.feature != "" && (tx.deleted != nil || tx.metaDirty || tx.workersDirty || tx.tasksDirty())
	if tx.deleted != nil {
		tx.clock++
		msg.Clock = tx.clock
		root := entries{}
		root.SetBlob(tombstone, *tx.deleted)
		th := b.Tree(root)
		c := &gitobj.Commit{Author: sig, Committer: sig, Message: msg.String(), TreeHash: th, ParentHashes: []plumbing.Hash{tx.featTip}}
		if err := s.seal(c); err != nil {
			return err
		}
		ch := b.Commit(c)
		updates = append(updates, refUpdate{name: FeatureRef(tx.feature), new: ch, old: tx.featTip})
	} else if featureChanged {
		tx.clock++
		msg.Clock = tx.clock
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
				return err
			}
			root.SetBlob("feature.json", h)
			b.KeepLoose(h)
		}
		h := b.Blob([]byte(strconv.FormatUint(tx.clock, 10) + "\n"))
		root.SetBlob("clock", h)
		b.KeepLoose(h)
		if tx.tasksDirty() {
			if err := tx.loadTasksTree(); err != nil {
				return err
			}
			encoded, err := tx.encodeDirty()
			if err != nil {
				return err
			}
			for name, sh := range tx.shards {
				if len(sh.dirty) == 0 {
					continue
				}
				if err := s.loadShardTree(sh); err != nil {
					return err
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
			h := b.Tree(tx.tasksTree)
			root.SetTree("tasks", h)
		}
		if tx.workersDirty {
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
				h := b.Tree(we)
				root.SetTree("workers", h)
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
			return err
		}
		ch := b.Commit(c)
		b.KeepLoose(th, ch)
		updates = append(updates, refUpdate{name: FeatureRef(tx.feature), new: ch, old: tx.featTip})
	}
	if tx.locksDirty {
		le := entries{}
		for _, l := range tx.locks {
			h, err := b.JSON(l)
			if err != nil {
				return err
			}
			le.SetBlob(lockKey(l.Path), h)
		}
		th := b.Tree(le)
		lm := *msg
		c := &gitobj.Commit{Author: sig, Committer: sig, Message: lm.String(), TreeHash: th}
		if !tx.locksTip.IsZero() {
			c.ParentHashes = []plumbing.Hash{tx.locksTip}
		}
		if err := s.seal(c); err != nil {
			return err
		}
		ch := b.Commit(c)
		updates = append(updates, refUpdate{name: LocksRef, new: ch, old: tx.locksTip})
	} else if featureChanged && tx.locksRead {
		// The decision depended on the locks: make sure they did not move
		// meanwhile, or a claim could slip past a lock taken concurrently.
		updates = append(updates, refUpdate{name: LocksRef, new: tx.locksTip, old: tx.locksTip, verify: true})
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
	if s.arbiter != "" {
		err := s.publish(ctx, tx.feature, tx.view, updates, tx.also)
		tx.pushed = err == nil
		return err
	}
	return s.updateRefs(ctx, updates)
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

type refUpdate struct {
	name     string
	new, old plumbing.Hash
	verify   bool // only check that the ref is still at old
	// unchecked updates and deletes ignore the old value.
	unchecked, delete bool
}

var errRace = errors.New("ref moved")

// moveRefs moves refs in one transaction, each only if it is still at its
// old value. git's files backend takes every <ref>.lock first, checks the
// old values, then renames: all or nothing, and respected by every git
// process.
func (s *Store) moveRefs(ctx context.Context, us []refUpdate) error {
	var b strings.Builder
	b.WriteString("start\n")
	for _, u := range us {
		old := u.old.String()
		switch {
		case u.verify:
			fmt.Fprintf(&b, "verify %s %s\n", u.name, old)
			continue
		case u.delete:
			fmt.Fprintf(&b, "delete %s\n", u.name)
			continue
		case u.unchecked:
			fmt.Fprintf(&b, "update %s %s\n", u.name, u.new)
			continue
		}
		fmt.Fprintf(&b, "update %s %s %s\n", u.name, u.new, old)
	}
	// A deletion makes git take packed-refs.lock for the transaction, which
	// serializes it with a concurrent `git pack-refs`: without it, a
	// pack-refs that packed an older value and then pruned the loose ref
	// can let a compare-and-swap against that older value succeed, losing
	// the update made in between (seen with git 2.39 under a pack-refs loop).
	// The ref deleted never exists.
	b.WriteString("delete " + barrierRef + "\n")
	b.WriteString("prepare\ncommit\n")
	if s.Persistent {
		return s.updateRefsPiped(b.String())
	}
	// A short lock timeout makes git wait for a concurrent writer's
	// <ref>.lock instead of failing at once; the compare-and-swap still
	// decides who wins.
	var err error
	if p := s.pre.Swap(nil); p != nil {
		if err = p.Send(b.String()); err != nil {
			p.Close()
		} else {
			err = p.Close()
		}
	} else {
		_, err = s.git.RunWith(ctx, gitcmd.Call{Stdin: strings.NewReader(b.String())}, updateRefArgs...)
	}
	if err == nil {
		return nil
	}
	if isRace(err) {
		// Whether the ref moved or its lock was held, the answer is the
		// same: read again and retry.
		s.clearStaleLock(err)
		return fmt.Errorf("%w: %v", errRace, err)
	}
	return err
}

// staleLock is the age past which a lock file of the state's refs is taken
// for the leftover of a killed process. git holds a ref lock for one
// transaction, milliseconds, and removes it on any exit but SIGKILL (a
// crash, an OOM kill, kill -9 of a rush): a lock left so would refuse
// every update for good.
const staleLock = 5 * time.Second

var lockExists = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`Unable to create '([^']+\.lock)': File exists`) }) // compiled on first use, not at every start

// clearStaleLock removes the lock file a failed update names when it is
// one of ours (under refs/zerg/, or packed-refs.lock, which every
// transaction takes) and stale. Wrongly removing a live one costs its
// holder a retry, nothing more: it can no longer rename its lock into
// place, and every update is a compare-and-swap.
func (s *Store) clearStaleLock(err error) {
	var ge *gitcmd.Error
	if !errors.As(err, &ge) {
		return
	}
	m := lockExists().FindStringSubmatch(ge.Stderr)
	if m == nil {
		return
	}
	path := m[1]
	if !filepath.IsAbs(path) {
		path = filepath.Join(s.git.Dir, path)
	}
	rel, rerr := filepath.Rel(s.CommonDir, path)
	if rerr != nil {
		return
	}
	rel = filepath.ToSlash(rel)
	if rel != "packed-refs.lock" && !strings.HasPrefix(rel, "refs/zerg/") {
		return
	}
	if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) > staleLock {
		os.Remove(path)
	}
}

// isRace tells a lost compare-and-swap or a held lock (worth another try)
// from a real failure (worth an error at once).
func isRace(err error) bool {
	var ge *gitcmd.Error
	if !errors.As(err, &ge) || ge.Code <= 0 {
		return false
	}
	for _, s := range []string{"cannot lock ref", "but expected", "already exists", "File exists", "unable to lock", "Unable to create"} {
		if strings.Contains(ge.Stderr, s) {
			return true
		}
	}
	return false
}

// core.logAllRefUpdates=always: every state update goes into its ref's
// reflog, the record that repair checks against (see repair.go).
var updateRefArgs = []string{"-c", "core.filesRefLockTimeout=500", "-c", "core.packedRefsTimeout=2000",
	"-c", "core.logAllRefUpdates=always", "update-ref", "-m", ReflogMessage, "--stdin"}

// barrierRef is never created; deleting it only takes packed-refs.lock.
const barrierRef = "refs/zerg/barrier"

// refPipe is a Repo's long-lived `git update-ref --stdin` (Repo.pipe).
type refPipe struct {
	mu sync.Mutex
	p  *gitcmd.Pipe
}

// Drop closes the pack files a store keeps open, for a store of one task
// or one look that is used no more. Unlike Close it leaves the
// update-ref process the repository's stores share.
func (s *Store) Drop() error {
	s.db.DropPacks()
	return nil
}

// Close ends the long-lived `git update-ref --stdin` of a Persistent
// store, so that no git process outlives the command.
func (s *Store) Close() error {
	rp := &s.repo.pipe
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if rp.p == nil {
		return nil
	}
	err := rp.p.Close()
	rp.p = nil
	return err
}

func (s *Store) updateRefsPiped(tx string) error {
	rp := &s.repo.pipe
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if rp.p == nil {
		p, err := s.git.StartPipe(updateRefArgs...)
		if err != nil {
			return err
		}
		rp.p = p
	}
	fail := func() error {
		// git ends the session on a failed transaction: its exit says why.
		err := rp.p.Close()
		rp.p = nil
		if isRace(err) {
			s.clearStaleLock(err)
			return fmt.Errorf("%w: %v", errRace, err)
		}
		if err == nil {
			err = errors.New("git update-ref --stdin ended")
		}
		return err
	}
	if err := rp.p.Send(tx); err != nil {
		return fail()
	}
	for _, want := range []string{"start: ok", "prepare: ok", "commit: ok"} {
		line, err := rp.p.ReadLine()
		if err != nil || line != want {
			return fail()
		}
	}
	return nil
}

// Update runs fn in a transaction on feature ("" for locks only) and
// commits what it changed, retrying from a fresh read when another writer
// moved the refs meanwhile. fn must be repeatable: it may run several
// times, and it returns the message describing the change, or nil when it
// changed nothing.
func (s *Store) Update(ctx context.Context, feature string, now func() time.Time, fn func(tx *Tx) (*Message, error)) error {
	return s.update(ctx, feature, false, now, fn)
}

// Create is Update for a feature that must not exist yet (or may, with
// force, be replaced); fn calls tx.Init.
func (s *Store) Create(ctx context.Context, feature string, force bool, now func() time.Time, fn func(tx *Tx) (*Message, error)) error {
	return s.update(ctx, feature, !force, now, func(tx *Tx) (*Message, error) {
		tx.create = true
		return fn(tx)
	})
}

// processLock serializes the transactions of the stores of s's Repo (see
// Repo.txMu).
func (s *Store) processLock() *sync.Mutex { return &s.repo.txMu }

// writerTurnWait bounds the wait for a turn among this machine's writers
// (see writerTurn): many transactions' worth, and well inside the retry
// budget.
const writerTurnWait = 5 * time.Second

func (s *Store) update(ctx context.Context, feature string, mustBeNew bool, now func() time.Time, fn func(tx *Tx) (*Message, error)) error {
	mu := s.processLock()
	mu.Lock()
	defer mu.Unlock()
	defer s.writerTurn(min(s.Retry, writerTurnWait))()
	return s.updateLocked(ctx, feature, mustBeNew, now, fn)
}

// updateLocked is update with the process's lock held.
func (s *Store) updateLocked(ctx context.Context, feature string, mustBeNew bool, now func() time.Time, fn func(tx *Tx) (*Message, error)) error {
	var held heldPacks
	defer held.Release(s.db)
	deadline := time.Now().Add(s.Retry)
	wait := time.Millisecond
	for {
		var view arbiterView
		if s.arbiter != "" {
			v, ok := s.fresh(feature)
			if !ok {
				var err error
				if v, err = s.catchUp(ctx, feature); err != nil && !errors.Is(err, errRace) {
					return err
				}
			}
			view = v
		}
		if err := s.repairAll(ctx, feature); err != nil && !errors.Is(err, errRace) {
			return err
		}
		tx, err := s.begin(feature)
		if err != nil {
			return err
		}
		if err := s.lacksUpdates(ctx, tx); err != nil {
			// An update git undid is not in what was read: the repair lost
			// its compare-and-swap, or git undid one after it. Building on
			// this state would make this transition win over the undone one
			// when it is merged back (a writer's own last update among
			// them), so the repair goes again first.
			if time.Now().After(deadline) {
				return fmt.Errorf("%w (%v)", ErrContention, err)
			}
			time.Sleep(time.Duration(rand.Int64N(int64(wait))) + 200*time.Microsecond)
			if wait < 64*time.Millisecond {
				wait *= 2
			}
			continue
		}
		tx.view = view
		if mustBeNew && tx.root != nil {
			return fmt.Errorf("feature %q: %w", feature, ErrExists)
		}
		msg, err := fn(tx)
		if errors.Is(err, errAgain) {
			continue
		}
		if err != nil {
			return err
		}
		if msg == nil || !tx.dirty() {
			return nil
		}
		tx.held = &held
		err = tx.commit(ctx, msg, now())
		if !errors.Is(err, errRace) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w (%v)", ErrContention, err)
		}
		// Full jitter keeps racing processes from retrying in lockstep.
		time.Sleep(time.Duration(rand.Int64N(int64(wait))) + 200*time.Microsecond)
		if wait < 64*time.Millisecond {
			wait *= 2
		}
	}
}

// View opens a read-only transaction: a consistent snapshot of the feature
// ("" for the locks alone) as of now.
func (s *Store) View(feature string) (*Tx, error) {
	tx, err := s.begin(feature)
	if err != nil {
		return nil, err
	}
	tx = s.healed(tx)
	if feature != "" && tx.root == nil {
		return nil, fmt.Errorf("feature %q: %w", feature, ErrNotFound)
	}
	return tx, nil
}
