//go:build unix

package gitstore

import (
	"bufio"
	"os/exec"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/state"
)

// TestWriterTurnHeldElsewhere: another process holding the writers' turn
// (a stopped git-zerg, or a worker holding the file on purpose) costs one
// bounded wait, after which transactions go on at once, the
// compare-and-swap deciding; once the holder lets go, turns are taken
// again. Nothing is refused meanwhile.
func TestWriterTurnHeldElsewhere(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("needs util-linux's flock to hold the lock from another process")
	}
	dir := newRepo(t)
	s := openStore(t, dir)
	plan(t, s, "f", tasks(3))
	holder := exec.Command("flock", s.Layout().WriterLock(), "sh", "-c", "echo held; read x")
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); holder.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "held\n" {
		t.Fatalf("flock said %q", line)
	}

	s.Retry = 300 * time.Millisecond // the wait for a turn is bounded by it
	for _, id := range []string{"T000", "T001"} {
		if err := setStatus(s, "f", id, state.Claimed); err != nil {
			t.Fatalf("%s while another process holds the turn: %v", id, err)
		}
	}
	if !s.repo.refs.Turns.GivenUp() {
		t.Fatal("the wait given up on is not remembered: every transaction would wait again")
	}

	stdin.Close() // the holder lets go
	holder.Wait()
	for deadline := time.Now().Add(30 * time.Second); s.repo.refs.Turns.GivenUp(); {
		if time.Now().After(deadline) {
			t.Fatal("the turn given up on was never taken after its holder let go")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := setStatus(s, "f", "T002", state.Claimed); err != nil {
		t.Fatal(err)
	}
	tx, err := s.View("f")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"T000", "T001", "T002"} {
		if tk, _ := tx.Task(id); tk.Status != state.Claimed {
			t.Errorf("%s is %s, want claimed", id, tk.Status)
		}
	}
}
