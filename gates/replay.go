package gates

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/git-zerg/git-zerg/state"
)

// Replaying a history: fsck, and sync before it merges
// fetched state, walk a feature's state commits and ask, for each, whether
// the tool could have written it. A state commit is legal when every task
// it changed moved only by transitions of the table, each gate of which held
// in the state before the commit, and nothing else about the task changed.
// The caller reads git; what it found is handed in as facts.

// Problem is one thing a history holds that the gates would have refused.
type Problem struct {
	Commit string // the state commit
	Task   string // "" for a problem of the commit itself
	Msg    string
	// Unchecked: a fact could not be gathered here (a work commit or a
	// claim's base is not in this repository): forged, or made on another
	// machine and not fetched yet.
	Unchecked bool
}

func (p Problem) String() string {
	c := p.Commit
	if len(c) > 12 {
		c = c[:12]
	}
	if p.Task == "" {
		return c + ": " + p.Msg
	}
	return c + " " + p.Task + ": " + p.Msg
}

// Work is what git says about the commit a done or merge event names, as
// compared with the task's base. Replay asks for it only for events that
// take a task to verified or done (see WorkNeeded).
type Work struct {
	Exists     bool // the commit exists and is a commit
	BaseExists bool // so does the claim's base
	Descends   bool // the commit is the base or descends from it
	// New: there is work since the base (worktree mode: the commit is not
	// the base; shared mode: some commit between them is the task's own,
	// see OwnWork).
	New bool
	// Touched are the paths the task's work changed (worktree mode: the
	// diff from the base; shared mode: what OwnWork keeps).
	Touched []string
}

// WorkQuery names one piece of work a step needs facts about.
type WorkQuery struct {
	Commit, Base string
	// Mode is Shared for a done straight to done, Worktree for a done to
	// verified and for a merge of verified work.
	Mode Mode
}

// Step is one task's change in one state commit, with its facts.
type Step struct {
	ID string // the task's id, as the tree names it
	// Before is the task in the commit's (first) parent, nil when it did
	// not exist there; After is the task in the commit, nil when the
	// commit deleted it.
	Before, After *state.Task
	// Status looks up a task's status in the parent state (dependencies
	// of a claim).
	Status func(id string) state.Status
	// Work holds the facts about each WorkQuery of the step, by commit.
	Work map[string]Work
}

// Commit is one state commit and the task changes it made.
type Commit struct {
	Hash string
	// Op, Task, Clock are the commit message's trailers (Zerg-Op,
	// Zerg-Task, Zerg-Clock).
	Op    state.Op
	Task  string
	Clock uint64
	// Root: the commit starts a history: it has no parent, or its parent
	// is a deleted feature's tombstone (a plan after cleanup --state).
	// ParentClock is the highest Zerg-Clock of its parents.
	Root        bool
	ParentClock uint64
	// StoredClock is the clock file of the commit's tree, 0 when the
	// commit did not change it.
	StoredClock uint64
	// FeatureChanged: feature.json differs from every parent's.
	FeatureChanged bool
	// Steps are the tasks a commit with one parent (or none) changed.
	Steps []Step
	// Merge: the commit merges states (sync); Merged are the tasks that
	// differ from one of its parents.
	Merge  bool
	Merged []MergeStep
	// Deleted: the commit's tree is a tombstone (cleanup --state, or a
	// merge with a side that deleted the feature): it holds no state.
	Deleted bool
}

// MergeStep is one task of a merge commit, as the merge left it and as
// each parent had it (nil where absent).
type MergeStep struct {
	ID      string
	After   *state.Task
	Parents []*state.Task
}

// conflictOp is the event a merge records on a task that both sides
// changed, for the side that lost (see gitstore.MergeFeature).
const conflictOp = state.OpConflict

