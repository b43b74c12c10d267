// Package view shows a feature's state as it moves: the snapshot model
// both views share, the terminal view of `git zerg watch` and the web page
// of `git zerg serve`. It only reads: nothing here changes state.
package view

import (
	"fmt"
	"strings"
	"time"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/printable"
	"github.com/git-zerg/git-zerg/state"
)

// Task is what the views show of one task.
type Task struct {
	ID       string       `json:"id"`
	Title    string       `json:"title"`
	Level    int          `json:"level"` // 1-based
	Status   state.Status `json:"status"`
	Worker   string       `json:"worker,omitempty"`
	Host     string       `json:"host,omitempty"`
	Attempts int          `json:"attempts"`
	Deps     []string     `json:"deps,omitempty"`
	// Since is when the current (or last) attempt was claimed; Until when
	// it left the claimed state, zero while it holds.
	Since  time.Time `json:"since,omitzero"`
	Until  time.Time `json:"until,omitzero"`
	Reason string    `json:"reason,omitempty"`
	Commit string    `json:"commit,omitempty"`
	// Cost is shown only when the stored history carries it.
	CostUSD float64 `json:"cost_usd,omitempty"`
	Tokens  int64   `json:"tokens,omitempty"`
	HasCost bool    `json:"has_cost,omitempty"`
	// Clock is the clock of the task's last event: two reads of a task
	// with the same clock and history length are the same state.
	Clock  uint64 `json:"clock"`
	Events int    `json:"events"`
	// Runs are the times a worker held the task, for the page's timeline;
	// Merged is when its work was merged (it last went done).
	Runs   []Run     `json:"runs,omitempty"`
	Merged time.Time `json:"merged,omitzero"`
}

// Run is one time a worker held a task: its attempt number (across
// retries), from its claim to the state it ended in ("" while it runs).
type Run struct {
	Attempt int          `json:"attempt"`
	Worker  string       `json:"worker"`
	Start   time.Time    `json:"start"`
	End     time.Time    `json:"end,omitzero"`
	Outcome state.Status `json:"outcome,omitempty"`
}

// Elapsed is how long the current or last attempt ran, as of now.
func (t *Task) Elapsed(now time.Time) time.Duration {
	if t.Since.IsZero() {
		return 0
	}
	end := t.Until
	if end.IsZero() {
		end = now
	}
	if d := end.Sub(t.Since); d > 0 {
		return d
	}
	return 0
}

// Worker is a lease held on the feature.
type Worker struct {
	Name    string    `json:"name"`
	Task    string    `json:"task"`
	Host    string    `json:"host"`
	Since   time.Time `json:"since"`
	Expires time.Time `json:"expires"`
}

// Snapshot is a feature's state as of one commit of its ref.
type Snapshot struct {
	Feature string         `json:"feature"`
	Tip     string         `json:"tip"`
	Taken   time.Time      `json:"taken"`
	Levels  [][]string     `json:"levels"`
	Tasks   []*Task        `json:"tasks"` // plan order: level, then file order
	Workers []Worker       `json:"workers"`
	Counts  map[string]int `json:"counts"`
	Done    int            `json:"done"`
	Total   int            `json:"total"`
	// HasCost: some task carries a cost, so the views show the column.
	HasCost bool `json:"has_cost,omitempty"`
	// Gates are the runs of the quality gates on the feature's staging,
	// oldest first, for the page's timeline.
	Gates []GateRun `json:"gates"`
	// Leases are the stored leases Workers show, by name.
	Leases []*state.Worker `json:"-"`

	byID   map[string]int
	meta   *state.Feature
	s      *gitstore.Store
	tx     *gitstore.Tx
	ix     *gitstore.Index
	full   []*state.Task // every stored task, once read
	byFull map[string]*state.Task
}

// Task returns the task with id, or nil.
func (sn *Snapshot) Task(id string) *Task {
	if i, ok := sn.byID[id]; ok {
		return sn.Tasks[i]
	}
	return nil
}

// loadSnapshot reads the feature as of its ref's current tip, every task.
func loadSnapshot(s *gitstore.Store, feature string, now time.Time) (*Snapshot, error) {
	tx, err := s.View(feature)
	if err != nil {
		return nil, err
	}
	return loadTx(s, tx, now, nil)
}

