// Package gitstore keeps git-zerg's state as commits under refs/zerg/.
//
// Each feature is one ref, refs/zerg/features/<name>, whose commits form the
// audit log: one commit per transition, its message naming the operation,
// task and worker. The tree is laid out so that a transition rewrites a
// handful of small objects whatever the size of the graph:
//
//	feature.json        the plan: levels and the graph's top-level keys
//	clock               Lamport clock of the last transition
//	tasks/<xx>/<id>     one JSON blob per task (spec, state, history); xx
//	                    is the first byte of sha1(id), so a shard holds
//	                    about n/256 tasks
//	workers/<name>      one blob per worker holding a lease
//
// Locks are repository-wide, so they live on their own ref, refs/zerg/locks,
// one blob per locked path. A transition that moves both refs (a claim takes
// locks) updates them in one `git update-ref --stdin` transaction.
//
// The package is the top of layers that each import only those below
// them: gitstore/codec (the cache files' encodings), gitstore/taskindex
// (the task index and its file's encoding), gitstore/odb (objects read and
// written in-process; gitobj encodes commits and trees), gitstore/refs
// (refs read, and moved by compare-and-swap), then this
// package: the transactions, the merge of two histories, the caches. The
// sync with remotes and the arbiter (gitstore/remotes) sit on top of it
// and hook into a transaction through its Publisher alone (SetPublisher):
// nothing here imports them, and a store without a Publisher is the local
// compare-and-swap store, whole. Ref updates go through the git binary
// because only git's own <ref>.lock protocol is respected by every git
// process: go-git's CheckAndSetReference locks the ref file itself, so it
// neither excludes a concurrent `git update-ref` or `git pack-refs` nor is
// excluded by them, and an acknowledged update can be lost. Every update is
// a compare-and-swap on the old values; a lost race is retried from a fresh
// read, with backoff and jitter. No lock is held
// between commands.
package gitstore

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitobj"
	"github.com/git-zerg/git-zerg/gitstore/odb"
	"github.com/git-zerg/git-zerg/gitstore/refs"
	"github.com/git-zerg/git-zerg/gitstore/taskindex"
)

// Ref names.
const (
	// ZergPrefix holds every ref git-zerg writes, and nothing else.
	ZergPrefix    = "refs/zerg/"
	FeaturePrefix = "refs/zerg/features/"
	LocksRef      = "refs/zerg/locks"
)

// FeatureRef is the ref holding a feature's state.
func FeatureRef(feature string) string { return FeaturePrefix + feature }

var (
	// ErrNotFound: the feature (or task, or worker) does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists: the feature is already planned.
	ErrExists = errors.New("already exists")
	// ErrContention: the refs kept moving under us for longer than the
	// retry budget.
	ErrContention = errors.New("state kept changing under concurrent updates")
	// ErrNotRepo: the directory is not in a git repository.
	ErrNotRepo = errors.New("not a git repository")
)

// Store is the state of one repository, as one goroutine sees it: a Store,
// its Tx values and its Publisher are not safe for concurrent use (one
// Store per goroutine; Repo.Open makes another). What the stores of a
// repository share in the process is their Repo, which is.
type Store struct {
	// Top is the work tree the command runs in ("" in a bare repository).
	Top string
	// GitDir is this work tree's git dir; CommonDir is shared by all linked
	// worktrees and holds refs and objects.
	GitDir, CommonDir string

	// git runs the git binary for this repository. It stays unexported:
	// refs under refs/zerg/ are written by this package alone.
	git *gitcmd.Runner
	// repo is what the stores of this repository in this process share.
	repo *Repo
	// db is the repository's objects, sharing the Repo's memo: set with
	// repo.
	db *odb.DB
	// refs reads and moves the repository's refs, sharing the Repo's
	// packed-refs and update-ref process: set with repo.
	refs *refs.DB

	// Persistent keeps one `git update-ref --stdin` process for all of this
	// process's ref updates (a rush), instead of one process per update.
	Persistent bool
	// NoCacheWrites: reads leave the files they would speed up the next
	// read with (caches, reflog checkpoints) unwritten, for a caller that
	// promises to write nothing (doctor).
	NoCacheWrites bool
	// pre is a `git update-ref --stdin` started ahead of the update that
	// will use it.
	pre atomic.Pointer[gitcmd.Pipe]

	// Retry bounds the compare-and-swap loop.
	Retry time.Duration
	// Hooks for tests: called after a transaction was built, before the
	// ref update, to widen race windows.
	beforeCommit func()
	// afterObjects, for tests, is called once the objects are written,
	// before the refs are updated.
	afterObjects func()
	// publisher is what every update reaches before it counts
	// (SetPublisher), nil for the local compare-and-swap alone.
	publisher Publisher

	// key is the repository's key (Key), read once.
	keyMu sync.Mutex
	key   []byte

	// hostID is the clone's host identity, made on first use (Host).
	hostID hostIDOnce
}

