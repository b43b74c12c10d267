package main

import (
	"io"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/report"
	"github.com/git-zerg/git-zerg/state"
)

// rush.go and sync.go still call these names; they go when those files
// call report and engine themselves.

type taskJSON = report.Task

func taskOut(t *state.Task, history bool) taskJSON { return report.TaskOf(t, history) }
func writeJSON(w io.Writer, v any) error           { return report.WriteJSON(w, v) }
func countsLine(m map[string]int) string           { return engine.CountsLine(m) }
func plural(n int, noun string) string             { return report.Plural(n, noun) }

// progress is report.Live under the names rush.go calls.
type progress struct{ *report.Live }

func newProgress(e *env, _ string) *progress        { return &progress{report.NewLive(e.stderr, e.errTTY)} }
func (p *progress) event(ev engine.Event)           { p.Event(ev) }
func (p *progress) note(format string, args ...any) { p.Note(format, args...) }
