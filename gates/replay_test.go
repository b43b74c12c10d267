package gates

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

// The tests build histories the way the CLI writes them (claim.go,
// done.go, transitions.go, lease.go, merge.go): each helper applies one
// transaction to a clone of the task, stamped with the commit's clock.

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func planned(id string, owned []string, deps ...string) *state.Task {
	return &state.Task{
		Spec:    &levels.Task{ID: id, Title: id, Files: levels.Files{Create: owned}, Dependencies: deps},
		Level:   1,
		Status:  state.Pending,
		History: []state.Event{{Clock: 1, At: t0, Op: "plan", To: state.Pending}},
	}
}

// tx applies fn to a clone of t as the transaction of commit clock.
type tx struct {
	clock uint64
	t     *state.Task
}

func (x tx) ev(op state.Op, to state.Status, worker, reason, commit string) state.Event {
	return state.Event{Clock: x.clock, At: t0.Add(time.Duration(x.clock) * time.Minute), Op: op, To: to, Worker: worker, Reason: reason, Commit: commit}
}

func apply(t *state.Task, clock uint64, fn func(x tx)) *state.Task {
	c := t.Clone()
	fn(tx{clock, c})
	return c
}

func claimT(t *state.Task, clock uint64, worker, base string) *state.Task {
	return apply(t, clock, func(x tx) {
		if x.t.Status == state.Failed {
			x.t.Record(x.ev("backoff", state.Pending, "", "backoff over", ""))
		}
		x.t.Record(x.ev("claim", state.Claimed, worker, "", ""))
		x.t.Worker, x.t.Owner, x.t.Base, x.t.Commit, x.t.Reason = worker, worker+"@h", base, "", ""
		x.t.NotBefore = time.Time{}
		x.t.Attempts++
	})
}

func doneT(t *state.Task, clock uint64, to state.Status, commit string) *state.Task {
	return apply(t, clock, func(x tx) {
		x.t.Record(x.ev("done", to, x.t.Worker, "", commit))
		x.t.Commit = commit
	})
}

func failT(t *state.Task, clock uint64, block bool) *state.Task {
	return apply(t, clock, func(x tx) {
		x.t.Record(x.ev("fail", state.Failed, x.t.Worker, "broken", ""))
		if block {
			x.t.Record(x.ev("block", state.Blocked, x.t.Worker, "attempts exhausted", ""))
		} else {
			x.t.NotBefore = t0.Add(time.Hour)
		}
		x.t.Reason = "broken"
	})
}

func retryT(t *state.Task, clock uint64) *state.Task {
	return apply(t, clock, func(x tx) {
		x.t.Record(x.ev("retry", state.Pending, "", "retry by me", ""))
		x.t.Attempts, x.t.NotBefore, x.t.Reason, x.t.Worker, x.t.Owner = 0, time.Time{}, "", "", ""
	})
}

func releaseT(t *state.Task, clock uint64) *state.Task {
	return apply(t, clock, func(x tx) {
		x.t.Record(x.ev("release", state.Pending, x.t.Worker, "released", ""))
		x.t.Attempts--
		x.t.Worker, x.t.Owner = "", ""
	})
}

func mergeT(t *state.Task, clock uint64) *state.Task {
	return apply(t, clock, func(x tx) { x.t.Record(x.ev("merge", state.Done, x.t.Worker, "", x.t.Commit)) })
}

func approveT(t *state.Task, clock uint64) *state.Task {
	return apply(t, clock, func(x tx) {
		x.t.Record(x.ev("approve", x.t.Status, "", "approved by me", ""))
		x.t.Approved = "me"
	})
}

func statuses(m map[string]state.Status) func(string) state.Status {
	return func(id string) state.Status { return m[id] }
}

// commitOf is the state commit of one task change.
func commitOf(op state.Op, clock uint64, before, after *state.Task, st func(string) state.Status, work map[string]Work) Commit {
	id := ""
	if after != nil {
		id = after.ID()
	} else {
		id = before.ID()
	}
	task := id
	if op == "plan" || op == "expire" {
		task = ""
	}
	return Commit{Hash: "c0ffee", Op: op, Task: task, Clock: clock, ParentClock: clock - 1, StoredClock: clock,
		Root:  op == "plan" && before == nil,
		Steps: []Step{{ID: id, Before: before, After: after, Status: st, Work: work}}}
}

