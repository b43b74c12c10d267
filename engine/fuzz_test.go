package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/git-zerg/git-zerg/gitobj"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/gitstore/storetest"
	"github.com/git-zerg/git-zerg/state"
)

// FuzzCheckIncoming replaces one task's blob in one commit of a legal
// history with arbitrary bytes, keeping the commit's message, and checks
// the result as sync checks what it fetches. The check must never panic
// nor fail for any reason but a refusal, and it must refuse every change
// that breaks a rule any legal transition keeps: a task that does not
// decode, a plan field changed, history rewritten, a change with no new
// event, events that do not chain from the task's status, carry another
// clock, are not legal transitions, or leave the task in another status.
func FuzzCheckIncoming(f *testing.F) {
	g := newFeature(f, 3)
	s, ctx := g.Store, context.Background()
	must := func(err error) {
		if err != nil {
			f.Fatal(err)
		}
	}
	_, _, err := g.Claim(ClaimRequest{Worker: "w1", Task: "T1"})
	must(err)
	_, _, err = g.Claim(ClaimRequest{Worker: "w2", Task: "T2"})
	must(err)
	_, err = g.Release("w2", "T2")
	must(err)
	_, _, err = g.Fail(Failure{Worker: "w1", Task: "T1", Reason: "tests fail"})
	must(err)
	_, _, err = g.Claim(ClaimRequest{Worker: "w3", Task: "T3"})
	must(err)

	// The history's transitions, oldest first (the plan is not fuzzed: a
	// plan may set a task to anything).
	var commits []*gitobj.Commit
	for h := g.tip(f); ; {
		c, err := s.ReadCommit(h)
		must(err)
		if len(c.ParentHashes) == 0 {
			break
		}
		commits = append([]*gitobj.Commit{c}, commits...)
		h = c.ParentHashes[0]
	}
	ids := []string{"T1", "T2", "T3"}
	for k, c := range commits {
		for x, id := range ids {
			b := taskBlob(f, s, c.Hash, id)
			f.Add(uint8(k), uint8(x), b)
			for _, r := range [][2]string{{`"status": "claimed"`, `"status": "done"`}, {`"status": "pending"`, `"status": "verified"`},
				{`"attempts": 1`, `"attempts": 0`}, {`"title": "task`, `"title": "TASK`}, {`"worker": "w`, `"worker": "x`}, {`"clock": 1`, `"clock": 9`}} {
				if m := bytes.Replace(b, []byte(r[0]), []byte(r[1]), 1); !bytes.Equal(m, b) {
					f.Add(uint8(k), uint8(x), m)
				}
			}
		}
	}
	f.Add(uint8(0), uint8(0), []byte(`{}`))
	f.Add(uint8(1), uint8(1), []byte(`null`))
	f.Add(uint8(2), uint8(2), []byte(`{"spec": {"id": "T3"}, "history": []}`))

	f.Fuzz(func(t *testing.T, k, x uint8, data []byte) {
		c := commits[int(k)%len(commits)]
		id := ids[int(x)%len(ids)]
		parent := c.ParentHashes[0]
		forged := storetest.ForgeTask(t, s, c, parent, id, data)
		err := CheckIncoming(ctx, s, "f", parent, forged)
		var ee *Error
		if err != nil && (!errors.As(err, &ee) || ee.Kind != Refused) {
			t.Fatalf("check failed instead of refusing: %v", err)
		}
		var before state.Task
		if err := json.Unmarshal(taskBlob(t, s, parent, id), &before); err != nil {
			t.Fatal(err)
		}
		if why := breaksARule(&before, data, id, gitstore.ParseMessage(c.Message).Clock); why != "" && err == nil {
			t.Fatalf("accepted %s changed into %s, in place of commit %s (%s)\n%s", id, why, c.Hash, c.Message, data)
		}
	})
}

// breaksARule names a rule every legal transition of task id from before
// keeps and data breaks, or "".
func breaksARule(before *state.Task, data []byte, id string, clock uint64) string {
	var after state.Task
	if err := json.Unmarshal(data, &after); err != nil || after.Spec == nil {
		return "a blob that is not a task"
	}
	if after.Spec.ID != id {
		return "another task's spec"
	}
	for _, f := range []struct {
		name string
		a, b any
	}{{"spec", before.Spec, after.Spec}, {"level", before.Level, after.Level},
		{"implied", before.Implied, after.Implied}, {"dependents", before.Dependents, after.Dependents}} {
		ja, _ := json.Marshal(f.a)
		jb, _ := json.Marshal(f.b)
		if !bytes.Equal(ja, jb) {
			return "its " + f.name + " changed"
		}
	}
	if len(after.History) < len(before.History) {
		return "events removed"
	}
	for i, ev := range before.History {
		a := after.History[i]
		if a.Clock != ev.Clock || !a.At.Equal(ev.At) || a.Op != ev.Op || a.From != ev.From || a.To != ev.To ||
			a.Worker != ev.Worker || a.Commit != ev.Commit || a.Reason != ev.Reason {
			return "an event rewritten"
		}
	}
	evs := after.History[len(before.History):]
	if len(evs) == 0 {
		ja, _ := json.Marshal(before)
		jb, _ := json.Marshal(&after)
		if !bytes.Equal(ja, jb) {
			return "a change without an event"
		}
		return ""
	}
	status := before.Status
	for _, ev := range evs {
		switch {
		case ev.From != status:
			return "an event that does not start where the task was"
		case ev.Clock != clock:
			return "an event with another clock than its commit"
		case ev.Op == "plan":
			return "a plan event outside a plan"
		case !ev.Op.Legal(ev.From, ev.To):
			return "an illegal transition"
		}
		status = ev.To
	}
	if after.Status != status {
		return "a status its events do not lead to"
	}
	return ""
}
