package engine

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/git-zerg/git-zerg/engine/rushmarker"
	"github.com/git-zerg/git-zerg/engine/trust"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/worktree"
)

// UpdateResult is what plan --update changed.
type UpdateResult struct {
	Feature                 string
	Kept, Changed           []string // tasks as they were; tasks that start again
	Added, Removed          []string
	TakenOut                []string // tasks whose merged work left staging
	Tasks                   int
	Levels                  [][]string
	StagingTip, StateCommit string
}

// Update amends a planned feature with a new graph: a task whose spec is
// unchanged keeps its state and history (its level and dependents as the
// new plan has them); a changed one starts again (pending, its attempt
// count reset, its history kept), and its work, if merged, is taken out
// of staging by a revert commit; added tasks are pending; a removed one
// leaves the state (its history stays in the feature's log) and its
// merged work leaves staging. A task a worker holds is refused (kind
// Refused): its worker would go on with a task that is no more. The new
// graph's tasks are trusted here, as plan's are.
func (g *Engine) Update(plan *levels.Plan) (*UpdateResult, error) {
	s, name := g.Store, g.Feature
	tx, err := s.View(name)
	if err != nil {
		return nil, err
	}
	if !tx.Exists() {
		return nil, &Error{Kind: Usage, What: fmt.Sprintf("feature %q is not planned", name), Hint: "git zerg plan plans it"}
	}
	old, err := tx.Tasks()
	if err != nil {
		return nil, err
	}
	res := &UpdateResult{Feature: name, Tasks: len(plan.Graph.Tasks), Levels: plan.Levels}
	now := g.Time().UTC()
	d := diffPlan(old, planTasks(plan, now), now)
	res.Kept, res.Changed, res.Added, res.Removed = d.kept, d.changed, d.added, d.removed
	out, takeOut, held := d.out, d.takeOut, d.held
	if len(held) > 0 {
		sort.Strings(held)
		return nil, &Error{Kind: Refused, What: "plan --update: a worker holds " + strings.Join(held, ", "),
			Hint: "let it finish, or git zerg release the task, then update"}
	}
	// Staging first, in one move: a revert is made once (TakeOutAll finds
	// its own), so an update stopped between the two runs again to the
	// same end, and one refused for a conflict has moved nothing.
	if len(takeOut) > 0 {
		out, err := g.takeOut("plan --update", takeOut, "change the tasks built on it too, or plan --force to start over")
		if err != nil {
			return nil, err
		}
		if len(out.Held) > 0 {
			res.TakenOut, res.StagingTip = out.Held, out.Tip
		}
	}
	meta := &state.Feature{Format: state.Format, Name: name, PlannedAt: now, Levels: plan.Levels, Graph: plan.Graph.Extra}
	for _, w := range plan.Warnings {
		meta.Warnings = append(meta.Warnings, w.String())
	}
	if prev, err := tx.Meta(); err == nil && !prev.PlannedAt.IsZero() {
		meta.PlannedAt = prev.PlannedAt
	}
	err = s.Create(g.Context(), name, true, g.Time, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		clock := tx.Clock() + 1
		for _, t := range out {
			if n := len(t.History); n > 0 && t.History[n-1].At.Equal(now) && t.History[n-1].Clock == 0 {
				t.History[n-1].Clock = clock
			}
		}
		if err := tx.Init(meta, out); err != nil {
			return nil, err
		}
		return &gitstore.Message{Subject: fmt.Sprintf("plan --update %s: %d kept, %d changed, %d added, %d removed",
			name, len(res.Kept), len(res.Changed), len(res.Added), len(res.Removed)), Op: state.OpUpdate}, nil
	})
	if err != nil {
		return nil, err
	}
	if err := trust.Record(s, name, out); err != nil {
		return nil, err
	}
	s.WriteCache(name)
	tip, err := s.ReadRef(gitstore.FeatureRef(name))
	if err != nil {
		return nil, err
	}
	res.StateCommit = tip.String()
	return res, nil
}

// planDiff is what plan --update makes of the stored tasks.
type planDiff struct {
	// out is the tasks to store, in the new plan's order: an unchanged
	// task as it stands, a changed one back to pending, an added one new.
	out []*state.Task
	// takeOut is the done tasks, changed or removed, whose merged work
	// goes out of staging, in plan order.
	takeOut []*state.Task
	// held is the tasks, changed or removed, that a worker holds: they
	// refuse the update.
	held                          []string
	kept, changed, added, removed []string
}