// Replay returns every problem of one state commit: its message, its clock,
// and each task change it made.
func Replay(c Commit) []Problem {
	var out []Problem
	add := func(task, format string, args ...any) {
		out = append(out, Problem{Commit: c.Hash, Task: task, Msg: fmt.Sprintf(format, args...)})
	}
	if c.Deleted {
		switch {
		case c.Root:
			add("", "a history that starts with a deletion")
		case c.Op != state.OpDelete && !c.Merge:
			add("", "the feature's state was deleted by a %q commit, not by a delete", c.Op)
		}
		if c.Clock <= c.ParentClock {
			add("", "clock %d does not advance on its parent's %d", c.Clock, c.ParentClock)
		}
		return out
	}
	switch {
	case c.Op == "":
		add("", "no Zerg-Op trailer: not a transition written by git-zerg")
	case c.Root && c.Op != state.OpPlan:
		add("", "the first state commit is %q, not a plan", c.Op)
	}
	switch {
	case c.Clock == 0:
		add("", "no Zerg-Clock trailer")
	case !c.Root && c.Clock <= c.ParentClock:
		add("", "clock %d does not advance on its parent's %d", c.Clock, c.ParentClock)
	}
	if c.Clock != 0 && c.StoredClock != c.Clock {
		if c.StoredClock == 0 {
			add("", "the clock file was not advanced to %d", c.Clock)
		} else {
			add("", "the clock file says %d, the message %d", c.StoredClock, c.Clock)
		}
	}
	if c.FeatureChanged && !replans(c.Op) {
		add("", "feature.json changed outside a plan")
	}
	if c.Op.NamesTask() && c.Task != "" {
		found := false
		for _, s := range c.Steps {
			if s.ID != c.Task {
				continue
			}
			for _, ev := range newEvents(s.Before, s.After, c.Op) {
				found = found || ev.Op == c.Op
			}
		}
		if !found {
			add(c.Task, "the commit says %s %s, but the task has no such transition", c.Op, c.Task)
		}
	}
	for _, s := range c.Steps {
		out = append(out, replayStep(c, s)...)
	}
	for _, m := range c.Merged {
		if msg := replayMerge(c, m); msg != "" {
			add(m.ID, "%s", msg)
		}
	}
	return out
}

// replayMerge checks one task of a merge commit. A merge makes no
// transition: each task is one side's, except a task both sides changed,
// which is the winning side's plus one conflict event recording what the
// other side lost. The sides' own transitions are replayed in their own
// commits.
func replayMerge(c Commit, m MergeStep) string {
	if m.After == nil {
		for _, p := range m.Parents {
			if p == nil {
				return ""
			}
		}
		return "task deleted by a merge"
	}
	for _, p := range m.Parents {
		if p != nil && sameJSON(p, m.After) {
			return ""
		}
	}
	n := len(m.After.History)
	if n == 0 || m.After.History[n-1].Op != conflictOp {
		return "a merge gave the task a state none of its sides had"
	}
	ev := m.After.History[n-1]
	won := m.After.Clone()
	won.History = won.History[:n-1]
	present := 0
	side := false
	for _, p := range m.Parents {
		if p != nil {
			present++
			side = side || sameJSON(p, won)
		}
	}
	switch {
	case !side:
		return "a merge gave the task a state none of its sides had, besides a conflict record"
	case present < 2:
		return "a conflict recorded on a task only one side had"
	case ev.From != won.Status || ev.To != won.Status:
		return fmt.Sprintf("conflict record %s → %s on a %s task", orNone(ev.From), ev.To, won.Status)
	case ev.Clock != c.Clock:
		return fmt.Sprintf("conflict record has clock %d, its merge %d", ev.Clock, c.Clock)
	}
	return ""
}

// replans reports whether a commit of op may change the plan itself:
// the feature's levels, the tasks there are, their specs. A plan starts
// every task afresh; plan --update keeps the unchanged ones' histories.
func replans(op state.Op) bool { return op == state.OpPlan || op == state.OpUpdate }

// newEvents returns the events After appended to Before's history, nil when
// the history was not only appended to. A plan starts every task afresh.
func newEvents(before, after *state.Task, op state.Op) []state.Event {
	if after == nil {
		return nil
	}
	if op == state.OpPlan || before == nil {
		return after.History
	}
	if len(after.History) < len(before.History) {
		return nil
	}
	return after.History[len(before.History):]
}

