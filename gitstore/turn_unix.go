//go:build unix

package gitstore

import (
	"os"
	"sync"
	"syscall"
	"time"
)

// writerTurn waits for this process's turn among the processes of this
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
func (s *Store) writerTurn(wait time.Duration) (end func()) {
	if s.repo.turnHeld.Load() {
		return func() {}
	}
	f, err := os.OpenFile(s.Layout().WriterLock(), os.O_RDWR|os.O_CREATE, 0o600)
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
			s.repo.turnHeld.Store(false)
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
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case err := <-got:
		return turn(err)
	case <-t.C:
		mu.Lock()
		defer mu.Unlock()
		select {
		case err := <-got:
			return turn(err)
		default:
		}
		abandoned = true
		s.repo.turnHeld.Store(true)
		return func() {}
	}
}
