package engine

import (
	"fmt"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
)

// The transitions a forge makes (package forge/flow asks the forge, then
// records here what it found) and the review mode the rush and the level
// merge follow.

// ReviewMode is forge.review: "" when verified work is done once merged
// into staging, else how its pull requests are opened (per task or per
// feature), and a task is done only once its pull request is merged.
func (g *Engine) ReviewMode() string {
	if g.Config == nil {
		return ""
	}
	return g.Config.Forge.Review
}

// RecordShip records that a verified task's work is in review in pull
// request f.PR, as gates.Ship allows.
func (g *Engine) RecordShip(f gates.ShipFacts) error {
	_, err := g.transition1(f.Task.ID(), func(x *txn, t *state.Task) (*gitstore.Message, error) {
		f.Task = t
		if err := gates.Ship(f); err != nil {
			return nil, err
		}
		ev := x.event(state.OpShip, state.Verified, "", fmt.Sprintf("in review: pull request #%d (%s)", f.PR, f.Branch), "")
		ev.PR = f.PR
		t.Record(ev)
		t.PR = f.PR
		return &gitstore.Message{Subject: fmt.Sprintf("ship %s: pull request #%d", t.ID(), f.PR), Op: state.OpShip, Task: t.ID(),
			From: string(state.Verified), To: string(state.Verified)}, nil
	})
	return err
}

// RecordLand records verified → done for a task whose pull request was
// merged, as gates.Land allows.
func (g *Engine) RecordLand(f gates.LandFacts) error {
	_, err := g.transition1(f.Task.ID(), func(x *txn, t *state.Task) (*gitstore.Message, error) {
		f.Task = t
		if err := gates.Land(f); err != nil {
			return nil, err
		}
		t.Record(x.event(state.OpLand, state.Done, "", fmt.Sprintf("pull request #%d merged into %s", t.PR, f.Base), f.MergeCommit))
		return &gitstore.Message{Subject: fmt.Sprintf("land %s: pull request #%d merged", t.ID(), t.PR), Op: state.OpLand, Task: t.ID(),
			From: string(state.Verified), To: string(state.Done)}, nil
	})
	return err
}

// RecordReject blocks a verified task whose pull request pr was closed
// without a merge (nothing when it is no longer that task's).
func (g *Engine) RecordReject(id string, pr int) error {
	_, err := g.transition1(id, func(x *txn, t *state.Task) (*gitstore.Message, error) {
		if t.Status != state.Verified || t.PR != pr {
			return nil, nil
		}
		why := fmt.Sprintf("pull request #%d closed without merge", pr)
		t.Record(x.event(state.OpReject, state.Blocked, "", why, ""))
		t.Reason = why
		return &gitstore.Message{Subject: fmt.Sprintf("reject %s: %s", t.ID(), why), Op: state.OpReject, Task: t.ID(),
			From: string(state.Verified), To: string(state.Blocked), Reason: why}, nil
	})
	return err
}

// RecordIssue records the transition op to to of a task whose issue was
// closed or reopened on the forge, as gates.Close or gates.Reopen allows.
func (g *Engine) RecordIssue(op state.Op, to state.Status, why string, f gates.IssueFacts) error {
	_, err := g.transition1(f.Task.ID(), func(x *txn, t *state.Task) (*gitstore.Message, error) {
		f.Task, f.KnownClosed = t, KnownClosed(t)
		check := gates.Close
		if op == state.OpReopen {
			check = gates.Reopen
		}
		if err := check(f); err != nil {
			return nil, err
		}
		from := t.Status
		t.Record(x.event(op, to, "", why, ""))
		t.Reason = why
		return &gitstore.Message{Subject: fmt.Sprintf("%s %s: %s", op, t.ID(), why), Op: op, Task: t.ID(),
			From: string(from), To: string(to), Reason: why}, nil
	})
	return err
}

// KnownClosed says whether the task's history last saw its issue closed:
// its latest forge event is a land or a close.
func KnownClosed(t *state.Task) bool {
	for i := len(t.History) - 1; i >= 0; i-- {
		switch t.History[i].Op {
		case state.OpLand, state.OpClose:
			return true
		case state.OpReopen, state.OpRetry, state.OpPlan:
			return false
		}
	}
	return false
}
