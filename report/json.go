// Package report renders a feature's state as the documents git-zerg
// prints: `status` (text and --json), `export`, `dag --format` and `log`.
// The JSON documents are public API (README "JSON output"): fields are only
// ever added, and internal types are never marshalled as they are.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
)

// Files are the paths a task declares.
type Files struct {
	Create []string `json:"create"`
	Modify []string `json:"modify"`
	Read   []string `json:"read"`
}

// Task is a task as every JSON document shows it.
type Task struct {
	ID                  string       `json:"id"`
	Title               string       `json:"title"`
	Level               int          `json:"level"`
	Status              state.Status `json:"status"`
	Worker              string       `json:"worker"`
	Attempts            int          `json:"attempts"`
	Commit              string       `json:"commit"`
	Base                string       `json:"base,omitempty"`
	Dependencies        []string     `json:"dependencies"`
	SoftDependencies    []string     `json:"soft_dependencies"`
	ImpliedDependencies []string     `json:"implied_dependencies"`
	Files               Files        `json:"files"`
	Risk                string       `json:"risk,omitempty"`
	Approved            string       `json:"approved,omitempty"`
	Issue               int          `json:"issue,omitempty"`
	PR                  int          `json:"pr,omitempty"`
	Reason              string       `json:"reason,omitempty"`
	NotBefore           *time.Time   `json:"not_before,omitempty"`
	Usage               *Usage       `json:"usage,omitempty"`
	Host                string       `json:"host,omitempty"`
	Verification        Verification `json:"verification"`
	Runs                []Run        `json:"runs,omitempty"`
	History             []Event      `json:"history,omitempty"`
}

// Run is one time a worker held the task, claim to settlement.
type Run struct {
	Attempt int        `json:"attempt"` // numbered across retries
	Worker  string     `json:"worker"`
	Start   time.Time  `json:"start"`
	End     *time.Time `json:"end,omitempty"`     // absent while it runs
	Outcome string     `json:"outcome,omitempty"` // the status it ended in
}

// Verification is the command that checks a task's work.
type Verification struct {
	Command        string `json:"command"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty"`
}

// Event is one transition of a task's history.
type Event struct {
	Clock  uint64    `json:"clock"`
	At     time.Time `json:"at"`
	Op     state.Op  `json:"op"`
	From   string    `json:"from"`
	To     string    `json:"to"`
	Worker string    `json:"worker,omitempty"`
	Commit string    `json:"commit,omitempty"`
	Reason string    `json:"reason,omitempty"`
	PR     int       `json:"pr,omitempty"`
	Usage  *Usage    `json:"usage,omitempty"`
}

// Usage is what agents reported their attempts cost: per event, per task
// (every attempt) and in total.
type Usage struct {
	CostUSD      float64 `json:"cost_usd"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	Turns        int     `json:"turns"`
	SessionID    string  `json:"session_id,omitempty"`
}

// usageOf is u as documents show it, nil when nothing was reported.
func usageOf(u *state.Usage) *Usage {
	if u == nil || *u == (state.Usage{}) {
		return nil
	}
	return &Usage{u.CostUSD, u.InputTokens, u.OutputTokens, u.Turns, u.SessionID}
}

// nonNil is s, or an empty list: documents print [] rather than null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TaskOf is t as documents show it; history adds its transitions.
func TaskOf(t *state.Task, history bool) Task {
	sp := t.Spec
	out := Task{
		ID:                  sp.ID,
		Title:               sp.Title,
		Level:               t.Level,
		Status:              t.Status,
		Worker:              t.Worker,
		Host:                t.Host,
		Attempts:            t.Attempts,
		Commit:              t.Commit,
		Base:                t.Base,
		Dependencies:        nonNil(sp.Dependencies),
		SoftDependencies:    nonNil(sp.SoftDependencies),
		ImpliedDependencies: nonNil(t.Implied),
		Files:               Files{nonNil(sp.Files.Create), nonNil(sp.Files.Modify), nonNil(sp.Files.Read)},
		Risk:                sp.Risk,
		Approved:            t.Approved,
		Issue:               sp.Issue,
		PR:                  t.PR,
		Reason:              t.Reason,
		Verification:        Verification{sp.Verification.Command, sp.Verification.TimeoutSeconds},
	}
	if !t.NotBefore.IsZero() {
		nb := t.NotBefore.UTC()
		out.NotBefore = &nb
	}
	spent := t.Spent()
	for i := len(t.History) - 1; i >= 0; i-- {
		if u := t.History[i].Usage; u != nil && u.SessionID != "" {
			spent.SessionID = u.SessionID // the latest attempt's, to resume it
			break
		}
	}
	out.Usage = usageOf(&spent)
	for _, r := range t.Runs() {
		run := Run{Attempt: r.Attempt, Worker: r.Worker, Start: r.Start.UTC(), Outcome: string(r.Outcome)}
		if !r.End.IsZero() {
			end := r.End.UTC()
			run.End = &end
		}
		out.Runs = append(out.Runs, run)
	}
	if history {
		out.History = []Event{}
		for _, ev := range t.History {
			out.History = append(out.History, Event{ev.Clock, ev.At.UTC(), ev.Op, string(ev.From), string(ev.To), ev.Worker, ev.Commit, ev.Reason, ev.PR, usageOf(ev.Usage)})
		}
	}
	return out
}

// Lock is a path lock.
type Lock struct {
	Path    string    `json:"path"`
	Owner   string    `json:"owner"`
	Reason  string    `json:"reason,omitempty"`
	Feature string    `json:"feature,omitempty"`
	Task    string    `json:"task,omitempty"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
}

