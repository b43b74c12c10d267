package levels

import (
	"bytes"
	"testing"
)

// TestMarshalKnown checks the shortcut for tasks without keys of their own
// against the general encoding, byte for byte: it is what the state stores.
func TestMarshalKnown(t *testing.T) {
	odd := []string{"", "plain", `quote " and \ backslash`, "<html> & more", "tab\tnew\nline\r\x00\x1f\x7f",
		"é ü 日本", "\u2028\u2029", "bad \xff utf-8", "emoji 🦀"}
	tasks := []*Task{
		{ID: "T1"},
		{ID: "T2", Title: "title", Dependencies: []string{"T1"}, Verification: Verification{Command: "go test ./..."}},
		{ID: "T3", Title: "t", Description: "d", Level: 2, Files: Files{Create: []string{"a.go"}, Modify: []string{"b.go", "c.go"}, Read: []string{"d"}},
			Dependencies: []string{"T1", "T2"}, SoftDependencies: []string{"T0"}, AcceptanceCriteria: []string{"works"}, Context: []string{"ctx"},
			Risk: "high", Issue: 42, Verification: Verification{Command: "make", TimeoutSeconds: 30}},
	}
	for _, s := range odd {
		tasks = append(tasks, &Task{ID: s, Title: s, Description: s, Risk: s, Files: Files{Read: []string{s, s}},
			Dependencies: []string{s}, AcceptanceCriteria: []string{s}, Context: []string{s}, Verification: Verification{Command: s}})
	}
	for _, tk := range tasks {
		want, err := tk.marshalAny()
		if err != nil {
			t.Fatal(err)
		}
		if got := tk.marshalKnown(); !bytes.Equal(got, want) {
			t.Errorf("task %q:\n got %s\nwant %s", tk.ID, got, want)
		}
	}
}
