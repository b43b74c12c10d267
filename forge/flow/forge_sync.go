package flow

import (
	"errors"
	"fmt"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/state"
)

// SyncResult is what one pass of sync --forge changed, task by task,
// in plan order.
type SyncResult struct {
	Feature string   `json:"feature"`
	Changes []Change `json:"changes"`
	// Skipped are tasks the forge would move but that a worker holds.
	Skipped []string `json:"skipped"`
}

// Change is one transition sync --forge made.
type Change struct {
	Task   string       `json:"task"`
	Op     state.Op     `json:"op"`
	To     state.Status `json:"to"`
	Reason string       `json:"reason"`
}

// Sync brings the feature's state in line with the forge, the forge
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
func Sync(g *engine.Engine) (*SyncResult, error) {
	c, tasks, err := forgeTasks(g)
	if err != nil {
		return nil, err
	}
	res := &SyncResult{Feature: g.Feature, Changes: []Change{}, Skipped: []string{}}
	for _, t := range tasks {
		if t.Status == state.Verified && t.PR != 0 {
			f, rejected, err := landFacts(g, t)
			if err != nil {
				return res, err
			}
			switch {
			case rejected:
				if err := g.RecordReject(t.ID(), t.PR); err != nil {
					return res, err
				}
				res.Changes = append(res.Changes, Change{t.ID(), state.OpReject, state.Blocked, fmt.Sprintf("pull request #%d closed without merge", t.PR)})
				continue
			case f.Merged:
				err := g.RecordLand(f)
				if err == nil {
					res.Changes = append(res.Changes, Change{t.ID(), state.OpLand, state.Done, fmt.Sprintf("pull request #%d merged", t.PR)})
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
		f := gates.IssueFacts{Task: t, Open: is.Open, KnownClosed: engine.KnownClosed(t)}
		switch {
		case gates.Reopen(f) == nil:
			why := fmt.Sprintf("issue #%d reopened", t.Spec.Issue)
			if err := g.RecordIssue(state.OpReopen, state.Blocked, why, f); err != nil {
				return res, err
			}
			res.Changes = append(res.Changes, Change{t.ID(), state.OpReopen, state.Blocked, why})
		case gates.Close(f) == nil:
			why := fmt.Sprintf("issue #%d closed on the forge without this task's work", t.Spec.Issue)
			if err := g.RecordIssue(state.OpClose, state.Blocked, why, f); err != nil {
				return res, err
			}
			res.Changes = append(res.Changes, Change{t.ID(), state.OpClose, state.Blocked, why})
		case !is.Open && t.Status == state.Claimed:
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s: issue #%d closed elsewhere, but %s holds the task", t.ID(), t.Spec.Issue, t.Worker))
		case !is.Open && t.Status == state.Verified && t.PR != 0:
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s: issue #%d closed elsewhere, but the task is in review: pull request #%d decides", t.ID(), t.Spec.Issue, t.PR))
		}
	}
	return res, nil
}
