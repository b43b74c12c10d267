package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/git-zerg/git-zerg/engine/trust"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
	"github.com/git-zerg/git-zerg/worktree"
)

// PlanResult is what planning a feature stored.
type PlanResult struct {
	Feature  string
	Tasks    int
	Levels   [][]string
	Replaced bool   // an earlier plan of the feature was replaced (force)
	Commit   string // the feature's state commit
	// Staging is the staging branch an earlier plan of this name left, the
	// rush's base instead of HEAD; StagingTip its commit ("" for none).
	Staging, StagingTip string
}

// Plan stores a valid graph's plan as the feature's initial state, every
// task pending, and trusts its tasks on this machine. An existing feature
// is refused (kind Refused) unless force, which starts it over with the
// old history kept behind the new plan.
func (g *Engine) Plan(plan *levels.Plan, force bool) (*PlanResult, error) {
	return g.plan(plan, force, true)
}

func (g *Engine) plan(plan *levels.Plan, force, trusted bool) (*PlanResult, error) {
	s, name := g.Store, g.Feature
	if err := levels.ValidFeatureName(name); err != nil {
		return nil, &Error{Kind: Usage, What: fmt.Sprintf("bad feature name %q", name), Why: err.Error()}
	}
	now := g.Time().UTC()
	tasks := planTasks(plan, now)
	meta := &state.Feature{Format: state.Format, Name: name, PlannedAt: now, Levels: plan.Levels, Graph: plan.Graph.Extra}
	for _, w := range plan.Warnings {
		meta.Warnings = append(meta.Warnings, w.String())
	}
	res := &PlanResult{Feature: name, Tasks: len(tasks), Levels: plan.Levels}
	err := s.Create(g.Context(), name, force, g.Time, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		clock := tx.Clock() + 1
		for _, t := range tasks {
			t.History[0].Clock = clock
		}
		// Init makes the feature exist: ask before.
		res.Replaced = tx.Exists()
		if res.Replaced {
			// The old plan's claims are gone with it: so are the locks its
			// tasks held, or they would keep the new plan's tasks from
			// being claimed.
			locks, err := tx.Locks()
			if err != nil {
				return nil, err
			}
			keep := make([]state.Lock, 0, len(locks))
			for _, l := range locks {
				if l.Feature != name || l.Task == "" {
					keep = append(keep, l)
				}
			}
			if len(keep) != len(locks) {
				tx.SetLocks(keep)
			}
		}
		if err := tx.Init(meta, tasks); err != nil {
			return nil, err
		}
		subject := fmt.Sprintf("plan %s: %s in %s", name, words.Plural(len(tasks), "task"), words.Plural(len(plan.Levels), "level"))
		if res.Replaced {
			subject = fmt.Sprintf("plan --force %s: %s in %s", name, words.Plural(len(tasks), "task"), words.Plural(len(plan.Levels), "level"))
		}
		return &gitstore.Message{Subject: subject, Op: state.OpPlan}, nil
	})
	if errors.Is(err, gitstore.ErrExists) {
		return nil, &Error{Kind: Refused, What: fmt.Sprintf("feature %q is already planned", name),
			Hint: "git zerg plan --force replaces it (its history stays in git zerg log)"}
	}
	if err != nil {
		return nil, err
	}
	// An untrusted plan leaves the trust here as it was: what it trusts is
	// specs a person accepted, whichever plan brings them back.
	if trusted {
		if err := trust.Record(s, name, tasks); err != nil {
			return nil, err
		}
	}
	// This process holds every task it just wrote: the task index and the
	// task cache built from them now cost little (0.8 s at 100,000 tasks),
	// where the next command (status, next, claim; status --json) would
	// read every task back from git to build them (10 s). Best effort:
	// without them the next command builds them.
	if tx, err := s.View(name); err == nil {
		tx.Index()
	}
	s.WriteCache(name)
	tip, err := s.ReadRef(gitstore.FeatureRef(name))
	if err != nil {
		return nil, err
	}
	res.Commit = tip.String()
	return res, nil
}

// PlanCurrent plans as Plan does, makes the feature the current one, and
// tells of a staging branch an earlier plan of its name left.
func (g *Engine) PlanCurrent(plan *levels.Plan, force bool) (*PlanResult, error) {
	return g.planCurrent(plan, force, true)
}

// PlanCurrentUntrusted is PlanCurrent for a graph that others wrote (the
// forge's issues): nothing of it is trusted here, not even for a moment,
// until a person has read it (plan --accept).
func (g *Engine) PlanCurrentUntrusted(plan *levels.Plan, force bool) (*PlanResult, error) {
	return g.planCurrent(plan, force, false)
}

func (g *Engine) planCurrent(plan *levels.Plan, force, trusted bool) (*PlanResult, error) {
	res, err := g.plan(plan, force, trusted)
	if err != nil {
		return nil, err
	}
	if err := g.Store.SetCurrentFeature(g.Feature); err != nil {
		return nil, err
	}
	res.Staging = worktree.StagingBranch(g.Feature)
	if tip, _ := g.Store.ReadRef("refs/heads/" + res.Staging); !tip.IsZero() {
		res.StagingTip = tip.String()
	}
	return res, nil
}

// planTasks makes the initial state of a plan's tasks: every one pending.
func planTasks(plan *levels.Plan, now time.Time) []*state.Task {
	tasks := make([]*state.Task, 0, len(plan.Graph.Tasks))
	for _, sp := range plan.Graph.Tasks {
		tasks = append(tasks, &state.Task{
			Spec:       sp,
			Level:      plan.Level[sp.ID],
			Implied:    plan.Implied[sp.ID],
			Dependents: plan.Dependents[sp.ID],
			Status:     state.Pending,
			History:    []state.Event{{At: now, Op: state.OpPlan, To: state.Pending}},
		})
	}
	return tasks
}
