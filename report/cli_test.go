package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/epic"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

// One task is printed as an object, several as an array; as text, each
// on its own line.
func TestWriteTransition(t *testing.T) {
	mk := func(id string) *state.Task {
		return &state.Task{Spec: &levels.Task{ID: id}, Status: state.Pending}
	}
	var buf bytes.Buffer
	if err := WriteTransition(&buf, []*state.Task{mk("A"), mk("B")}, false); err != nil || buf.String() != "A pending\nB pending\n" {
		t.Fatalf("text: %q %v", buf.String(), err)
	}
	buf.Reset()
	var one map[string]any
	if err := WriteTransition(&buf, []*state.Task{mk("A")}, true); err != nil || json.Unmarshal(buf.Bytes(), &one) != nil || one["id"] != "A" {
		t.Fatalf("one: %s %v", buf.String(), err)
	}
	buf.Reset()
	var many []map[string]any
	if err := WriteTransition(&buf, []*state.Task{mk("A"), mk("B")}, true); err != nil || json.Unmarshal(buf.Bytes(), &many) != nil || len(many) != 2 {
		t.Fatalf("several: %s %v", buf.String(), err)
	}
	if b, _ := json.Marshal(TasksOf(nil)); string(b) != "[]" {
		t.Fatalf("no tasks: %s", b)
	}
}

func TestEpicText(t *testing.T) {
	var buf bytes.Buffer
	EpicBumpText(&buf, "e", &epic.BumpResult{Epic: &state.Epic{Version: 3}, Review: []string{"a", "b"}})
	if buf.String() != "epic e is now v3; needs review: a, b\n" {
		t.Errorf("bump: %q", buf.String())
	}
	buf.Reset()
	EpicApproveText(&buf, "e", &state.Epic{Version: 3, Review: []state.EpicReview{{Feature: "b"}}}, []string{"a"})
	if buf.String() != "approved a in epic e v3; still to review: b\n" {
		t.Errorf("approve: %q", buf.String())
	}
}

// An epic's rush says whose each line is and leaves the live line out.
func TestEpicEvents(t *testing.T) {
	var buf bytes.Buffer
	ev := EpicEvents(NewLive(&buf, false))
	ev(engine.Event{Type: engine.EvProgress, Feature: "f", Level: 1})
	ev(engine.Event{Type: engine.EvTransition, Feature: "f", Task: "A", Text: "done"})
	ev(engine.Event{Type: engine.EvNote, Feature: "g", Text: "hello"})
	ev(engine.Event{Type: engine.EvLevelStart, Feature: "h", Text: "2 tasks in 1 level, by their dependencies"})
	out := buf.String()
	for _, want := range []string{"f/A done", "g: hello", "h: 2 tasks in 1 level"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q: %q", want, out)
		}
	}
}

func TestValidateOf(t *testing.T) {
	v := ValidateOf("g.json", nil, []levels.Problem{{}}, nil, false)
	if v.Valid || v.Levels == nil || len(v.Errors) != 1 || v.Warnings == nil {
		t.Errorf("invalid: %+v", v)
	}
}
