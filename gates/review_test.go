package gates

import (
	"strings"
	"testing"

	"github.com/git-zerg/git-zerg/state"
)

func TestShipGate(t *testing.T) {
	v := task("A", state.Verified)
	v.Commit = "w1"
	v.Spec.Issue = 7
	ok := ShipFacts{Task: v, PerTask: true, Branch: "zerg/f/issue-7", Pushed: true, PR: 3}
	if err := Ship(ok); err != nil {
		t.Fatalf("ship with every fact: %v", err)
	}
	noIssue := task("B", state.Verified)
	for name, c := range map[string]struct {
		f    ShipFacts
		want string
	}{
		"no issue, per task": {ShipFacts{Task: noIssue, PerTask: true, Branch: "b", Pushed: true, PR: 3}, "the task has no issue"},
		"not pushed":         {ShipFacts{Task: v, PerTask: true, Branch: "zerg/f/issue-7", PR: 3}, "is not on the remote's zerg/f/issue-7"},
		"no PR":              {ShipFacts{Task: v, PerTask: true, Branch: "zerg/f/issue-7", Pushed: true}, "no pull request"},
		"not verified":       {ShipFacts{Task: task("C", state.Pending), Branch: "s", Pushed: true, PR: 3}, "task is pending, not verified"},
	} {
		if got := reasons(Ship(c.f)); !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}
	// A feature's review needs no issue.
	if err := Ship(ShipFacts{Task: noIssue, Branch: "zerg/f/staging", Pushed: true, PR: 3}); err != nil {
		t.Errorf("feature review of a task without issue: %v", err)
	}
}

func TestLandGate(t *testing.T) {
	v := task("A", state.Verified)
	v.Commit, v.PR, v.Spec.Issue = "w1", 3, 7
	good := LandFacts{Task: v, Merged: true, MergeCommit: "m1", Base: "main", OnBase: true, HasWork: true, Head: "w1", HeadVerified: true, IssueClosed: true}
	if err := Land(good); err != nil {
		t.Fatalf("land with every fact: %v", err)
	}
	noPR := v.Clone()
	noPR.PR = 0
	for name, c := range map[string]struct {
		mod  func(f *LandFacts)
		want string
	}{
		"review without PR":  {func(f *LandFacts) { f.Task = noPR }, "not in review: no pull request recorded"},
		"not merged":         {func(f *LandFacts) { f.Merged = false }, "pull request #3 is not merged"},
		"not on base":        {func(f *LandFacts) { f.OnBase = false }, "merge commit m1 of pull request #3 is not on main"},
		"merge without work": {func(f *LandFacts) { f.HasWork = false }, "does not contain the task's work w1"},
		"issue open":         {func(f *LandFacts) { f.IssueClosed = false }, "issue #7 is still open"},
		"head moved":         {func(f *LandFacts) { f.Head, f.HeadVerified = "x2", false }, "merged x2, not the work verified (w1)"},
		"not verified":       {func(f *LandFacts) { f.Task = task("B", state.Done) }, "task is done, not verified"},
	} {
		f := good
		c.mod(&f)
		if got := reasons(Land(f)); !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}
}

func TestReplayReview(t *testing.T) {
	a := claimT(planned("A", []string{"a.txt"}), 2, "w", "base")
	a = doneT(a, 3, state.Verified, "w1")
	shipped := apply(a, 4, func(x tx) {
		ev := x.ev("ship", state.Verified, "", "in review", "")
		ev.PR = 9
		x.t.Record(ev)
		x.t.PR = 9
	})
	if ps := Replay(commitOf("ship", 4, a, shipped, nil, nil)); len(ps) != 0 {
		t.Fatalf("a legal ship: %v", ps)
	}
	landed := apply(shipped, 5, func(x tx) { x.t.Record(x.ev("land", state.Done, "", "merged", "m1")) })
	if ps := Replay(commitOf("land", 5, shipped, landed, nil, nil)); len(ps) != 0 {
		t.Fatalf("a legal land: %v", ps)
	}
	// fsck's facts: the merge commit must contain the task's work.
	q := WorkNeeded("land", shipped, landed)
	if len(q) != 1 || q[0] != (WorkQuery{Commit: "m1", Base: "w1", Mode: Landed}) {
		t.Fatalf("facts asked for a land: %+v", q)
	}
	without := map[string]Work{"m1": {Exists: true, BaseExists: true}}
	if got := problemText(Replay(commitOf("land", 5, shipped, landed, nil, without))); !strings.Contains(got, "merge commit m1 does not contain the task's work w1") {
		t.Errorf("land by a merge without the work: %q", got)
	}
	with := map[string]Work{"m1": {Exists: true, BaseExists: true, Descends: true}}
	if ps := Replay(commitOf("land", 5, shipped, landed, nil, with)); len(ps) != 0 {
		t.Errorf("land by a merge with the work: %v", ps)
	}
	// A land of a task never shipped, and a PR set without a ship.
	bad := apply(a, 4, func(x tx) { x.t.Record(x.ev("land", state.Done, "", "merged", "")) })
	got := problemText(Replay(commitOf("land", 4, a, bad, nil, nil)))
	for _, want := range []string{"of a task with no pull request", "names no merge commit"} {
		if !strings.Contains(got, want) {
			t.Errorf("land without PR: %q lacks %q", got, want)
		}
	}
	forged := a.Clone()
	forged.PR = 4
	if got := problemText(Replay(commitOf("ship", 4, a, forged, nil, nil))); !strings.Contains(got, "without a transition (pr)") {
		t.Errorf("PR set without a ship: %q", got)
	}
	// A done task whose issue was reopened is blocked; a task whose issue
	// was closed before its work was done is blocked, never done.
	if !state.OpReopen.Legal(state.Done, state.Blocked) || !state.OpClose.Legal(state.Pending, state.Blocked) || state.OpClose.Legal(state.Claimed, state.Blocked) {
		t.Error("reopen and close transitions")
	}
	for _, from := range state.Statuses {
		if state.OpClose.Legal(from, state.Done) {
			t.Errorf("close may take a %s task to done", from)
		}
	}
}

func TestCloseGate(t *testing.T) {
	closed := func(st state.Status, pr int) IssueFacts {
		x := task("A", st)
		x.Spec.Issue, x.PR = 7, pr
		return IssueFacts{Task: x}
	}
	for _, st := range []state.Status{state.Pending, state.Failed, state.Verified} {
		if err := Close(closed(st, 0)); err != nil {
			t.Errorf("close of a %s task: %v", st, err)
		}
	}
	for name, c := range map[string]struct {
		f    IssueFacts
		want string
	}{
		"claimed":   {closed(state.Claimed, 0), "task is claimed"},
		"done":      {closed(state.Done, 0), "task is done"},
		"blocked":   {closed(state.Blocked, 0), "task is blocked"},
		"in review": {closed(state.Verified, 4), "in review: pull request #4 decides"},
		"open":      {IssueFacts{Task: closed(state.Pending, 0).Task, Open: true}, "its issue is not closed"},
	} {
		if got := reasons(Close(c.f)); !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}
}

func problemText(ps []Problem) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Msg)
	}
	return strings.Join(out, "; ")
}