var goodWork = map[string]Work{"w1": {Exists: true, BaseExists: true, Descends: true, New: true, Touched: []string{"a.txt"}}}

func TestReplayLegalHistory(t *testing.T) {
	// plan, claim, fail (backoff), claim again, fail and block, retry,
	// claim, release, claim, done (verified), merge: every step clean.
	p := planned("T1", []string{"a.txt"}, "T0")
	deps := statuses(map[string]state.Status{"T0": state.Done})
	var steps []Commit
	steps = append(steps, commitOf("plan", 1, nil, p, deps, nil))
	c1 := claimT(p, 2, "w1", "base")
	steps = append(steps, commitOf("claim", 2, p, c1, deps, nil))
	f1 := failT(c1, 3, false)
	steps = append(steps, commitOf("fail", 3, c1, f1, deps, nil))
	c2 := claimT(f1, 4, "w1", "base")
	steps = append(steps, commitOf("claim", 4, f1, c2, deps, nil))
	f2 := failT(c2, 5, true)
	steps = append(steps, commitOf("fail", 5, c2, f2, deps, nil))
	r := retryT(f2, 6)
	steps = append(steps, commitOf("retry", 6, f2, r, deps, nil))
	c3 := claimT(r, 7, "w2", "base")
	steps = append(steps, commitOf("claim", 7, r, c3, deps, nil))
	rel := releaseT(c3, 8)
	steps = append(steps, commitOf("release", 8, c3, rel, deps, nil))
	c4 := claimT(rel, 9, "w2", "base")
	steps = append(steps, commitOf("claim", 9, rel, c4, deps, nil))
	v := doneT(c4, 10, state.Verified, "w1")
	steps = append(steps, commitOf("done", 10, c4, v, deps, goodWork))
	m := mergeT(v, 11)
	steps = append(steps, commitOf("merge", 11, v, m, deps, goodWork))
	for i, c := range steps {
		if ps := Replay(c); len(ps) > 0 {
			t.Errorf("step %d (%s): %v", i, c.Op, ps)
		}
	}
	if m.Status != state.Done || m.Attempts != 1 {
		t.Fatalf("built history ends %s with %d attempts", m.Status, m.Attempts)
	}

	// A high-risk task approved then claimed; a check-only task done in
	// shared mode without touching anything.
	h := planned("H", nil)
	h.Spec.Risk = "high"
	a := approveT(h, 2)
	ca := claimT(a, 3, "w1", "base")
	da := doneT(ca, 4, state.Done, "base")
	for _, c := range []Commit{commitOf("approve", 2, h, a, deps, nil), commitOf("claim", 3, a, ca, deps, nil),
		commitOf("done", 4, ca, da, deps, map[string]Work{"base": {Exists: true, BaseExists: true, Descends: true}})} {
		if ps := Replay(c); len(ps) > 0 {
			t.Errorf("%s: %v", c.Op, ps)
		}
	}
}

