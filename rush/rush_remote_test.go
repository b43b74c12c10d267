package rush

import (
	"reflect"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/worktree"
)

// TestFreshDue: a background catch-up is due at once when none ran, and
// otherwise once half as long as the last one took has passed since it
// ended, so that a slow remote is not fetched from without pause.
func TestFreshDue(t *testing.T) {
	var r rush
	now := time.Unix(1e9, 0)
	if !r.freshDue(now) {
		t.Fatal("not due before any catch-up")
	}
	r.caughtUp.Store(now.UnixNano())
	r.catchUpTook.Store(int64(400 * time.Millisecond))
	for _, c := range []struct {
		after time.Duration
		due   bool
	}{{0, false}, {150 * time.Millisecond, false}, {199 * time.Millisecond, false}, {200 * time.Millisecond, true}, {time.Second, true}} {
		if got := r.freshDue(now.Add(c.after)); got != c.due {
			t.Errorf("%v after a 400 ms catch-up: due %v, want %v", c.after, got, c.due)
		}
	}
	r.catchUpTook.Store(int64(50 * time.Millisecond))
	if !r.freshDue(now.Add(freshEvery)) {
		t.Error("a 50 ms catch-up is not due again at the next tick")
	}
}

// TestJoinLost: after a lost race a host merges its own pins and every
// other verified task, each once, and nothing that is not verified.
func TestJoinLost(t *testing.T) {
	mk := func(id string, st state.Status, commit string) *state.Task {
		tk := &state.Task{Spec: &levels.Task{ID: id}, Level: 1, Status: st}
		tk.Commit = commit
		return tk
	}
	tasks := []*state.Task{
		mk("A", state.Verified, "a1"), // this host's, already in pins
		mk("B", state.Verified, "b1"), // another host's
		mk("C", state.Claimed, ""),
		mk("D", state.Done, "d1"),
		mk("E", state.Verified, "e1"),
	}
	got := joinLost([]worktree.Pin{{Task: "A", Commit: "a1"}}, tasks)
	want := []worktree.Pin{{Task: "A", Commit: "a1"}, {Task: "B", Commit: "b1"}, {Task: "E", Commit: "e1"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("joinLost = %v, want %v", got, want)
	}
}
