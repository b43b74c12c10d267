package notify

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/state"
)

// Which engine events are worth a notification, and under which name.
func TestNotification(t *testing.T) {
	for _, c := range []struct {
		ev   engine.Event
		want string // "" for none
	}{
		{engine.Event{Type: engine.EvTransition, Status: state.Blocked, Reason: "attempts exhausted"}, "task-blocked"},
		{engine.Event{Type: engine.EvTransition, Status: state.Blocked, Reason: "escalation: needs a person"}, "escalation"},
		{engine.Event{Type: engine.EvTransition, Status: state.Done}, ""},
		{engine.Event{Type: engine.EvLevelMerged, Level: 2}, "level-merged"},
		{engine.Event{Type: engine.EvBudget}, "budget-reached"},
		{engine.Event{Type: engine.EvRushEnd, Text: "complete"}, "rush-ended"},
		{engine.Event{Type: engine.EvNote, Text: "progress"}, ""},
	} {
		n, ok := notification(c.ev)
		if got := map[bool]string{true: n.Event}[ok]; got != c.want {
			t.Errorf("%s %s %q: notification %q, want %q", c.ev.Type, c.ev.Status, c.ev.Reason, got, c.want)
		}
	}
}

// The command runs once per notification, in the order the events came,
// with the JSON on stdin and the event in its environment; the events all
// go on to the next sink; Wait returns once the last run ended; a command
// that fails is reported, not fatal.
func TestNotifierRunsInOrder(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	out := filepath.Join(t.TempDir(), "notes")
	n := New(`read -r line; printf '%s %s\n' "$ZERG_EVENT" "$line" >> ` + out + `; test "$ZERG_EVENT" != budget-reached`)
	if n == nil {
		t.Fatal("no notifier for a command")
	}
	var mu sync.Mutex
	var failed []string
	n.Failed = func(note Notification, why string) {
		mu.Lock()
		defer mu.Unlock()
		failed = append(failed, note.Event+": "+why)
	}
	var passed []engine.EventType
	sink := n.Sink(func(ev engine.Event) { passed = append(passed, ev.Type) })
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	events := []engine.Event{
		{Type: engine.EvNote, Text: "not for people"},
		{Type: engine.EvTransition, Status: state.Blocked, Feature: "f", Task: "T1", Reason: "attempts exhausted", At: at},
		{Type: engine.EvLevelMerged, Feature: "f", Level: 1, At: at},
		{Type: engine.EvBudget, Feature: "f", At: at},
		{Type: engine.EvRushEnd, Feature: "f", Text: "rush f ended", At: at},
	}
	for _, ev := range events {
		sink(ev)
	}
	n.Wait()
	if len(passed) != len(events) {
		t.Errorf("%d events went on to the next sink, want %d", len(passed), len(events))
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, doc, _ := strings.Cut(sc.Text(), " ")
		var note Notification
		if err := json.Unmarshal([]byte(doc), &note); err != nil || note.Event != name || note.Feature != "f" || !note.At.Equal(at) {
			t.Errorf("line %q: %+v, %v", sc.Text(), note, err)
		}
		got = append(got, name)
	}
	if want := "task-blocked level-merged budget-reached rush-ended"; strings.Join(got, " ") != want {
		t.Errorf("runs %q, want %q", strings.Join(got, " "), want)
	}
	if len(failed) != 1 || !strings.HasPrefix(failed[0], "budget-reached: exit 1") {
		t.Errorf("failures reported: %q, want the budget's exit 1", failed)
	}
	if New("  ") != nil {
		t.Error("a notifier for an empty command")
	}
	var none *Notifier
	none.Wait() // no command: nothing to wait for
}