// loadTx reads every task of the feature as tx holds it, and its gate
// runs (through gates, when a caller keeps one between loads).
func loadTx(s *gitstore.Store, tx *gitstore.Tx, now time.Time, gates gateCache) (*Snapshot, error) {
	sn, err := Read(s, tx, now)
	if err != nil {
		return nil, err
	}
	sn.Tip = tx.Tip().String()
	tasks, err := sn.StateTasks()
	if err != nil {
		return nil, err
	}
	sn.Total, sn.byID = len(tasks), make(map[string]int, len(tasks))
	for _, st := range state.Statuses {
		sn.Counts[string(st)] = 0
	}
	hostOf := map[string]string{}
	for _, w := range sn.Leases {
		hostOf[w.Name] = w.Host
	}
	sn.Tasks = []*Task{}
	for i, t := range tasks {
		if !knownStatus(t.Status) {
			// The history check passes only states git-zerg could write;
			// this one is for state read without it (a tip checked
			// before). Either way it is not shown as data.
			return nil, &engine.Error{Kind: engine.Refused,
				What: fmt.Sprintf("the state of %s holds task %s with status %s, none of git-zerg's", tx.Feature(), printable.String(clip(t.ID())), printable.String(clip(string(t.Status)))),
				Hint: "git zerg fsck lists how it got there"}
		}
		v := taskOf(t)
		if v.Status == state.Claimed && hostOf[v.Worker] != "" {
			v.Host = hostOf[v.Worker]
		}
		sn.Tasks = append(sn.Tasks, v)
		sn.byID[v.ID] = i
		sn.Counts[string(v.Status)]++
		if v.Status == state.Done {
			sn.Done++
		}
		sn.HasCost = sn.HasCost || v.HasCost
	}
	if sn.Gates, err = gateRuns(s, sn.Feature, gates); err != nil {
		return nil, err
	}
	// The views keep a snapshot or two while they run: what they show, not
	// every stored task a second time.
	sn.release()
	return sn, nil
}

// clip keeps a forged value short enough for a one-line refusal.
func clip(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:39]) + "…"
	}
	return s
}

func knownStatus(st state.Status) bool {
	for _, k := range state.Statuses {
		if st == k {
			return true
		}
	}
	return false
}

func taskOf(t *state.Task) *Task {
	v := &Task{ID: t.ID(), Title: t.Spec.Title, Level: t.Level, Status: t.Status, Worker: t.Worker,
		Attempts: t.Attempts, Deps: t.Deps(), Reason: t.Reason, Commit: t.Commit, Events: len(t.History)}
	// The owner is <worker>@<host>; the host is what tells the machines of
	// a rush apart, so it shows even once the lease is gone.
	if i := strings.LastIndexByte(t.Owner, '@'); i >= 0 {
		v.Host = t.Owner[i+1:]
	}
	for i := len(t.History) - 1; i >= 0; i-- {
		ev := t.History[i]
		if ev.To == state.Claimed {
			v.Since = ev.At
			if i+1 < len(t.History) {
				v.Until = t.History[i+1].At
			}
			break
		}
	}
	if n := len(t.History); n > 0 {
		v.Clock = t.History[n-1].Clock
	}
	for _, r := range t.Runs() {
		v.Runs = append(v.Runs, Run{Attempt: r.Attempt, Worker: r.Worker, Start: r.Start, End: r.End, Outcome: r.Outcome})
	}
	for _, ev := range t.History {
		if ev.To == state.Done {
			v.Merged = ev.At
		}
	}
	v.CostUSD, v.Tokens, v.HasCost = costOf(t)
	return v
}

// costOf is what the task's attempts reported they cost.
func costOf(t *state.Task) (usd float64, tokens int64, ok bool) {
	u := t.Spent()
	return u.CostUSD, u.Tokens(), u != (state.Usage{})
}

// changedTasks lists the tasks of next that differ from prev, in plan order;
// all is true when the plan itself changed (re-planned, or no prev), and
// then the whole snapshot is what changed.
func changedTasks(prev, next *Snapshot) (tasks []*Task, all bool) {
	if prev == nil || prev.Feature != next.Feature || !sameLevels(prev.Levels, next.Levels) {
		return next.Tasks, true
	}
	// Never nil: a patch says "no task changed" with [], not null, which a
	// page would have to guard against.
	tasks = []*Task{}
	for i, t := range next.Tasks {
		if !t.same(prev.Tasks[i]) {
			tasks = append(tasks, t)
		}
	}
	return tasks, false
}

func sameLevels(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

func (t *Task) same(o *Task) bool {
	return t.ID == o.ID && t.Clock == o.Clock && t.Events == o.Events && t.Status == o.Status &&
		t.Worker == o.Worker && t.Host == o.Host && t.Attempts == o.Attempts && t.Reason == o.Reason &&
		t.Commit == o.Commit && t.CostUSD == o.CostUSD && t.Tokens == o.Tokens && t.Title == o.Title
}

// shortDuration prints an elapsed time the way both views show it: 42s, 3m05s,
// 1h02m.
func shortDuration(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

// Cost prints a task's cost, "" when none is recorded.
func (t *Task) Cost() string {
	if !t.HasCost {
		return ""
	}
	var parts []string
	if t.CostUSD != 0 {
		parts = append(parts, state.USD(t.CostUSD))
	}
	if t.Tokens != 0 {
		parts = append(parts, tokens(t.Tokens)+" tok")
	}
	return strings.Join(parts, " ")
}

func tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}
