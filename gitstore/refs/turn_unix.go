//go:build unix

package refs

import (
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Turns orders the processes of this machine writing one repository's
// state (Take). It is safe for concurrent use.
type Turns struct {
	// held is set while a wait for the writers' turn given up on is
	// still blocked: until the holder lets go, this process's
	// transactions go on without waiting, each costing neither a wait
	// nor another blocked thread.
	held atomic.Bool
}

// GivenUp reports whether a wait for the turn was given up on and is
// still blocked (its holder has not let go).
func (t *Turns) GivenUp() bool { return t.held.Load() }

// Take waits for this process's turn among the processes of this
// machine writing the repository's state, and returns what ends it.
//
// The compare-and-swap alone keeps the state right, but it is not fair:
// writers that lose retry after a random pause, and under load one of
// them can lose every round for the whole retry budget while the others
// win ("state kept changing"). An advisory lock (flock: the kernel drops
// it with its process, so it never outlives a transaction) has each
// writer try once the last one is through. It only orders: a process that
// waited longer than wait (a holder stopped, or a worker holding the file
// on purpose) goes on without its turn, and the compare-and-swap decides
// as before; so do its next transactions, at once, until that holder
// lets go.
func (t *Turns) Take(lockPath string, wait time.Duration) (end func()) {
	if t.held.Load() {
		return func() {}
	}
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return func() {} // no .git/zerg yet (the first plan), or read-only
	}
	var mu sync.Mutex
	abandoned := false
	got := make(chan error, 1)
	go func() {
		// flock blocks its thread: it cannot be cancelled, so a wait given
		// up on ends here when the turn comes, releasing it at once.
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		mu.Lock()
		defer mu.Unlock()
		if abandoned {
			f.Close()
			t.held.Store(false)
			return
		}
		got <- err
	}()
	turn := func(err error) func() {
		if err != nil { // no flock here (a file system without it)
			f.Close()
			return func() {}
		}
		return func() { f.Close() } // closing the last descriptor unlocks
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case err := <-got:
		return turn(err)
	case <-timer.C:
		mu.Lock()
		defer mu.Unlock()
		select {
		case err := <-got:
			return turn(err)
		default:
		}
		abandoned = true
		t.held.Store(true)
		return func() {}
	}
}
