package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/git-zerg/git-zerg/prompt"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
	"github.com/git-zerg/git-zerg/worktree"
)

// StageHead readies task mode's gates. Task mode commits to the current
// branch, while the gates run on the staging branch (in a worktree of their
// own, cached by tree): staging is moved up to HEAD, created there when
// missing, fast-forwarded when behind, never moved back or sideways.
func (g *Engine) StageHead() error {
	if g.Store.Top == "" {
		return UsageError("claude-gates needs a work tree (this is a bare repository)")
	}
	head, err := HeadCommit(g.Store)
	if err != nil {
		return err
	}
	err = g.Manager().AdvanceStaging(g.Context(), head)
	if errors.Is(err, worktree.ErrStagingAhead) {
		branch := worktree.StagingBranch(g.Feature)
		return &Error{Kind: Refused, What: "gates refused",
			Why:  fmt.Sprintf("%s has commits that HEAD lacks: the gates would not run on the work of this branch", branch),
			Hint: "merge " + branch + " into this branch, or run git zerg gates run to gate staging as it is"}
	}
	return err
}

// PromptTemplate is the repository's worker prompt (.zerg/prompt.tmpl,
// else the default), an error of kind Usage when it does not parse.
func (g *Engine) PromptTemplate() (*prompt.Template, error) {
	tmpl, err := prompt.Load(filepath.Join(g.Store.Top, ".zerg", "prompt.tmpl"))
	if err != nil {
		return nil, UsageError("bad prompt template (%v)", err)
	}
	return tmpl, nil
}

// TaskBatch is what `rush --mode task` hands the driving agent: the ready
// tasks of the lowest unfinished level, each with a suggested worker name
// and its rendered prompt.
type TaskBatch struct {
	Feature  string
	Complete bool
	Level    int
	Workers  int
	Counts   map[string]int
	Batch    []BatchTask
	// Waiting explains an empty batch: claimed tasks still running,
	// backoffs, or blocked dependencies.
	Waiting string
}

// BatchTask is one task of a TaskBatch.
type BatchTask struct {
	Task            *state.Task
	SuggestedWorker string
	Prompt          string
}

// Batch computes the ready batch for task mode. It claims nothing: the
// driving agent claims each task with the suggested worker name, runs it,
// then calls done or fail.
func (g *Engine) Batch(n int) (*TaskBatch, error) {
	feature, cfg := g.Feature, g.Config
	if n == 0 {
		n = cfg.Workers.Count
	}
	tasks, err := g.Tasks()
	if err != nil {
		return nil, err
	}
	if err := EpicHold(g.Store, feature); err != nil {
		return nil, err
	}
	if err := g.TrustedAll("rush --mode task refused", tasks); err != nil {
		return nil, err
	}
	tmpl, err := g.PromptTemplate()
	if err != nil {
		return nil, err
	}
	policy := g.Policy()
	now := g.Time()
	counts := words.Counts(tasks)
	out := &TaskBatch{Feature: feature, Workers: n, Counts: counts, Batch: []BatchTask{}}
	out.Complete = counts[string(state.Done)] == len(tasks)
	level := 0
	for _, t := range tasks {
		if !t.Status.Settled() && (level == 0 || t.Level < level) {
			level = t.Level
		}
	}
	out.Level = level
	busy := map[string]bool{}
	for _, t := range tasks {
		if t.Status == state.Claimed {
			busy[t.Worker] = true
		}
	}
	for _, t := range policy.ReadyOrder(tasks, now) {
		if t.Level != level || len(out.Batch) >= n {
			continue
		}
		worker := ""
		for i := 1; worker == ""; i++ {
			if w := fmt.Sprintf("w%d", i); !busy[w] {
				worker = w
				busy[w] = true
			}
		}
		text, err := tmpl.Render(prompt.Data{Feature: feature, Worker: worker, Level: t.Level, Attempt: t.Attempts + 1,
			Mode: "shared", Task: t.Spec})
		if err != nil {
			return nil, fmt.Errorf("render prompt of %s: %w", t.ID(), err)
		}
		out.Batch = append(out.Batch, BatchTask{t, worker, text})
	}
	if len(out.Batch) == 0 && !out.Complete {
		out.Waiting = waitingForTasks(tasks, policy, now)
		if c := counts[string(state.Claimed)]; c > 0 {
			out.Waiting = strconv.Itoa(c) + " claimed task(s) still running; " + out.Waiting
		}
	}
	return out, nil
}
