package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

// What plan --update makes of each task: an unchanged spec keeps the task
// as it stands, a changed one starts again (its merged work taken out when
// it was done), a task a worker holds refuses, an added one is pending, a
// removed done one has its work taken out.
func TestDiffPlan(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	task := func(id, title string, st state.Status, worker string) *state.Task {
		return &state.Task{Spec: &levels.Task{ID: id, Title: title}, Status: st, Worker: worker, Attempts: 1, Commit: "c-" + id}
	}
	old := []*state.Task{
		task("A", "a", state.Done, ""),
		task("B", "b", state.Claimed, "w1"),
		task("C", "c", state.Failed, ""),
		task("D", "d", state.Done, ""),
		task("E", "e", state.Failed, ""),
		task("G", "g", state.Claimed, "w2"),
	}
	fresh := []*state.Task{
		task("A", "a, again", state.Pending, ""),
		task("B", "b, again", state.Pending, ""),
		task("C", "c", state.Pending, ""),
		task("E", "e, again", state.Pending, ""),
		task("F", "f", state.Pending, ""),
	}
	d := diffPlan(old, fresh, now)
	ids := func(ts []*state.Task) (out []string) {
		for _, t := range ts {
			out = append(out, t.ID())
		}
		return out
	}
	for _, c := range []struct {
		what      string
		got, want []string
	}{
		{"kept", d.kept, []string{"C"}},
		{"changed", d.changed, []string{"A", "E"}},
		{"added", d.added, []string{"F"}},
		{"removed", d.removed, []string{"D"}},
		{"held", d.held, []string{"B (w1)", "G (w2)"}},
		{"taken out", ids(d.takeOut), []string{"A", "D"}},
		{"stored", ids(d.out), []string{"A", "C", "E", "F"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: %q, want %q", c.what, c.got, c.want)
		}
	}
	byID := map[string]*state.Task{}
	for _, t := range d.out {
		byID[t.ID()] = t
	}
	if c := byID["C"]; c.Status != state.Failed || c.Commit != "c-C" || c == old[2] {
		t.Errorf("unchanged C: %s %q (a copy: %v), want it as it stood, copied", c.Status, c.Commit, c != old[2])
	}
	a := byID["A"]
	if a.Status != state.Pending || a.Attempts != 0 || a.Commit != "" || a.Spec.Title != "a, again" {
		t.Errorf("changed A: %s, %d attempts, commit %q, title %q; want pending afresh with the new spec", a.Status, a.Attempts, a.Commit, a.Spec.Title)
	}
	if n := len(a.History); n == 0 || a.History[n-1].Op != state.OpUpdate || a.History[n-1].From != state.Done || !a.History[n-1].At.Equal(now) {
		t.Errorf("changed A's history ends %+v, want the update from done", a.History)
	}
	if old[0].Status != state.Done {
		t.Error("the stored task was changed in place")
	}
}