// lockOf is l as documents show it.
func lockOf(l state.Lock) Lock {
	return Lock{l.Path, l.Owner, l.Reason, l.Feature, l.Task, l.Created.UTC(), l.Expires.UTC()}
}

// LocksOf is ls as documents show them, [] for none.
func LocksOf(ls []state.Lock) []Lock {
	out := []Lock{}
	for _, l := range ls {
		out = append(out, lockOf(l))
	}
	return out
}

// Worker is a worker's lease.
type Worker struct {
	Name    string    `json:"name"`
	Owner   string    `json:"owner"`
	Task    string    `json:"task"`
	Since   time.Time `json:"since"`
	Expires time.Time `json:"expires"`
	Host    string    `json:"host"`
	PID     int       `json:"pid,omitempty"`
}

// WorkerOf is w as documents show it.
func WorkerOf(w *state.Worker) Worker {
	return Worker{w.Name, w.Owner, w.Task, w.Since.UTC(), w.Expires.UTC(), w.Host, w.PID}
}

// Level is one level of the plan with the states of its tasks.
type Level struct {
	Level  int            `json:"level"`
	Tasks  []string       `json:"tasks"`
	Counts map[string]int `json:"counts"`
	Done   bool           `json:"done"`
}

// Progress is how many tasks are done.
type Progress struct {
	Done    int `json:"done"`
	Total   int `json:"total"`
	Percent int `json:"percent"`
}

// Problem is an error or warning about a graph.
type Problem struct {
	Place   string `json:"place"`
	Message string `json:"message"`
	// Task is the id of the task the place is in, when it has a valid one.
	Task string `json:"task,omitempty"`
}

// ProblemsOf is ps as documents show them, [] for none.
func ProblemsOf(ps []levels.Problem) []Problem {
	out := []Problem{}
	for _, p := range ps {
		out = append(out, Problem{p.Place, p.Msg, p.Task})
	}
	return out
}

// WriteJSON writes v as every document is written: indented by two
// spaces, HTML left as it is.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// TasksOf are tasks as --json prints them, [] for none.
func TasksOf(ts []*state.Task) []Task {
	out := []Task{}
	for _, t := range ts {
		out = append(out, TaskOf(t, false))
	}
	return out
}

// WriteTransition prints the tasks a transition left: each as "<id>
// <status>", or as JSON, one task as an object and several as an array.
func WriteTransition(w io.Writer, ts []*state.Task, asJSON bool) error {
	if asJSON && len(ts) == 1 {
		return WriteJSON(w, TaskOf(ts[0], false))
	}
	if asJSON {
		return WriteJSON(w, TasksOf(ts))
	}
	for _, t := range ts {
		if _, err := fmt.Fprintf(w, "%s %s\n", t.ID(), t.Status); err != nil {
			return err
		}
	}
	return nil
}

// UpdateOf is plan --update's document, [] for an empty list.
func UpdateOf(u Update) Update {
	u.Kept, u.Changed, u.Added, u.Removed, u.TakenOut = nonNil(u.Kept), nonNil(u.Changed), nonNil(u.Added), nonNil(u.Removed), nonNil(u.TakenOut)
	return u
}

// Update is what plan --update prints with --json.
type Update struct {
	Feature  string     `json:"feature"`
	Tasks    int        `json:"tasks"`
	Levels   [][]string `json:"levels"`
	Kept     []string   `json:"kept"`
	Changed  []string   `json:"changed"`
	Added    []string   `json:"added"`
	Removed  []string   `json:"removed"`
	TakenOut []string   `json:"taken_out"`
	Commit   string     `json:"commit"`
}

// UpdateText prints what plan --update did: its line on w, what changed
// on notes.
func UpdateText(w, notes io.Writer, u Update, stagingTip string) {
	fmt.Fprintf(w, "updated %s: %s in %s; %d kept, %d changed, %d added, %d removed\n", u.Feature,
		words.Plural(u.Tasks, "task"), words.Plural(len(u.Levels), "level"), len(u.Kept), len(u.Changed), len(u.Added), len(u.Removed))
	for _, list := range []struct {
		what string
		ids  []string
	}{{"starts again", u.Changed}, {"added", u.Added}, {"removed", u.Removed}} {
		if len(list.ids) > 0 {
			fmt.Fprintf(notes, "%s: %s\n", list.what, strings.Join(list.ids, ", "))
		}
	}
	if len(u.TakenOut) > 0 {
		fmt.Fprintf(notes, "taken out of staging: %s (staging at %s; the next rush gates it)\n", strings.Join(u.TakenOut, ", "), words.ShortHash(stagingTip))
	}
}
