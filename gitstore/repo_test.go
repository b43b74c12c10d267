package gitstore

import (
	"testing"
	"time"

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

	if a.ProcessLock() == b.ProcessLock() || a.memo() == b.memo() {
		t.Fatal("two Repos of one repository share the process's lock or memo")
	}
	if same := openIn(t, a, dir); same.ProcessLock() != a.ProcessLock() || same.memo() != a.memo() {
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
// another repository opened in the same process: neither the memo nor
// what a layer above keeps there (Value). What that layer keeps is
// tested with it (gitstore/remotes).
func TestReposShareNothing(t *testing.T) {
	a, b := newRepo(t), newRepo(t)
	sa, sb := openStore(t, a), openStore(t, b)
	plan(t, sa, "f", tasks(1))
	plan(t, sb, "f", tasks(1))
	tip, err := sa.ReadRef(FeatureRef("f"))
	if err != nil {
		t.Fatal(err)
	}
	if !sa.memo().objs.Has(tip) || sb.memo().objs.Has(tip) {
		t.Errorf("a's tip %s in a's memo %v, in b's %v; want only a's", tip, sa.memo().objs.Has(tip), sb.memo().objs.Has(tip))
	}
	type key struct{}
	made := 0
	mk := func() any { made++; return new(int) }
	va, vb := sa.Repo().Value(key{}, mk), sb.Repo().Value(key{}, mk)
	if va == vb || made != 2 {
		t.Errorf("the two Repos share a value (%d made)", made)
	}
	if again := openIn(t, sa, a).Repo().Value(key{}, mk); again != va || made != 2 {
		t.Errorf("a store of a's Repo made its own value (%d made)", made)
	}
}