// diffPlan compares the stored tasks with fresh, the new plan's; a task
// is unchanged when its spec is.
func diffPlan(old, fresh []*state.Task, now time.Time) planDiff {
	var d planDiff
	byID := map[string]*state.Task{}
	for _, t := range old {
		byID[t.ID()] = t
	}
	inNew := map[string]bool{}
	for _, nt := range fresh {
		inNew[nt.ID()] = true
		ot := byID[nt.ID()]
		switch {
		case ot == nil:
			d.added = append(d.added, nt.ID())
			d.out = append(d.out, nt)
		case trust.SpecDigest(ot.Spec) == trust.SpecDigest(nt.Spec):
			kept := ot.Clone()
			kept.Spec, kept.Level, kept.Implied, kept.Dependents = nt.Spec, nt.Level, nt.Implied, nt.Dependents
			d.kept = append(d.kept, nt.ID())
			d.out = append(d.out, kept)
		case ot.Status == state.Claimed:
			d.held = append(d.held, fmt.Sprintf("%s (%s)", ot.ID(), ot.Worker))
		default:
			t := ot.Clone()
			t.Spec, t.Level, t.Implied, t.Dependents = nt.Spec, nt.Level, nt.Implied, nt.Dependents
			if ot.Status == state.Done {
				d.takeOut = append(d.takeOut, ot)
			}
			t.Record(state.Event{At: now, Op: state.OpUpdate, From: ot.Status, To: state.Pending, Reason: "changed by plan --update"})
			t.Status, t.Attempts, t.Commit, t.Base, t.Reason, t.NotBefore, t.Worker, t.Owner, t.PR = state.Pending, 0, "", "", "", time.Time{}, "", "", 0
			d.changed = append(d.changed, t.ID())
			d.out = append(d.out, t)
		}
	}
	for _, ot := range old {
		if inNew[ot.ID()] {
			continue
		}
		if ot.Status == state.Claimed {
			d.held = append(d.held, fmt.Sprintf("%s (%s)", ot.ID(), ot.Worker))
			continue
		}
		d.removed = append(d.removed, ot.ID())
		if ot.Status == state.Done {
			d.takeOut = append(d.takeOut, ot)
		}
	}
	return d
}

// takeOut takes the tasks' merged work out of staging, all or none: a
// conflict (later work changes what goes) is an error of kind Failed
// naming the task and the files, what of cmd, and staging does not move.
func (g *Engine) takeOut(cmd string, tasks []*state.Task, hint string) (worktree.TakenOut, error) {
	if err := g.refuseUnderRush(cmd, tasks); err != nil {
		return worktree.TakenOut{}, err
	}
	outs := make([]worktree.Out, len(tasks))
	for i, t := range tasks {
		outs[i] = worktree.Out{Commit: t.Commit, Label: t.ID()}
	}
	res, err := g.Manager().TakeOutAll(g.Context(), outs)
	var c *worktree.Conflict
	if errors.As(err, &c) {
		return res, &Error{Kind: Failed, What: fmt.Sprintf("%s: %s's work cannot be taken out of staging", cmd, c.Task),
			Why: "work merged after it changes " + strings.Join(c.Files, ", "), Hint: hint}
	}
	return res, err
}

// refuseUnderRush refuses to take work out of staging while a rush of the
// feature runs on this host and staging holds some of it: the rush's
// workers start from the staging it last gated, which still holds that
// work, so what they build, the task redone included, would rest on what
// is taken out.
func (g *Engine) refuseUnderRush(cmd string, tasks []*state.Task) error {
	h, alive := rushmarker.Read(g.Store, g.Feature)
	if !alive {
		return nil
	}
	tip, err := g.Store.ReadRef("refs/heads/" + worktree.StagingBranch(g.Feature))
	if err != nil || tip.IsZero() {
		return err
	}
	var commits []string
	for _, t := range tasks {
		if t.Commit != "" {
			commits = append(commits, t.Commit)
		}
	}
	in, err := g.Store.InHistory(g.Context(), tip.String(), commits)
	if err != nil {
		return err
	}
	var held []string
	for _, t := range tasks {
		if t.Commit != "" && in[t.Commit] {
			held = append(held, t.ID())
		}
	}
	if len(held) == 0 {
		return nil
	}
	return &Error{Kind: Refused, What: cmd + " refused",
		Why:  fmt.Sprintf("a rush of %s is running (pid %d) on a staging that holds the work of %s", g.Feature, h.PID, strings.Join(held, ", ")),
		Hint: "stop the rush (Ctrl-C), run " + cmd + " again, then git zerg rush --resume"}
}
