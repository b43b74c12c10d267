package gitstore

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/state"
)

// TestTwoReposRaceAsProcesses: two Repos of one repository in one process
// are two processes to each other. While a transaction of one is between
// its read and its ref update, the other's goes through (no lock of the
// process holds it back), the first loses the compare-and-swap, starts
// over on the new state, and both land. Stores of one Repo share its lock.
func TestTwoReposRaceAsProcesses(t *testing.T) {
	dir := newRepo(t)
	a := openStore(t, dir)
	plan(t, a, "f", tasks(2))
	b := openStore(t, dir)
	b.Retry = time.Second // a's turn among the writers is held: b goes on without it after this

	if a.processLock() == b.processLock() || a.memo() == b.memo() {
		t.Fatal("two Repos of one repository share the process's lock or memo")
	}
	if same := openIn(t, a, dir); same.processLock() != a.processLock() || same.memo() != a.memo() {
		t.Fatal("two stores of one Repo do not share its lock and memo")
	}

	attempts := 0
	a.beforeCommit = func() {
		attempts++
		if attempts > 1 {
			return
		}
		done := make(chan error, 1)
		go func() { done <- setStatus(b, "f", "T001", state.Blocked) }()
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the other Repo's transaction waited for this one's: they share a lock")
		}
	}
	if err := setStatus(a, "f", "T000", state.Done); err != nil {
		t.Fatal(err)
	}
	if attempts != 2 {
		t.Errorf("a's transaction ran %d times, want 2 (lost the compare-and-swap once)", attempts)
	}
	tx, err := openStore(t, dir).View("f")
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]state.Status{"T000": state.Done, "T001": state.Blocked} {
		if tk, err := tx.Task(id); err != nil || tk.Status != want {
			t.Errorf("%s: %v %v, want %s", id, tk, err, want)
		}
	}
	if n := git(t, dir, "rev-list", "--count", FeatureRef("f")); n != "3" {
		t.Errorf("%s state commits, want 3: the plan and both transitions", n)
	}
}

// TestReposShareNothing: what one repository's Repo holds never reaches
// another repository opened in the same process: the listener a rush sets
// on its Repo hears its own arbiter's waits only, and neither the memo nor
// what was seen on an arbiter is shared.
func TestReposShareNothing(t *testing.T) {
	ctx := context.Background()
	a, b := newRepo(t), newRepo(t)
	sa, sb := openStore(t, a), openStore(t, b)
	plan(t, sa, "f", tasks(1))
	plan(t, sb, "f", tasks(1))
	gone := func(name string) string { return filepath.Join(t.TempDir(), name+".git") } // no remote there: never answers
	ra, rb := gone("a"), gone("b")
	sa.SetArbiter(ra, acceptAll)
	sb.SetArbiter(rb, acceptAll)
	sa.SetArbiterWait(time.Minute)
	sb.SetArbiterWait(time.Minute)

	var mu sync.Mutex
	var heard []string
	var cancel context.CancelFunc
	sa.Repo().OnRemoteWait(func(remote string, err error, wait time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		heard = append(heard, remote)
		cancel() // one wait heard is enough: end it at once
	})
	update := func(s *Store) error {
		c, cc := context.WithCancel(ctx)
		defer cc()
		mu.Lock()
		cancel = cc
		mu.Unlock()
		return s.Update(c, "f", time.Now, func(tx *Tx) (*Message, error) { return putStatus(tx, "T000", state.Done) })
	}
	var re *RemoteError
	if err := update(sb); !errors.As(err, &re) {
		t.Fatalf("b's update with its arbiter gone: %v, want it failed on the remote", err)
	}
	if err := update(sa); !errors.As(err, &re) {
		t.Fatalf("a's update with its arbiter gone: %v, want it failed on the remote", err)
	}
	mu.Lock()
	if len(heard) != 1 || heard[0] != ra {
		t.Errorf("a's listener heard waits for %v, want its own arbiter %s once", heard, ra)
	}
	mu.Unlock()

	tip, err := sa.ReadRef(FeatureRef("f"))
	if err != nil {
		t.Fatal(err)
	}
	if !sa.memo().objs.Has(tip) || sb.memo().objs.Has(tip) {
		t.Errorf("a's tip %s in a's memo %v, in b's %v; want only a's", tip, sa.memo().objs.Has(tip), sb.memo().objs.Has(tip))
	}
	sa.remember("f", arbiterView{Feature: tip}, tip, plumbing.ZeroHash)
	sb.SetArbiter(ra, acceptAll) // the same arbiter and feature: still nothing known
	if _, ok := sb.fresh("f"); ok {
		t.Error("what a saw on its arbiter is known to b")
	}
	if _, ok := sa.fresh("f"); !ok {
		t.Error("a forgot what it saw on its arbiter")
	}
}
