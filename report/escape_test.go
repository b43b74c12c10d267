package report

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
)

// TestDocumentsEscapeForgedStatus: a status that is no status of
// git-zerg's (state edited by hand) cannot end a mermaid label and add
// nodes, links or markup to the chart, nor put escapes on a terminal.
func TestDocumentsEscapeForgedStatus(t *testing.T) {
	s := newStore(t)
	ids := plan(t, s, 2)
	const forged = "x\"] --> evil[\"<img src=x onerror=alert(1)>\x1b]0;owned\x07"
	err := s.Update(context.Background(), "f", func() time.Time { return t0 }, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		tk, err := tx.Task(ids[0])
		if err != nil {
			return nil, err
		}
		c := tk.Clone()
		c.Status = state.Status(forged)
		return &gitstore.Message{Subject: "forged", Op: "fail", Task: ids[0]}, tx.Put(c)
	})
	if err != nil {
		t.Fatal(err)
	}
	sn := read(t, s)
	var b bytes.Buffer
	if err := WriteDag(&b, sn, "mermaid"); err != nil {
		t.Fatal(err)
	}
	mmd := b.String()
	if strings.Contains(mmd, "<img") || strings.Contains(mmd, "\x1b") {
		t.Errorf("the forged status reached the chart as markup:\n%s", mmd)
	}
	// Two levels and two tasks: four labels, each opened and closed once.
	if strings.Count(mmd, `["`) != 4 || strings.Count(mmd, `"]`) != 4 || strings.Count(mmd, "-->") != 0 {
		t.Errorf("the forged status changed the chart's syntax:\n%s", mmd)
	}
	for _, format := range []string{"text", "dot"} {
		b.Reset()
		if err := WriteDag(&b, sn, format); err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(b.String(), "\x1b\x07") {
			t.Errorf("dag --format %s printed escapes: %q", format, b.String())
		}
	}
	b.Reset()
	if err := WriteStatusText(&b, sn, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b\x07") {
		t.Errorf("status printed escapes: %q", b.String())
	}
}