// WorkNeeded lists the work whose facts Replay needs for a step: the
// commits of its new events that take the task to verified or done.
func WorkNeeded(op state.Op, before, after *state.Task) []WorkQuery {
	var out []WorkQuery
	if after == nil {
		return nil
	}
	for _, ev := range newEvents(before, after, op) {
		if ev.Op == state.OpLand && ev.Commit != "" && after.Commit != "" {
			out = append(out, WorkQuery{Commit: ev.Commit, Base: after.Commit, Mode: Landed})
			continue
		}
		if !carriesWork(ev) || ev.Commit == "" || after.Base == "" {
			continue
		}
		mode := Worktree
		if ev.Op == state.OpDone && ev.To == state.Done {
			mode = Shared
		}
		out = append(out, WorkQuery{Commit: ev.Commit, Base: after.Base, Mode: mode})
	}
	return out
}

func carriesWork(ev state.Event) bool { return ev.Op.CarriesWork(ev.To) }

// replayStep checks one task's change.
func replayStep(c Commit, s Step) []Problem {
	r := &replayed{c: c, s: s}
	before, after := s.Before, s.After
	if c.Op == state.OpPlan {
		// A plan, first or forced, starts the task afresh: its earlier
		// history stays behind the commit's parent.
		before = nil
	}
	if after == nil {
		if before != nil && !replans(c.Op) {
			r.add("task deleted outside a plan")
		}
		return r.why
	}
	if after.Spec == nil {
		r.add("stored without its spec")
		return r.why
	}
	if after.Spec.ID != s.ID {
		r.add("stored under the name %s but its spec says %s", s.ID, after.Spec.ID)
	}
	if before != nil && before.Spec == nil {
		before = nil
	}
	if !r.historyGrows(before, after) {
		return r.why
	}
	evs := newEvents(before, after, c.Op)
	if len(evs) == 0 {
		switch {
		case before == nil:
			r.add("task created without a transition")
		case !sameJSON(before, after):
			r.add("state changed without a transition%s", changedFields(before, after))
		}
		return r.why
	}
	if c.Op == state.OpPlan && (len(evs) != 1 || evs[0].Op != state.OpPlan) {
		r.add("a plan must start the task with its plan event alone, not %d events", len(evs))
	}
	if before != nil && !replans(c.Op) {
		r.planUnchanged(before, after)
	}
	// Replay the new events from the state before.
	if before != nil {
		r.status, r.attempts, r.approved, r.commit, r.base, r.pr = before.Status, before.Attempts, before.Approved != "", before.Commit, before.Base, before.PR
	}
	for i, ev := range evs {
		what := fmt.Sprintf("%s %s → %s", ev.Op, orNone(ev.From), ev.To)
		if len(evs) > 1 {
			what = fmt.Sprintf("event %d (%s)", len(after.History)-len(evs)+i+1, what)
		}
		r.event(what, ev, after)
	}
	r.matches(after)
	return r.why
}

// replayed is a task's state as replaying its events makes it, and what
// was found wrong on the way.
type replayed struct {
	c   Commit
	s   Step
	why []Problem

	status   state.Status
	attempts int
	approved bool
	commit   string
	base     string
	pr       int
	claimed  bool
}

func (r *replayed) add(format string, args ...any) {
	r.why = append(r.why, Problem{Commit: r.c.Hash, Task: r.s.ID, Msg: fmt.Sprintf(format, args...)})
}

// historyGrows checks that after's history begins with before's: history
// only grows. False when it does not, and nothing more is to be checked.
func (r *replayed) historyGrows(before, after *state.Task) bool {
	if before == nil {
		return true
	}
	n := min(len(before.History), len(after.History))
	for i := 0; i < n; i++ {
		if !sameEvent(before.History[i], after.History[i]) {
			r.add("history rewritten: event %d (%s) became %s", i+1, eventString(before.History[i]), eventString(after.History[i]))
			return false
		}
	}
	if len(after.History) < len(before.History) {
		r.add("history rewritten: %d of its %d events removed", len(before.History)-len(after.History), len(before.History))
		return false
	}
	return true
}