func TestReplayRefusals(t *testing.T) {
	p := planned("T1", []string{"a.txt"}, "T0")
	done := statuses(map[string]state.Status{"T0": state.Done})
	pending := statuses(map[string]state.Status{"T0": state.Pending})
	c := claimT(p, 2, "w1", "base")
	v := doneT(c, 3, state.Verified, "w1")

	tests := []struct {
		name   string
		commit func() Commit
		want   string
	}{
		{"status edited by hand", func() Commit {
			after := p.Clone()
			after.Status = state.Done
			return commitOf("claim", 2, p, after, done, nil)
		}, "state changed without a transition (status pending → done)"},
		{"edit without trailers", func() Commit {
			after := c.Clone()
			after.Attempts = 0
			cm := commitOf("", 3, c, after, done, nil)
			return cm
		}, "no Zerg-Op trailer"},
		{"illegal transition", func() Commit {
			return commitOf("done", 2, p, apply(p, 2, func(x tx) { x.t.Record(x.ev("done", state.Done, "w1", "", "w1")); x.t.Commit = "w1" }), done, goodWork)
		}, "done pending → done is not a legal transition"},
		{"broken chain", func() Commit {
			after := apply(c, 3, func(x tx) {
				x.t.History = append(x.t.History, state.Event{Clock: 3, Op: "backoff", From: state.Failed, To: state.Pending})
				x.t.Status = state.Pending
			})
			return commitOf("expire", 3, c, after, done, nil)
		}, "starts from failed, but the task was claimed"},
		{"final status differs", func() Commit {
			after := failT(c, 3, false)
			after.Status = state.Pending
			return commitOf("fail", 3, c, after, done, nil)
		}, "status pending, but its transitions lead to failed"},
		{"history rewritten", func() Commit {
			after := failT(c, 3, false)
			after.History[1].Worker = "someone-else"
			return commitOf("fail", 3, c, after, done, nil)
		}, "history rewritten: event 2"},
		{"history truncated", func() Commit {
			after := p.Clone()
			after.History = nil
			return commitOf("retry", 3, c, after, done, nil)
		}, "history rewritten: 2 of its 2 events removed"},
		{"claim before dependencies", func() Commit {
			return commitOf("claim", 2, p, c, pending, nil)
		}, "before its dependencies were done (T0 is pending)"},
		{"claim without approval", func() Commit {
			h := planned("H", nil)
			h.Spec.Risk = "critical"
			return commitOf("claim", 2, h, claimT(h, 2, "w1", "base"), done, nil)
		}, "without approval (risk critical)"},
		{"approval forged with the claim", func() Commit {
			h := planned("H", nil)
			h.Spec.Risk = "high"
			after := claimT(h, 2, "w1", "base")
			after.Approved = "me"
			return commitOf("claim", 2, h, after, done, nil)
		}, "approved by me without an approve transition"},
		{"done commit missing", func() Commit {
			return commitOf("done", 3, c, v, done, map[string]Work{})
		}, "commit w1 is not in this repository"},
		{"done base missing", func() Commit {
			return commitOf("done", 3, c, v, done, map[string]Work{"w1": {Exists: true}})
		}, "the claim's base base is not in this repository"},
		{"done commit not from base", func() Commit {
			return commitOf("done", 3, c, v, done, map[string]Work{"w1": {Exists: true, BaseExists: true}})
		}, "does not descend from the claim's base"},
		{"done touches unowned path", func() Commit {
			return commitOf("done", 3, c, v, done, map[string]Work{"w1": {Exists: true, BaseExists: true, Descends: true, New: true, Touched: []string{"a.txt", "b.txt"}}})
		}, "touches paths the task does not own: b.txt"},
		{"done without new work", func() Commit {
			return commitOf("done", 3, c, v, done, map[string]Work{"w1": {Exists: true, BaseExists: true, Descends: true}})
		}, "no new commit since the claim"},
		{"check-only task changed files", func() Commit {
			k := planned("K", nil)
			kc := claimT(k, 2, "w1", "base")
			return commitOf("done", 3, kc, doneT(kc, 3, state.Done, "w1"), done, goodWork)
		}, "check-only task changed files: a.txt"},
		{"merge of work touching unowned path", func() Commit {
			return commitOf("merge", 4, v, mergeT(v, 4), done, map[string]Work{"w1": {Exists: true, BaseExists: true, Descends: true, New: true, Touched: []string{"z"}}})
		}, "touches paths the task does not own: z"},
		{"done without commit", func() Commit {
			return commitOf("done", 3, c, doneT(c, 3, state.Verified, ""), done, nil)
		}, "names no commit"},
		{"attempts decreased", func() Commit {
			after := failT(c, 3, false)
			after.Attempts = 0
			return commitOf("fail", 3, c, after, done, nil)
		}, "attempts 0, but its transitions make 1"},
		{"attempts not counted", func() Commit {
			after := claimT(p, 2, "w1", "base")
			after.Attempts = 0
			return commitOf("claim", 2, p, after, done, nil)
		}, "attempts 0, but its transitions make 1"},
		{"clock does not advance", func() Commit {
			cm := commitOf("claim", 2, p, c, done, nil)
			cm.ParentClock = 2
			return cm
		}, "clock 2 does not advance on its parent's 2"},
		{"clock file not advanced", func() Commit {
			cm := commitOf("claim", 2, p, c, done, nil)
			cm.StoredClock = 0
			return cm
		}, "the clock file was not advanced to 2"},
		{"event clock differs", func() Commit {
			return commitOf("claim", 5, p, claimT(p, 2, "w1", "base"), done, nil)
		}, "has clock 2, its commit 5"},
		{"spec changed", func() Commit {
			after := claimT(p, 2, "w1", "base")
			after.Spec = &levels.Task{ID: "T1", Title: "T1", Files: levels.Files{Create: []string{"a.txt", "b.txt"}}}
			return commitOf("claim", 2, p, after, done, nil)
		}, "its spec changed outside a plan"},
		{"base moved without claim", func() Commit {
			after := doneT(c, 3, state.Verified, "w1")
			after.Base = "w1"
			return commitOf("done", 3, c, after, done, goodWork)
		}, "base changed from base to w1 without a claim"},
		{"work commit swapped", func() Commit {
			after := mergeT(v, 4)
			after.Commit = "other"
			return commitOf("merge", 4, v, after, done, goodWork)
		}, "work commit other, but its transitions give w1"},
		{"task deleted", func() Commit {
			return commitOf("release", 3, c, nil, done, nil)
		}, "task deleted outside a plan"},
		{"task created outside a plan", func() Commit {
			return commitOf("claim", 3, nil, planned("T1", nil), done, nil)
		}, "plan nothing → pending outside a plan"},
		{"plan with a history", func() Commit {
			return commitOf("plan", 2, nil, c, done, nil)
		}, "a plan must start the task with its plan event alone"},
		{"message names another op", func() Commit {
			return commitOf("done", 2, p, c, done, nil)
		}, "the commit says done T1, but the task has no such transition"},
		{"first commit not a plan", func() Commit {
			cm := commitOf("claim", 2, p, c, done, nil)
			cm.Root = true
			return cm
		}, `the first state commit is "claim", not a plan`},
		{"feature.json changed", func() Commit {
			cm := commitOf("claim", 2, p, c, done, nil)
			cm.FeatureChanged = true
			return cm
		}, "feature.json changed outside a plan"},
		{"approve of a low-risk task", func() Commit {
			return commitOf("approve", 2, p, approveT(p, 2), done, nil)
		}, `approve pending → pending of a "" risk task`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := Replay(tt.commit())
			var msgs []string
			for _, p := range ps {
				msgs = append(msgs, p.String())
			}
			all := strings.Join(msgs, "\n")
			if !strings.Contains(all, tt.want) {
				t.Fatalf("problems:\n%s\nwant one containing %q", all, tt.want)
			}
		})
	}
}

