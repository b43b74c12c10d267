// Package state holds the values git-zerg keeps under refs/zerg/: a
// feature's tasks with their history, its workers' leases, and the
// repository-wide file locks, and the facts of the state machine they move
// through: which transitions each op makes (op.go) and the sets of statuses
// the rest decides on (status.go). It knows nothing of git (gitstore stores
// these values as commits) and nothing of the rules (gates decides whether
// a transition may happen now).
package state

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/git-zerg/git-zerg/levels"
)

// Format is the version of the stored layout.
//
//	1: feature.json, clock, tasks/<xx>/<id>, workers/<name>; locks ref <xx>/<sha1(path)>.
const Format = 1

// Status is a task's state. The names are public API (README
// "Task states"): they appear in --json output and in the stored blobs.
type Status string

const (
	Pending  Status = "pending"
	Claimed  Status = "claimed"
	Verified Status = "verified"
	Done     Status = "done"
	Failed   Status = "failed"
	Blocked  Status = "blocked"
)

// Statuses lists every status in lifecycle order.
var Statuses = []Status{Pending, Claimed, Verified, Done, Failed, Blocked}

// Event is one transition in a task's history.
type Event struct {
	Clock  uint64    `json:"clock"`
	At     time.Time `json:"at"`
	Op     Op        `json:"op"`
	From   Status    `json:"from"`
	To     Status    `json:"to"`
	Worker string    `json:"worker,omitempty"`
	Commit string    `json:"commit,omitempty"`
	Reason string    `json:"reason,omitempty"`
	// Usage is what the attempt that ended here cost, when the agent
	// reported it.
	Usage *Usage `json:"usage,omitempty"`
	// PR is the pull request a ship event opened or updated for the task.
	PR int `json:"pr,omitempty"`
}

// Usage is what an agent reported an attempt cost.
type Usage struct {
	CostUSD      float64 `json:"cost_usd,omitempty"`
	InputTokens  int64   `json:"input_tokens,omitempty"`
	OutputTokens int64   `json:"output_tokens,omitempty"`
	Turns        int     `json:"turns,omitempty"`
	SessionID    string  `json:"session_id,omitempty"`
}

// USD prints an amount of dollars for people: cents, and below a cent
// two significant digits ($0.0042), so that a small spending and a small
// budget never both read $0.00.
func USD(x float64) string {
	prec := 2
	if x > 0 && x < 0.01 {
		for v := x * 100; v < 10 && prec < 8; v *= 10 {
			prec++
		}
	}
	return fmt.Sprintf("$%.*f", prec, x)
}

// Tokens is the input and output tokens together.
func (u *Usage) Tokens() int64 { return u.InputTokens + u.OutputTokens }

// Add adds o to u.
func (u *Usage) Add(o *Usage) {
	if o == nil {
		return
	}
	u.CostUSD += o.CostUSD
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.Turns += o.Turns
}

// Spent is everything the task's attempts cost.
func (t *Task) Spent() Usage {
	var u Usage
	for i := range t.History {
		u.Add(t.History[i].Usage)
	}
	return u
}

// Task is a planned task and everything that happened to it.
type Task struct {
	Spec       *levels.Task `json:"spec"`
	Level      int          `json:"level"`
	Implied    []string     `json:"implied,omitempty"`    // ordered after these for file ownership
	Dependents []string     `json:"dependents,omitempty"` // tasks that wait for this one

	Status    Status    `json:"status"`
	Worker    string    `json:"worker,omitempty"` // worker holding (or last holding) the task
	Owner     string    `json:"owner,omitempty"`  // lock owner identity of that worker, <worker>@<host>
	Attempts  int       `json:"attempts"`
	Base      string    `json:"base,omitempty"`   // commit the work is compared with
	Commit    string    `json:"commit,omitempty"` // the verified / done work, pinned
	Approved  string    `json:"approved,omitempty"`
	NotBefore time.Time `json:"not_before,omitempty"` // backoff after a failure
	Reason    string    `json:"reason,omitempty"`
	// PR is the pull request the task's work is reviewed in (forge.review):
	// a verified task with a PR is in review.
	PR      int     `json:"pr,omitempty"`
	History []Event `json:"history"`
	// Host is the host of the worker holding (or last holding) the task:
	// ZERG_HOST, else the clone's host identity (gitstore.HostIdentity).
	Host string `json:"host,omitempty"`
}

// Issue is the forge issue the task carries out, 0 when none.
func (t *Task) Issue() int { return t.Spec.Issue }

// ID is the task's id.
func (t *Task) ID() string { return t.Spec.ID }

// NeedsApproval reports whether the task's risk requires `approve` before a claim.
func (t *Task) NeedsApproval() bool {
	return t.Spec.Risk == "high" || t.Spec.Risk == "critical"
}

// Deps returns the hard dependencies, including those implied by ownership.
func (t *Task) Deps() []string {
	if len(t.Implied) == 0 {
		return t.Spec.Dependencies
	}
	out := append([]string(nil), t.Spec.Dependencies...)
	return append(out, t.Implied...)
}

// Worker is a worker's lease on its claimed task. Its expiry is the lease of
// the task's locks: a worker that stops heartbeating loses its claim.
type Worker struct {
	Name    string    `json:"name"`
	Owner   string    `json:"owner"`
	Task    string    `json:"task"`
	Since   time.Time `json:"since"`
	Expires time.Time `json:"expires"`
	Host    string    `json:"host"`
	// Instance tells the clone that made the lease from a copy of it
	// that kept its host name (gitstore.HostIdentity).
	Instance string `json:"instance,omitempty"`
	PID      int    `json:"pid,omitempty"`
	// Started identifies the process beyond its pid (pid reuse), so a
	// resumed rush on the same host can tell a dead holder from a live one.
	Started string `json:"started,omitempty"`
}

// Feature is the stored description of a planned feature.
type Feature struct {
	Format    int        `json:"format"`
	Name      string     `json:"feature"`
	PlannedAt time.Time  `json:"planned_at"`
	Levels    [][]string `json:"levels"`
	// Graph holds the graph's other top-level keys (version, levels,
	// critical_path...) verbatim; the tasks are stored one by one.
	Graph    map[string]json.RawMessage `json:"graph,omitempty"`
	Warnings []string                   `json:"warnings,omitempty"`
}

// Lock is a lease on a path, repository-wide.
type Lock struct {
	Path    string    `json:"path"`
	Owner   string    `json:"owner"`
	Reason  string    `json:"reason,omitempty"`
	Feature string    `json:"feature,omitempty"`
	Task    string    `json:"task,omitempty"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
}

// Active reports whether the lock still holds at now.
func (l Lock) Active(now time.Time) bool { return now.Before(l.Expires) }

// Record appends a transition to the task's history and moves it to ev.To.
func (t *Task) Record(ev Event) {
	if ev.From == "" && ev.Op != OpPlan {
		ev.From = t.Status
	}
	t.Status = ev.To
	t.History = append(t.History, ev)
}

// Clone returns a copy that shares nothing mutable with t.
func (t *Task) Clone() *Task {
	c := *t
	c.History = append([]Event(nil), t.History...)
	return &c
}