// open finds the repository containing dir; the caller gives the store
// its Repo.
func open(ctx context.Context, dir string) (*Store, error) {
	var s *Store
	if r, ok := gitcmd.Discover(dir); ok {
		s = &Store{Top: r.Top, GitDir: r.GitDir, CommonDir: r.CommonDir}
	} else {
		var err error
		if s, err = revParse(ctx, dir); err != nil {
			return nil, err
		}
	}
	s.Retry = 30 * time.Second
	s.git = &gitcmd.Runner{Dir: dir}
	if s.Top != "" {
		s.git.Dir = s.Top
	}
	return s, nil
}

func revParse(ctx context.Context, dir string) (*Store, error) {
	r := &gitcmd.Runner{Dir: dir}
	out, err := r.Run(ctx, "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir", "--show-toplevel")
	lines := gitcmd.Split(out, '\n')
	if len(lines) < 2 {
		var ge *gitcmd.Error
		if err == nil || errors.As(err, &ge) {
			return nil, fmt.Errorf("%s: %w", dir, ErrNotRepo)
		}
		return nil, err
	}
	s := &Store{GitDir: lines[0], CommonDir: lines[1]}
	if len(lines) > 2 {
		s.Top = lines[2]
	}
	return s, nil
}

// TreeOf returns the tree of a commit.
func (s *Store) TreeOf(commit string) (string, error) {
	if !plumbing.IsHash(commit) {
		return "", fmt.Errorf("%q is not a commit id", commit)
	}
	c, err := s.readCommit(plumbing.NewHash(commit))
	if err != nil {
		return "", err
	}
	return c.TreeHash.String(), nil
}

// CommitTree writes a commit of an existing tree, for records the tool
// keeps beside the state (gate results).
func (s *Store) CommitTree(tree string, parents []string, message string, sig gitobj.Signature) (string, error) {
	if !plumbing.IsHash(tree) {
		return "", fmt.Errorf("%q is not a tree id", tree)
	}
	c := &gitobj.Commit{Author: sig, Committer: sig, Message: message, TreeHash: plumbing.NewHash(tree)}
	for _, p := range parents {
		if !plumbing.IsHash(p) {
			return "", fmt.Errorf("%q is not a commit id", p)
		}
		c.ParentHashes = append(c.ParentHashes, plumbing.NewHash(p))
	}
	h, err := s.writeCommit(c)
	return h.String(), err
}

// DeleteRef deletes a record ref, if it exists.
func (s *Store) DeleteRef(ctx context.Context, name string) error {
	if h, err := s.ReadRef(name); err != nil || h.IsZero() {
		return err
	}
	return s.updateRefs(ctx, []refUpdate{{Name: name, Delete: true}})
}

// SetRef points a ref at a commit, whatever it held: for records that only
// keep something reachable or remembered (gates passed), not for state.
func (s *Store) SetRef(ctx context.Context, name, commit string) error {
	if !plumbing.IsHash(commit) {
		return fmt.Errorf("%q is not a commit id", commit)
	}
	return s.updateRefs(ctx, []refUpdate{{Name: name, New: plumbing.NewHash(commit), Unchecked: true}})
}

// CurrentFeature returns the feature chosen with `use` or planned last.
func (s *Store) CurrentFeature() string {
	b, err := os.ReadFile(s.Layout().CurrentFeature())
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// SetCurrentFeature records the feature `use` chose.
func (s *Store) SetCurrentFeature(name string) error {
	return WritePrivate(s.Layout().CurrentFeature(), []byte(name+"\n"))
}

// errNoCacheWrites: the cache file was not written (Store.NoCacheWrites).
var errNoCacheWrites = errors.New("cache writes are off")

// writeCache writes a file that only makes later reads faster: every
// caller treats a failure as a slower read.
func (s *Store) writeCache(name string, data []byte) error {
	if s.NoCacheWrites {
		return errNoCacheWrites
	}
	return WritePrivate(name, data)
}

// WritePrivate replaces a file at once (a reader never sees half of it),
// readable by this user alone (os.CreateTemp makes it 0600): what
// git-zerg keeps under .git/zerg/ says what runs here.
func WritePrivate(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), name)
}

// shardOf is the shard of the tasks tree holding task name, as the task
// index groups its entries (taskindex.ShardOf: one rule for both).
func shardOf(name string) string { return taskindex.ShardOf(name) }

func lockKey(path string) string {
	sum := sha1.Sum([]byte(path))
	return hex.EncodeToString(sum[:])
}

// SetPublisher makes every state update of s reach p before it counts;
// nil leaves the local compare-and-swap alone. The layer that syncs with
// an arbiter installs its own (remotes.SetArbiter); see Publisher.
func (s *Store) SetPublisher(p Publisher) { s.publisher = p }

// Publisher is what SetPublisher set, nil for none.
func (s *Store) Publisher() Publisher { return s.publisher }

// Dir is where git commands for this repository run: the top of the work
// tree, or the git dir of a bare repository.
func (s *Store) Dir() string { return s.git.Dir }