func TestWorkNeeded(t *testing.T) {
	p := planned("T1", []string{"a.txt"})
	c := claimT(p, 2, "w1", "base")
	if q := WorkNeeded("claim", p, c); len(q) != 0 {
		t.Fatalf("claim needs no work facts, got %v", q)
	}
	q := WorkNeeded("done", c, doneT(c, 3, state.Done, "w1"))
	if len(q) != 1 || q[0] != (WorkQuery{Commit: "w1", Base: "base", Mode: Shared}) {
		t.Fatalf("shared done: %v", q)
	}
	v := doneT(c, 3, state.Verified, "w1")
	q = WorkNeeded("merge", v, mergeT(v, 4))
	if len(q) != 1 || q[0].Mode != Worktree {
		t.Fatalf("merge: %v", q)
	}
	if q := WorkNeeded("fail", c, failT(c, 3, true)); len(q) != 0 {
		t.Fatalf("fail needs no work facts, got %v", q)
	}
}

func TestReplayMerge(t *testing.T) {
	// Two machines claim T1 from the same state; the merge keeps one side's
	// claim and records the other's as lost.
	p := planned("T1", nil)
	a := claimT(p, 2, "w1", "base")
	b := claimT(p, 2, "w2", "base")
	won := apply(a, 3, func(x tx) {
		x.t.History = append(x.t.History, state.Event{Clock: 3, Op: conflictOp, From: state.Claimed, To: state.Claimed, Worker: "w2", Reason: "lost"})
	})
	merge := func(after *state.Task, parents ...*state.Task) Commit {
		return Commit{Hash: "m", Op: "sync", Clock: 3, ParentClock: 2, StoredClock: 3, Merge: true,
			Merged: []MergeStep{{ID: "T1", After: after, Parents: parents}}}
	}
	for name, c := range map[string]Commit{
		"one side taken":          merge(b, a, b),
		"conflict recorded":       merge(won, a, b),
		"other side deleted it":   merge(nil, a, nil),
		"conflict, winner second": merge(won, b, a),
	} {
		if ps := Replay(c); len(ps) > 0 {
			t.Errorf("%s: %v", name, ps)
		}
	}
	forged := a.Clone()
	forged.Status = state.Done
	badClock := won.Clone()
	badClock.History[len(badClock.History)-1].Clock = 9
	for name, tt := range map[string]struct {
		c    Commit
		want string
	}{
		"state of neither side":  {merge(forged, a, b), "a merge gave the task a state none of its sides had"},
		"conflict on one side":   {merge(won, a, nil), "a conflict recorded on a task only one side had"},
		"conflict clock":         {merge(badClock, a, b), "conflict record has clock 9, its merge 3"},
		"deleted on both sides":  {merge(nil, a, b), "task deleted by a merge"},
		"clock does not advance": {func() Commit { c := merge(b, a, b); c.Clock, c.StoredClock = 2, 2; return c }(), "clock 2 does not advance"},
	} {
		ps := Replay(tt.c)
		if len(ps) == 0 || !strings.Contains(fmt.Sprint(ps), tt.want) {
			t.Errorf("%s: got %v, want %q", name, ps, tt.want)
		}
	}
}

