package main

import (
	"io"

	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/report"
	"github.com/git-zerg/git-zerg/state"
)

// The JSON documents are package report's; these names keep the commands
// that print them as they were written.

type (
	taskJSON = report.Task
	lockJSON = report.Lock

	problemJSON  = report.Problem
	progressJSON = report.Progress
)

func taskOut(t *state.Task, history bool) taskJSON  { return report.TaskOf(t, history) }
func locksOut(ls []state.Lock) []lockJSON           { return report.LocksOf(ls) }
func problemsOut(ps []levels.Problem) []problemJSON { return report.ProblemsOf(ps) }
func nonNil(s []string) []string                    { return report.NonNil(s) }
func writeJSON(w io.Writer, v any) error            { return report.WriteJSON(w, v) }

// workerJSON is a type of its own: commands build it field by field.
type workerJSON report.Worker
