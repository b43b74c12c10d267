// Package remotes syncs git-zerg's state with other clones through git
// remotes: a sync round (fetch every zerg ref, merge each feature's state
// and the locks, push the result by compare-and-swap), the arbiter that
// every transition of a store must reach before it counts (sync.arbiter,
// rush --remote), and the fetch and push of a shared rush's staging branch
// and pinned work.
//
// It sits on gitstore and reaches a transaction through the store's
// Publisher alone: gitstore imports nothing of it, and a store without an
// arbiter never calls it. What it keeps per repository in a process (what
// each arbiter was last seen to hold) lives in the store's Repo
// (Repo.Value), never in a package global; what it keeps per store (its
// arbiter) in the Publisher it installs, used by the store's goroutine
// alone. Every function taking a *gitstore.Store is as safe for concurrent
// use as that store is: not, one store per goroutine.
package remotes

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
)

// store is a gitstore.Store as this layer uses it: with git run where the
// store runs it, and what the layer shares with the other stores of its
// Repo.
type store struct {
	*gitstore.Store
	git  *gitcmd.Runner
	repo *shared
}

func wrap(s *gitstore.Store) store {
	return store{Store: s, git: &gitcmd.Runner{Dir: s.Dir()}, repo: sharedOf(s.Repo())}
}

// shared is what this layer keeps for one Repo: the process's knowledge
// of each arbiter, by arbiter and feature. It is safe for concurrent use.
type shared struct {
	// mu guards seen and leaseLost.
	mu sync.Mutex
	// seen is what the arbiter was last known to hold (see fresh).
	seen map[arbiterKey]seen
	// leaseLost is when a push last lost its lease (see LeaseLost).
	leaseLost map[arbiterKey]time.Time

	// What is told when an update waits for an arbiter, or re-creates a
	// ref it had lost (OnRemoteWait, OnRemoteLost): set by the rush.
	remoteWaitNote atomic.Pointer[func(remote string, err error, wait time.Duration)]
	remoteLostNote atomic.Pointer[func(remote, ref string, here bool)]
}

// sharedKey is the Repo.Value key of this layer's shared.
type sharedKey struct{}

func sharedOf(r *gitstore.Repo) *shared {
	return r.Value(sharedKey{}, func() any {
		return &shared{seen: map[arbiterKey]seen{}, leaseLost: map[arbiterKey]time.Time{}}
	}).(*shared)
}

// arbiterKey names one feature's state on one arbiter.
type arbiterKey struct{ arbiter, feature string }

// seen is what the arbiter was last known to hold, with the local refs
// when it was.
type seen struct {
	view        arbiterView
	feat, locks plumbing.Hash // the local refs when view was right
}
