package codec

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

// TestEncodeTask checks the direct encoding of tasks against EncodeJSON,
// byte for byte: it is the stored state, and a changed byte would change
// every task's blob.
func TestEncodeTask(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 890, time.UTC)
	zone := time.FixedZone("x", 3600+1800)
	odd := []string{"", "plain", `quote " and \ backslash`, "<html> & more", "tab\tnew\nline\r\x00\x1f\x7f",
		"é ü 日本", "\u2028\u2029", "bad \xff utf-8"}
	full := func(s string) *state.Task {
		return &state.Task{
			Spec: &levels.Task{ID: "T" + s, Title: s + "t", Description: s + "d", Level: 3, Risk: s + "r", Issue: 7,
				Files:        levels.Files{Create: []string{s + "c"}, Modify: []string{"a", s}, Read: []string{s + "r"}},
				Dependencies: []string{s + "d"}, SoftDependencies: []string{s + "s"}, AcceptanceCriteria: []string{s, s + "a"}, Context: []string{s + "x"},
				Verification: levels.Verification{Command: s + "c", TimeoutSeconds: 60}},
			Level: 2, Implied: []string{s + "i"}, Dependents: []string{"T1", s}, Status: state.Status(s), Worker: s + "w", Owner: s + "o",
			Attempts: 3, Base: s + "b", Commit: s + "c", Approved: s + "a", NotBefore: at.In(zone), Reason: s + "r", PR: 12, Host: s + "h",
			History: []state.Event{
				{Clock: 1, At: at, Op: "plan", To: state.Pending},
				{Clock: 1 << 40, At: at.In(zone), Op: state.Op(s), From: state.Status(s + "f"), To: state.Status(s + "t"), Worker: s + "w", Commit: s + "c", Reason: s + "r", PR: 3},
			},
		}
	}
	tasks := []*state.Task{
		{Spec: &levels.Task{ID: "T1"}},
		{Spec: &levels.Task{ID: "T2"}, History: []state.Event{}},
		{Spec: &levels.Task{ID: "T3", Title: "x", Dependencies: []string{"T1"}}, Status: state.Pending,
			History: []state.Event{{At: at, Op: "plan", To: state.Pending}}},
		// EncodeJSON's own: keys of the spec's own, usage, no spec, a time
		// it cannot write.
		{Spec: &levels.Task{ID: "T4", Extra: map[string]json.RawMessage{"x-a": json.RawMessage(`{"b": 1}`)}}},
		{Spec: &levels.Task{ID: "T5", Files: levels.Files{Extra: map[string]json.RawMessage{"x": json.RawMessage(`1`)}}}},
		{Spec: &levels.Task{ID: "T6", Verification: levels.Verification{Extra: map[string]json.RawMessage{"x": json.RawMessage(`[]`)}}}},
		{Spec: &levels.Task{ID: "T7"}, History: []state.Event{{At: at, Usage: &state.Usage{CostUSD: 0.5, InputTokens: 3}}}},
		{},
	}
	for _, s := range odd {
		tasks = append(tasks, full(s))
	}
	for _, tk := range tasks {
		want, err := EncodeJSON(tk)
		if err != nil {
			t.Fatal(err)
		}
		got, err := EncodeTask(tk)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("task %+v:\n got %s\nwant %s", tk.Spec, got, want)
		}
	}
	// A time encoding/json refuses is refused the same.
	bad := &state.Task{Spec: &levels.Task{ID: "T8"}, NotBefore: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
	if _, err := EncodeTask(bad); err == nil {
		t.Error("a year past 9999 was encoded")
	}
}