// planUnchanged checks what only a plan changes: the plan is not the
// history's to change.
func (r *replayed) planUnchanged(before, after *state.Task) {
	for _, f := range []struct {
		name string
		a, b any
	}{{"spec", before.Spec, after.Spec}, {"level", before.Level, after.Level},
		{"implied dependencies", before.Implied, after.Implied}, {"dependents", before.Dependents, after.Dependents}} {
		if !sameJSON(f.a, f.b) {
			r.add("its %s changed outside a plan", f.name)
		}
	}
}

// event replays one event (what names it in problems) on the state so
// far, after being the task as the commit stored it.
func (r *replayed) event(what string, ev state.Event, after *state.Task) {
	c, s := r.c, r.s
	if ev.From != r.status {
		r.add("%s starts from %s, but the task was %s", what, orNone(ev.From), orNone(r.status))
	}
	if !ev.Op.Legal(ev.From, ev.To) {
		r.add("%s is not a legal transition", what)
	}
	if ev.Op == state.OpPlan && !replans(c.Op) {
		r.add("%s outside a plan", what)
	}
	if ev.Clock != c.Clock {
		r.add("%s has clock %d, its commit %d", what, ev.Clock, c.Clock)
	}
	switch ev.Op.Attempts() {
	case state.Counted:
		r.attempts++
	case state.GivenBack:
		r.attempts--
	case state.ResetCount:
		r.attempts = 0
	}
	switch ev.Op {
	case state.OpUpdate:
		// Changed by plan --update: it starts again, its work
		// taken out of staging.
		r.commit, r.base, r.pr = "", "", 0
	case state.OpClaim:
		r.claimed = true
		r.commit, r.base = "", after.Base
		if s.Status != nil {
			if missing := DepsDone(after, s.Status); len(missing) > 0 {
				r.add("%s before its dependencies were done (%s)", what, strings.Join(missing, "; "))
			}
		}
		if after.NeedsApproval() && !r.approved {
			r.add("%s without approval (risk %s)", what, after.Spec.Risk)
		}
		if ev.Worker == "" {
			r.add("%s names no worker", what)
		}
	case state.OpRetry:
		r.pr = 0
	case state.OpShip:
		if ev.PR <= 0 {
			r.add("%s names no pull request", what)
		}
		r.pr = ev.PR
	case state.OpLand:
		r.land(what, ev, after)
	case state.OpApprove:
		if !after.NeedsApproval() {
			r.add("%s of a %q risk task, which needs none", what, after.Spec.Risk)
		} else if r.approved {
			r.add("%s of a task already approved", what)
		}
		r.approved = true
	}
	if carriesWork(ev) {
		r.commit = ev.Commit
		for _, p := range checkWork(what, ev, after, s.Work) {
			p.Commit, p.Task = c.Hash, s.ID
			r.why = append(r.why, p)
		}
	}
	r.status = ev.To
}

// land checks a land event against its pull request and merge commit.
func (r *replayed) land(what string, ev state.Event, after *state.Task) {
	if r.pr == 0 {
		r.add("%s of a task with no pull request", what)
	}
	if ev.Commit == "" {
		r.add("%s names no merge commit", what)
	} else if w, ok := r.s.Work[ev.Commit]; ok && w.Exists && w.BaseExists && !w.Descends {
		r.add("%s: merge commit %s does not contain the task's work %s", what, short(ev.Commit), short(after.Commit))
	} else if ok && (!w.Exists || !w.BaseExists) {
		r.why = append(r.why, Problem{Commit: r.c.Hash, Task: r.s.ID, Unchecked: true,
			Msg: fmt.Sprintf("%s: merge commit %s or the work %s is not in this repository", what, short(ev.Commit), short(after.Commit))})
	}
}

