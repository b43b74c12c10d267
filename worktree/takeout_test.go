package worktree

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestTakeOutAll(t *testing.T) {
	top, m := newRepo(t)
	ctx := context.Background()
	staging, _ := m.EnsureStaging(ctx, "")
	pins := workers(t, m, staging, "a.txt", "b.txt")
	res, err := m.Merge(ctx, staging, pins)
	if err != nil || res.Conflict != nil {
		t.Fatal(err, res.Conflict)
	}
	// T3's work, merged after, changes what T1 brought.
	w, err := m.Add(ctx, 3, res.Tip)
	if err != nil {
		t.Fatal(err)
	}
	later := Pin{Task: "T3", Commit: commitFile(t, w.Dir, "a.txt", "a.txt changed later\n")}
	res, err = m.Merge(ctx, res.Tip, []Pin{later})
	if err != nil || res.Conflict != nil {
		t.Fatal(err, res.Conflict)
	}
	tip := res.Tip
	out := func(ps ...Pin) []Out {
		var o []Out
		for _, p := range ps {
			o = append(o, Out{Commit: p.Commit, Label: p.Task})
		}
		return o
	}
	moves := func() int {
		return len(strings.Split(git(t, top, "reflog", "--format=%H", "refs/heads/zerg/feat/staging"), "\n"))
	}
	before := moves()

	// T1 alone would undo T3's change: refused, nothing moves.
	_, err = m.TakeOutAll(ctx, out(pins[0], pins[1]))
	var c *Conflict
	if !errors.As(err, &c) || c.Task != "T1" || !slices.Equal(c.Files, []string{"a.txt"}) {
		t.Fatalf("TakeOutAll(T1, T2) = %v, want a conflict of T1 on a.txt", err)
	}
	if got := git(t, top, "rev-parse", "zerg/feat/staging"); got != tip || moves() != before {
		t.Fatal("staging moved despite the conflict")
	}

	// With T3, newest first, whatever the order given: one move.
	got, err := m.TakeOutAll(ctx, out(pins[0], pins[1], later))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Held, []string{"T1", "T2", "T3"}) || !slices.Equal(got.Reverted, []string{"T3", "T2", "T1"}) {
		t.Fatalf("TakeOutAll = %+v", got)
	}
	if now := git(t, top, "rev-parse", "zerg/feat/staging"); now != got.Tip || moves() != before+1 {
		t.Fatalf("staging at %s after %d moves, want %s after one", now, moves()-before, got.Tip)
	}
	for _, f := range []string{"a.txt", "b.txt"} {
		if s := git(t, top, "show", "zerg/feat/staging:"+f); s != f {
			t.Fatalf("%s after the take-out: %q", f, s)
		}
	}
	if git(t, top, "rev-parse", "zerg/feat/staging^{tree}") != git(t, top, "rev-parse", staging+"^{tree}") {
		t.Fatal("staging's tree is not the one before the merges")
	}

	// Again: found, not made twice. Work staging never held, no commit
	// and an unknown one are not found.
	fresh := workers(t, m, got.Tip, "c.txt")[0]
	again, err := m.TakeOutAll(ctx, append(out(later, fresh), Out{Label: "none"}, Out{Commit: strings.Repeat("1", 40), Label: "gone"}))
	if err != nil {
		t.Fatal(err)
	}
	if again.Tip != got.Tip || !slices.Equal(again.Held, []string{"T3"}) || len(again.Reverted) != 0 || moves() != before+1 {
		t.Fatalf("TakeOutAll again = %+v", again)
	}

	// No staging branch: nothing to take out, and none made.
	other := &Manager{Git: m.Git, Feature: "none", Root: m.Root}
	if res, err := other.TakeOutAll(ctx, out(pins[0])); err != nil || res.Tip != "" || len(res.Held) != 0 {
		t.Fatalf("TakeOutAll without staging = %+v, %v", res, err)
	}
	if c, err := other.resolve1(ctx, other.stagingRef()); err != nil || c != "" {
		t.Fatalf("a staging branch was made: %q, %v", c, err)
	}
}
