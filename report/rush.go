package report

import (
	"fmt"
	"io"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/rush"
	"github.com/git-zerg/git-zerg/words"
)

// TaskMode is what `rush --mode task` prints: the batch to launch now.
type TaskMode struct {
	Feature  string         `json:"feature"`
	Complete bool           `json:"complete"`
	Level    int            `json:"level"`
	Workers  int            `json:"workers"`
	Counts   map[string]int `json:"counts"`
	Batch    []BatchTask    `json:"batch"`
	// Waiting explains an empty batch: claimed tasks still running,
	// backoffs, or blocked dependencies.
	Waiting string `json:"waiting,omitempty"`
}

// BatchTask is a task of the batch, with the worker to claim it as and
// the prompt to give it.
type BatchTask struct {
	Task
	SuggestedWorker string `json:"suggested_worker"`
	Prompt          string `json:"prompt"`
}

// TaskModeOf is the document of a batch.
func TaskModeOf(b *engine.TaskBatch) TaskMode {
	out := TaskMode{Feature: b.Feature, Complete: b.Complete, Level: b.Level, Workers: b.Workers, Counts: b.Counts,
		Batch: []BatchTask{}, Waiting: b.Waiting}
	for _, t := range b.Batch {
		out.Batch = append(out.Batch, BatchTask{TaskOf(t.Task, false), t.SuggestedWorker, t.Prompt})
	}
	return out
}

// RushText says how the rush ended on stdout, and on stderr what to do
// next and where its wall time went.
func RushText(stdout, stderr io.Writer, res *rush.Result) {
	if res.Complete {
		fmt.Fprintf(stdout, "rush %s complete: %s done, staging %s at %s\n", res.Feature, words.Plural(res.Tasks, "task"),
			res.Staging, words.ShortHash(res.Tip))
		fmt.Fprintf(stderr, "to finish: git zerg finish (merges %s into your branch and cleans up)\n", res.Staging)
	} else {
		fmt.Fprintf(stdout, "rush %s ended: %s\n", res.Feature, words.CountsLine(res.Counts))
	}
	fmt.Fprintln(stderr, flowLine(res.Flow.Wall, res.Flow.Critical, res.Flow.Path, res.Flow.Busy, res.Flow.Workers))
}
