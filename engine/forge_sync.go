package engine

import (
	"errors"
	"fmt"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
)

// ForgeSyncResult is what one pass of sync --forge changed, task by task,
// in plan order.
type ForgeSyncResult struct {
	Feature string        `json:"feature"`
	Changes []ForgeChange `json:"changes"`
	// Skipped are tasks the forge would move but that a worker holds.
	Skipped []string `json:"skipped"`
}

// ForgeChange is one transition sync --forge made.
type ForgeChange struct {
	Task   string       `json:"task"`
	Op     state.Op     `json:"op"`
	To     state.Status `json:"to"`
	Reason string       `json:"reason"`
}

// SyncForge brings the feature's state in line with the forge, the forge
// winning, in one pass over the tasks in plan order. Each move depends only
// on the task's state and what the forge says now, so every machine that
// runs it against the same forge reaches the same states:
//   - a task in review whose PR was merged with its work lands (done, its
//     issue closed); one whose PR was closed unmerged is blocked;
//   - a done task whose issue, once closed, was reopened is blocked
//     ("issue #N reopened");
//   - a task not done whose issue was closed elsewhere is blocked ("issue
//     #N closed on the forge without this task's work"): closing an issue
//     is no fact about the work, so its dependents wait, and retry undoes
//     it; a claimed task is left to its worker, a task in review to its PR.
func (g *Engine) SyncForge() (*ForgeSyncResult, error) {
	c, tasks, err := g.forgeTasks()
	if err != nil {
		return nil, err
	}
	res := &ForgeSyncResult{Feature: g.Feature, Changes: []ForgeChange{}, Skipped: []string{}}
	for _, t := range tasks {
		if t.Status == state.Verified && t.PR != 0 {
			f, rejected, err := g.LandFacts(t)
			if err != nil {
				return res, err
			}
			switch {
			case rejected:
				if err := g.recordReject(t.ID(), t.PR); err != nil {
					return res, err
				}
				res.Changes = append(res.Changes, ForgeChange{t.ID(), state.OpReject, state.Blocked, fmt.Sprintf("pull request #%d closed without merge", t.PR)})
				continue
			case f.Merged:
				err := g.recordLand(f)
				if err == nil {
					res.Changes = append(res.Changes, ForgeChange{t.ID(), state.OpLand, state.Done, fmt.Sprintf("pull request #%d merged", t.PR)})
					continue
				}
				var ref *gates.Refusal
				if !errors.As(err, &ref) {
					return res, err
				}
				res.Skipped = append(res.Skipped, err.Error())
			}
		}
		if t.Spec.Issue == 0 {
			continue
		}
		is, err := c.Issue(g.Context(), t.Spec.Issue)
		if err != nil {
			return res, forgeErr(err)
		}
		f := gates.IssueFacts{Task: t, Open: is.Open, KnownClosed: knownClosed(t)}
		switch {
		case gates.Reopen(f) == nil:
			why := fmt.Sprintf("issue #%d reopened", t.Spec.Issue)
			if err := g.recordIssue(state.OpReopen, state.Blocked, why, f); err != nil {
				return res, err
			}
			res.Changes = append(res.Changes, ForgeChange{t.ID(), state.OpReopen, state.Blocked, why})
		case gates.Close(f) == nil:
			why := fmt.Sprintf("issue #%d closed on the forge without this task's work", t.Spec.Issue)
			if err := g.recordIssue(state.OpClose, state.Blocked, why, f); err != nil {
				return res, err
			}
			res.Changes = append(res.Changes, ForgeChange{t.ID(), state.OpClose, state.Blocked, why})
		case !is.Open && t.Status == state.Claimed:
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s: issue #%d closed elsewhere, but %s holds the task", t.ID(), t.Spec.Issue, t.Worker))
		case !is.Open && t.Status == state.Verified && t.PR != 0:
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s: issue #%d closed elsewhere, but the task is in review: pull request #%d decides", t.ID(), t.Spec.Issue, t.PR))
		}
	}
	return res, nil
}

// knownClosed says whether the task's history last saw its issue closed:
// its latest forge event is a land or a close.
func knownClosed(t *state.Task) bool {
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

func (g *Engine) recordIssue(op state.Op, to state.Status, why string, f gates.IssueFacts) error {
	_, err := g.transition1(f.Task.ID(), func(x *txn, t *state.Task) (*gitstore.Message, error) {
		f.Task, f.KnownClosed = t, knownClosed(t)
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
