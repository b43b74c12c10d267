//go:build unix

package gitstore

import (
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// writerLock serialises this repository's writers across processes. The
// compare-and-swap alone keeps the state right, but not fair: with a dozen
// writers on a loaded machine one of them could lose every race for the
// whole retry budget and give up with nothing wrong. Under the lock, only
// writers that do not take it (git itself, an older git-zerg) can still
// move a ref first. The kernel drops a flock with the process that held
// it, so a crash leaves nothing to clean up; where the file cannot be
// opened (a read-only repository) writers go on with the compare-and-swap
// alone.
func (s *Store) writerLock(deadline time.Time) (unlock func()) {
	name := filepath.Join(s.ZergDir(), "writer.lock")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		if os.MkdirAll(filepath.Dir(name), 0o755) != nil {
			return func() {}
		}
		if f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644); err != nil {
			return func() {}
		}
	}
	wait := 200 * time.Microsecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }
		}
		if err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			f.Close()
			return func() {}
		}
		if time.Now().After(deadline) {
			// Go on unserialised: the compare-and-swap still decides.
			f.Close()
			return func() {}
		}
		writerWait(wait)
		if wait < 8*time.Millisecond {
			wait *= 2
		}
	}
}

// writerWait is the pause between tries of the lock; tests use it to see
// a writer wait and to let the holder go.
var writerWait = time.Sleep
