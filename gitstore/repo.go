package gitstore

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/git-zerg/git-zerg/gitstore/odb"
	"github.com/git-zerg/git-zerg/gitstore/reflog"
	"github.com/git-zerg/git-zerg/gitstore/refs"
)

// Repo is this process's handle on one repository: what every Store of the
// repository in the process shares. It is made by whoever opens the
// repository (Open) and handed on (Repo.Open) to the stores of its
// goroutines and of its linked worktrees; nothing finds it by directory, so
// two Repos of one repository are two processes to each other — their
// transactions race by compare-and-swap alone, as separate processes' do —
// and a repository opened in the same process shares nothing with another.
//
// A Repo is safe for concurrent use; a Store is not (one per goroutine).
type Repo struct {
	commonDir string

	memo *memo
	// reflogs is how far each state ref's reflog was checked (repair.go).
	reflogs *reflog.Checker
	// txMu takes the process's transactions one at a time: goroutines of
	// a rush would otherwise race each other's compare-and-swap and redo
	// their work. Between processes the compare-and-swap alone decides,
	// and no lock outlives a transaction.
	txMu sync.Mutex
	// refs is what the stores share of the refs: packed-refs parsed, the
	// one `git update-ref --stdin` of the process's Persistent stores, the
	// writers' turn.
	refs refs.Shared

	// mu guards together and values.
	mu sync.Mutex
	// together are the transitions waiting to share a commit (see
	// UpdateTogether).
	together map[togetherKey]*joiners
	// values are what the layers above keep per repository (Value).
	values map[any]any
}

// togetherKey names one feature's transitions going to one place (their
// Publisher's Remote).
type togetherKey struct{ remote, feature string }

func newRepoHandle(commonDir string) *Repo {
	return &Repo{commonDir: commonDir, memo: newMemo(), reflogs: reflog.NewChecker(commonDir, LayoutOf(commonDir).ReflogChecked), together: map[togetherKey]*joiners{}, values: map[any]any{}}
}

// Value returns what a layer above this package keeps for r's repository
// in this process under key, made by mk on first use: how such a layer
// (gitstore/remotes: what each arbiter was last seen to hold) shares state
// between the stores of a Repo without a package global. key is a value of
// a type of the layer's own, as context.Context's keys are; the value must
// be safe for concurrent use, as a Repo is.
func (r *Repo) Value(key any, mk func() any) any {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.values[key]
	if !ok {
		v = mk()
		r.values[key] = v
	}
	return v
}

// Open opens the repository containing dir with a handle of its own: the
// first store of this process, which hands its Repo on to the others.
func Open(ctx context.Context, dir string) (*Store, error) {
	s, err := open(ctx, dir)
	if err != nil {
		return nil, err
	}
	s.setRepo(newRepoHandle(s.CommonDir))
	return s, nil
}

// Open opens another store of r's repository at dir (the same work tree,
// for another goroutine, or a linked worktree), sharing what r holds. A dir
// of another repository is refused.
func (r *Repo) Open(ctx context.Context, dir string) (*Store, error) {
	s, err := open(ctx, dir)
	if err != nil {
		return nil, err
	}
	if !sameDir(s.CommonDir, r.commonDir) {
		return nil, fmt.Errorf("%s is in the repository %s, not %s", dir, s.CommonDir, r.commonDir)
	}
	s.setRepo(r)
	return s, nil
}

func (s *Store) setRepo(r *Repo) {
	s.repo = r
	s.db = odb.New(s.CommonDir, s.git, r.memo.objs)
	s.refs = refs.New(s.CommonDir, s.GitDir, s.git, &r.refs)
}

// Repo is the handle s shares with the other stores of its repository in
// this process.
func (s *Store) Repo() *Repo { return s.repo }

func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