// matches checks the task as stored against the state its events lead to.
func (r *replayed) matches(after *state.Task) {
	if after.Status != r.status {
		r.add("status %s, but its transitions lead to %s", after.Status, orNone(r.status))
	}
	if after.Attempts != r.attempts {
		r.add("attempts %d, but its transitions make %d", after.Attempts, r.attempts)
	}
	if after.Approved != "" && !r.approved {
		r.add("approved by %s without an approve transition", after.Approved)
	}
	if after.Commit != r.commit {
		r.add("work commit %s, but its transitions give %s", short(after.Commit), short(r.commit))
	}
	if after.PR != r.pr {
		r.add("pull request #%d, but its transitions give #%d", after.PR, r.pr)
	}
	if !r.claimed && after.Base != r.base {
		r.add("base changed from %s to %s without a claim", short(r.base), short(after.Base))
	}
	if r.status == state.Claimed && after.Worker == "" {
		r.add("claimed by no worker")
	}
}

// checkWork checks the work a done or merge event took to verified or done
// against the facts the caller gathered.
func checkWork(what string, ev state.Event, t *state.Task, facts map[string]Work) []Problem {
	var why []Problem
	add := func(format string, args ...any) { why = append(why, Problem{Msg: fmt.Sprintf(format, args...)}) }
	unchecked := func(format string, args ...any) {
		why = append(why, Problem{Msg: fmt.Sprintf(format, args...), Unchecked: true})
	}
	if ev.Commit == "" {
		add("%s names no commit", what)
		return why
	}
	if t.Base == "" {
		add("%s: the task has no base to compare the work with", what)
		return why
	}
	w, ok := facts[ev.Commit]
	switch {
	case !ok || !w.Exists:
		unchecked("%s: commit %s is not in this repository", what, short(ev.Commit))
		return why
	case !w.BaseExists:
		unchecked("%s: the claim's base %s is not in this repository", what, short(t.Base))
		return why
	case !w.Descends:
		add("%s: commit %s does not descend from the claim's base %s", what, short(ev.Commit), short(t.Base))
		return why
	}
	owned := t.Spec.Owned()
	if ev.Op == state.OpDone && len(owned) > 0 && !w.New {
		add("%s with no new commit since the claim (base %s)", what, short(t.Base))
	}
	if len(owned) == 0 && len(w.Touched) > 0 {
		add("%s: check-only task changed files: %s", what, strings.Join(w.Touched, ", "))
	} else if un := Unowned(t.Spec, w.Touched); len(un) > 0 {
		add("%s: commit %s touches paths the task does not own: %s", what, short(ev.Commit), strings.Join(un, ", "))
	}
	return why
}

func sameEvent(a, b state.Event) bool {
	return a.Clock == b.Clock && a.At.Equal(b.At) && a.Op == b.Op && a.From == b.From && a.To == b.To &&
		a.Worker == b.Worker && a.Commit == b.Commit && a.Reason == b.Reason && a.PR == b.PR
}

func eventString(ev state.Event) string {
	return fmt.Sprintf("%s %s → %s at clock %d", ev.Op, orNone(ev.From), ev.To, ev.Clock)
}

func orNone(s state.Status) string {
	if s == "" {
		return "nothing"
	}
	return string(s)
}

// sameJSON compares two values as they are stored: a blob that changed
// only in its encoding is no change.
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// changedFields names what changed in a task without a transition, for
// the one place where a reader looks first: its status.
func changedFields(before, after *state.Task) string {
	if before == nil || after == nil {
		return ""
	}
	if before.Status != after.Status {
		return fmt.Sprintf(" (status %s → %s)", before.Status, after.Status)
	}
	var fields []string
	for _, f := range []struct {
		name string
		a, b any
	}{{"spec", before.Spec, after.Spec}, {"worker", before.Worker, after.Worker}, {"attempts", before.Attempts, after.Attempts},
		{"base", before.Base, after.Base}, {"commit", before.Commit, after.Commit}, {"approved", before.Approved, after.Approved}, {"pr", before.PR, after.PR},
		{"not_before", before.NotBefore, after.NotBefore}, {"reason", before.Reason, after.Reason}} {
		if !sameJSON(f.a, f.b) {
			fields = append(fields, f.name)
		}
	}
	if len(fields) == 0 {
		return ""
	}
	return " (" + strings.Join(fields, ", ") + ")"
}
