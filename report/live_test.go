package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

func TestLiveLine(t *testing.T) {
	var buf bytes.Buffer
	p := NewLive(&buf, true)
	mk := func(id string, st state.Status) *state.Task {
		return &state.Task{Spec: &levels.Task{ID: id}, Level: 1, Status: st,
			History: []state.Event{{At: time.Now().Add(-3 * time.Second)}}}
	}
	tasks := []*state.Task{mk("A", state.Done), mk("B", state.Claimed), mk("C", state.Pending), mk("D", state.Verified)}
	p.update(1, tasks)
	p.transition("B", "verified")
	out := buf.String()
	for _, want := range []string{"level 1 ██████████░░░░░░░░░░ 2/4", "running: B 3s", "\r\033[K", "B verified\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("live output lacks %q:\n%q", want, out)
		}
	}
	// The transition line is printed above the live line, which is redrawn.
	if !strings.HasSuffix(out, p.live) {
		t.Errorf("live line not redrawn after the transition: %q", out)
	}
	// Not on a terminal: no live line at all.
	buf.Reset()
	q := NewLive(&buf, false)
	q.update(1, tasks)
	q.transition("B", "verified")
	if strings.Contains(buf.String(), "\r") || strings.Contains(buf.String(), "█") {
		t.Errorf("live line written to a non-terminal: %q", buf.String())
	}
}
