package rushmarker

import (
	"errors"
	"os"
	"testing"

	"github.com/git-zerg/git-zerg/gitstore/storetest"
)

// TestAcquireHeld: a live holder refuses a second taker with its pid, and
// its release frees the marker for the next.
func TestAcquireHeld(t *testing.T) {
	s := storetest.New(t)
	m, err := Acquire(s, "f")
	if err != nil {
		t.Fatal(err)
	}
	if h, alive := Read(s, "f"); h == nil || !alive || h.PID != os.Getpid() {
		t.Fatalf("Read = %+v, %v; want this process, alive", h, alive)
	}
	var held *HeldError
	if _, err := Acquire(s, "f"); !errors.As(err, &held) || held.PID != os.Getpid() {
		t.Fatalf("second Acquire = %v, want a HeldError naming pid %d", err, os.Getpid())
	}
	m.Release()
	if h, _ := Read(s, "f"); h != nil {
		t.Fatalf("Read after Release = %+v, want none", h)
	}
	m, err = Acquire(s, "f")
	if err != nil || m.Previous() != nil {
		t.Fatalf("Acquire after Release = %v, %v; want the marker, no previous holder", m, err)
	}
	m.Release()
}