func TestReplayExpire(t *testing.T) {
	// A lease that ran out: claimed → pending (attempt kept), then, with
	// attempts exhausted, claimed → failed → blocked in one commit.
	p := planned("T1", nil)
	c := claimT(p, 2, "w1", "base")
	e := apply(c, 3, func(x tx) {
		x.t.Record(x.ev("expire", state.Pending, "w1", "lease expired", ""))
		x.t.NotBefore = t0.Add(time.Hour)
		x.t.Reason, x.t.Worker, x.t.Owner = "lease of w1 expired", "", ""
	})
	c2 := claimT(e, 4, "w2", "base2")
	b := apply(c2, 5, func(x tx) {
		x.t.Record(x.ev("expire", state.Failed, "w2", "lease expired", ""))
		x.t.Record(x.ev("block", state.Blocked, "w2", "attempts exhausted", ""))
	})
	for _, cm := range []Commit{commitOf("expire", 3, c, e, nil, nil), commitOf("claim", 4, e, c2, nil, nil), commitOf("expire", 5, c2, b, nil, nil)} {
		if ps := Replay(cm); len(ps) > 0 {
			t.Errorf("%s at %d: %v", cm.Op, cm.Clock, ps)
		}
	}
}

func TestReplayDeleted(t *testing.T) {
	del := Commit{Hash: "d", Op: "delete", Clock: 5, ParentClock: 4, Deleted: true}
	if ps := Replay(del); len(ps) > 0 {
		t.Fatalf("delete: %v", ps)
	}
	sync := Commit{Hash: "m", Op: "sync", Clock: 6, ParentClock: 5, Deleted: true, Merge: true}
	if ps := Replay(sync); len(ps) > 0 {
		t.Fatalf("merge with a deleted side: %v", ps)
	}
	for want, c := range map[string]Commit{
		`deleted by a "claim" commit`:    {Hash: "d", Op: "claim", Clock: 5, ParentClock: 4, Deleted: true},
		"clock 4 does not advance":       {Hash: "d", Op: "delete", Clock: 4, ParentClock: 4, Deleted: true},
		"a history that starts with a d": {Hash: "d", Op: "delete", Clock: 1, Root: true, Deleted: true},
	} {
		if ps := Replay(c); !strings.Contains(fmt.Sprint(ps), want) {
			t.Errorf("got %v, want %q", ps, want)
		}
	}
	// The plan after a tombstone starts afresh (Root), its clock from 1.
	p := planned("T1", nil)
	if ps := Replay(commitOf("plan", 1, nil, p, nil, nil)); len(ps) > 0 {
		t.Fatalf("plan after a deletion: %v", ps)
	}
}

func TestReplayUnchecked(t *testing.T) {
	// Work that is not here is reported apart: it may be forged, or made
	// on another machine and not fetched yet.
	c := claimT(planned("T1", []string{"a.txt"}), 2, "w1", "base")
	ps := Replay(commitOf("done", 3, c, doneT(c, 3, state.Verified, "w1"), nil, map[string]Work{}))
	if len(ps) != 1 || !ps[0].Unchecked {
		t.Fatalf("missing work: %+v", ps)
	}
	ps = Replay(commitOf("done", 3, c, doneT(c, 3, state.Verified, "w1"), nil,
		map[string]Work{"w1": {Exists: true, BaseExists: true, Descends: true, New: true, Touched: []string{"b"}}}))
	if len(ps) != 1 || ps[0].Unchecked {
		t.Fatalf("unowned work: %+v", ps)
	}
}
