package main

import (
	"encoding/json"
	"io"
	"time"

	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

// The JSON documents git-zerg prints. They are public API (README "JSON
// output"): fields are only ever added. Internal types are never marshalled
// as they are.

type filesJSON struct {
	Create []string `json:"create"`
	Modify []string `json:"modify"`
	Read   []string `json:"read"`
}

type taskJSON struct {
	ID                  string          `json:"id"`
	Title               string          `json:"title"`
	Level               int             `json:"level"`
	Status              state.Status    `json:"status"`
	Worker              string          `json:"worker"`
	Attempts            int             `json:"attempts"`
	Commit              string          `json:"commit"`
	Base                string          `json:"base,omitempty"`
	Dependencies        []string        `json:"dependencies"`
	SoftDependencies    []string        `json:"soft_dependencies"`
	ImpliedDependencies []string        `json:"implied_dependencies"`
	Files               filesJSON       `json:"files"`
	Risk                string          `json:"risk,omitempty"`
	Approved            string          `json:"approved,omitempty"`
	Reason              string          `json:"reason,omitempty"`
	NotBefore           *time.Time      `json:"not_before,omitempty"`
	Usage               *usageJSON      `json:"usage,omitempty"`
	Host                string          `json:"host,omitempty"`
	Verification        verificationOut `json:"verification"`
	History             []eventJSON     `json:"history,omitempty"`
}

type verificationOut struct {
	Command        string `json:"command"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty"`
}

type eventJSON struct {
	Clock  uint64     `json:"clock"`
	At     time.Time  `json:"at"`
	Op     string     `json:"op"`
	From   string     `json:"from"`
	To     string     `json:"to"`
	Worker string     `json:"worker,omitempty"`
	Commit string     `json:"commit,omitempty"`
	Reason string     `json:"reason,omitempty"`
	Usage  *usageJSON `json:"usage,omitempty"`
}

// usageJSON is what agents reported their attempts cost: per event, per
// task (every attempt) and in total.
type usageJSON struct {
	CostUSD      float64 `json:"cost_usd"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	Turns        int     `json:"turns"`
	SessionID    string  `json:"session_id,omitempty"`
}

func usageOut(u *state.Usage) *usageJSON {
	if u == nil || *u == (state.Usage{}) {
		return nil
	}
	return &usageJSON{u.CostUSD, u.InputTokens, u.OutputTokens, u.Turns, u.SessionID}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func taskOut(t *state.Task, history bool) taskJSON {
	sp := t.Spec
	out := taskJSON{
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
		Files:               filesJSON{nonNil(sp.Files.Create), nonNil(sp.Files.Modify), nonNil(sp.Files.Read)},
		Risk:                sp.Risk,
		Approved:            t.Approved,
		Reason:              t.Reason,
		Verification:        verificationOut{sp.Verification.Command, sp.Verification.TimeoutSeconds},
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
	out.Usage = usageOut(&spent)
	if history {
		out.History = []eventJSON{}
		for _, ev := range t.History {
			out.History = append(out.History, eventJSON{ev.Clock, ev.At.UTC(), ev.Op, string(ev.From), string(ev.To), ev.Worker, ev.Commit, ev.Reason, usageOut(ev.Usage)})
		}
	}
	return out
}

type lockJSON struct {
	Path    string    `json:"path"`
	Owner   string    `json:"owner"`
	Reason  string    `json:"reason,omitempty"`
	Feature string    `json:"feature,omitempty"`
	Task    string    `json:"task,omitempty"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
}

func lockOut(l state.Lock) lockJSON {
	return lockJSON{l.Path, l.Owner, l.Reason, l.Feature, l.Task, l.Created.UTC(), l.Expires.UTC()}
}

func locksOut(ls []state.Lock) []lockJSON {
	out := []lockJSON{}
	for _, l := range ls {
		out = append(out, lockOut(l))
	}
	return out
}

type workerJSON struct {
	Name    string    `json:"name"`
	Owner   string    `json:"owner"`
	Task    string    `json:"task"`
	Since   time.Time `json:"since"`
	Expires time.Time `json:"expires"`
	Host    string    `json:"host"`
	PID     int       `json:"pid,omitempty"`
}

type levelJSON struct {
	Level  int            `json:"level"`
	Tasks  []string       `json:"tasks"`
	Counts map[string]int `json:"counts"`
	Done   bool           `json:"done"`
}

type problemJSON struct {
	Place   string `json:"place"`
	Message string `json:"message"`
}

func problemsOut(ps []levels.Problem) []problemJSON {
	out := []problemJSON{}
	for _, p := range ps {
		out = append(out, problemJSON{p.Place, p.Msg})
	}
	return out
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
