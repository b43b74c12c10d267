//go:build unix

package gitstore

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/state"
)

// TestWriterWaitsForOtherProcess: a writer of another process (here, the
// same lock taken through its own open file, as flock sees a process)
// holds the repository's writer lock; a transaction waits for it instead
// of racing, and goes through once it is released.
func TestWriterWaitsForOtherProcess(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	plan(t, s, "f", tasks(1))
	held, err := os.OpenFile(filepath.Join(s.ZergDir(), "writer.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := syscall.Flock(int(held.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	var order []string
	defer func(w func(time.Duration)) { writerWait = w }(writerWait)
	writerWait = func(time.Duration) {
		if len(order) == 0 {
			order = append(order, "waited")
			held.Close() // the other writer is done
		}
	}
	s.Retry = time.Hour
	if err := setStatus(s, "f", "T000", state.Done); err != nil {
		t.Fatal(err)
	}
	if len(order) == 0 {
		t.Fatal("the transaction went through while another process held the writer lock")
	}
}
