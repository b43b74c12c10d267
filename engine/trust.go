package engine

import (
	"fmt"
	"strings"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine/trust"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

// What this machine trusts is recorded by package trust; what a record
// allows is decided here. State fetched from elsewhere never tells a
// worker anything or lets it do anything: a task is handed to a worker,
// and its verification run, only as this machine planned or accepted it.

// checkTrusted refuses a task this machine does not trust as it now is.
func checkTrusted(tr *trust.File, what string, t *state.Task, feature string) *Error {
	if why := tr.Distrust(t); why != "" {
		return untrusted(what, why, feature)
	}
	return nil
}

// unapprovedHere refuses a task whose risk needs an approval that the
// shared state holds but this machine did not give.
func unapprovedHere(tr *trust.File, what string, t *state.Task) *Error {
	if !t.NeedsApproval() || t.Approved == "" || tr.ApprovedHere(t) {
		return nil
	}
	return &Error{Kind: Refused, What: what, Why: approvalElsewhere(t), Hint: "git zerg approve " + t.ID()}
}

func approvalElsewhere(t *state.Task) string {
	return fmt.Sprintf("risk %s needs git zerg approve %s on this machine: the approval by %s was not given here to the task as it now is",
		t.Spec.Risk, t.ID(), t.Approved)
}

func untrusted(what, why, feature string) *Error {
	return &Error{Kind: Refused, What: what, Why: why,
		Hint: "git zerg plan --accept " + feature + " shows what changed and asks"}
}

// checkTrust refuses a task this machine does not trust as it now is.
func (g *Engine) checkTrust(what string, t *state.Task) error {
	tr, err := trust.Open(g.Store, g.Feature)
	if err != nil {
		return err
	}
	if e := checkTrusted(tr, what, t, g.Feature); e != nil {
		return e
	}
	return nil
}

// TrustedAll refuses a rush, or a batch of task mode, whose graph holds a
// task this machine did not plan or accept as it now is, or an unfinished
// task whose approval came from elsewhere.
func (g *Engine) TrustedAll(what string, tasks []*state.Task) error {
	tr, err := trust.Read(g.Store, g.Feature)
	if err != nil {
		return err
	}
	trusted := tr.Entries()
	var elsewhere []string
	for _, t := range tasks {
		if e, ok := trusted[t.ID()]; tr.Old() || !ok || e.Digest != trust.SpecDigest(t.Spec) {
			return untrusted(what, tr.Distrust(t), g.Feature)
		}
		if t.Status != state.Done && unapprovedHere(tr, what, t) != nil {
			elsewhere = append(elsewhere, t.ID())
		}
	}
	if len(elsewhere) > 0 {
		t := tasksByID(tasks)[elsewhere[0]]
		e := unapprovedHere(tr, what, t)
		if len(elsewhere) > 1 {
			e.Why += fmt.Sprintf(" (also %s)", strings.Join(firstFew(elsewhere[1:], 5), ", "))
			e.Hint = "git zerg approve each of them"
		}
		return e
	}
	return nil
}

func tasksByID(tasks []*state.Task) map[string]*state.Task {
	out := make(map[string]*state.Task, len(tasks))
	for _, t := range tasks {
		out[t.ID()] = t
	}
	return out
}

// ReviewTrust reads what plan --accept of the feature would trust.
func ReviewTrust(s *gitstore.Store, feature string) (*trust.Review, error) {
	tx, err := ViewFeature(s, feature)
	if err != nil {
		return nil, err
	}
	tasks, err := tx.Tasks()
	if err != nil {
		return nil, err
	}
	return trust.ReviewOf(s, feature, tasks)
}

// RequiredIssues are missingIssues under the configuration of s. A
// configuration that cannot be read is reported by the commands that run
// on it; planning never needed one, and still plans.
func RequiredIssues(s *gitstore.Store, plan *levels.Plan) []levels.Problem {
	cfg, err := LoadConfig(s)
	if err != nil {
		return nil
	}
	return missingIssues(cfg, plan)
}

// missingIssues are the problems of a plan whose tasks lack the issue the
// configuration asks each to have (none when it asks for none).
func missingIssues(cfg *config.Config, plan *levels.Plan) []levels.Problem {
	if !cfg.Forge.RequireIssue {
		return nil
	}
	return levels.MissingIssues(plan.Graph)
}
