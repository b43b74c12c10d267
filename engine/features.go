package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/gitstore/remotes"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
	"github.com/git-zerg/git-zerg/worktree"
)

// ResolveFeature picks the feature a command works on: named (-f), else
// the feature of the worker branch the work tree is on, else the one chosen
// with `use` or planned last, else the only one. open gives the store, and
// is not called for a named feature: a bad name is reported as such
// anywhere, in a repository or not.
func ResolveFeature(named string, open func() (*gitstore.Store, error)) (string, error) {
	if named != "" {
		if err := levels.ValidFeatureName(named); err != nil {
			return "", UsageError("bad feature name %q (%v)", named, err)
		}
		return named, nil
	}
	s, err := open()
	if err != nil {
		return "", err
	}
	if f, _, ok := worktree.WorkerOf(CurrentBranch(s)); ok {
		return f, nil
	}
	if f := s.CurrentFeature(); f != "" {
		return f, nil
	}
	fs, err := s.Features()
	if err != nil {
		return "", err
	}
	switch len(fs) {
	case 1:
		return fs[0], nil
	case 0:
		return "", &Error{Kind: Usage, What: "no feature planned", Hint: "git zerg plan --graph task-graph.json"}
	}
	return "", &Error{Kind: Usage, What: "no feature chosen", Why: strings.Join(fs, ", "), Hint: "git zerg use FEATURE, or -f FEATURE"}
}

// UseFeature makes the planned feature name the current one, what commands
// work on when no feature is named.
func UseFeature(name string, open func() (*gitstore.Store, error)) error {
	if err := levels.ValidFeatureName(name); err != nil {
		return &Error{Kind: Usage, What: fmt.Sprintf("bad feature name %q", name), Why: nameProblem(err)}
	}
	s, err := open()
	if err != nil {
		return err
	}
	if _, err := s.View(name); errors.Is(err, gitstore.ErrNotFound) {
		return NotPlanned(name)
	} else if err != nil {
		return err
	}
	return s.SetCurrentFeature(name)
}

// FeatureSummary is how far one planned feature got.
type FeatureSummary struct {
	Name     string
	Current  bool // the feature commands work on when none is named
	Tasks    int
	Done     int
	Complete bool
	Counts   map[string]int // tasks by status
}

// Features summarizes every planned feature, by name.
func Features(s *gitstore.Store) ([]FeatureSummary, error) {
	names, err := s.Features()
	if err != nil {
		return nil, err
	}
	cur := s.CurrentFeature()
	var out []FeatureSummary
	for _, n := range names {
		tx, err := s.View(n)
		if err != nil {
			return nil, err
		}
		tasks, err := tx.Tasks()
		if err != nil {
			return nil, err
		}
		counts := words.Counts(tasks)
		done := counts[string(state.Done)]
		out = append(out, FeatureSummary{Name: n, Current: n == cur, Tasks: len(tasks), Done: done, Complete: done == len(tasks), Counts: counts})
	}
	return out, nil
}

// CheckWorker validates a worker name: it names a tree entry and a branch,
// so it is as strict as a task id.
func CheckWorker(w string) error {
	if w == "" {
		return UsageError("--worker is required")
	}
	if !levels.ValidID(w) {
		return UsageError("bad worker name %q (letters, digits, '.', '_' and '-', at most 64)", w)
	}
	return nil
}

// actsOn narrows the tasks a command can act on now: those its op may
// start from. A claim also takes a failed task (its backoff event comes
// first); approve is about the task's risk, not its status. Nil for a
// command that acts on any task.
func actsOn(command string) func(*state.Task) bool {
	switch command {
	case "done":
		return func(t *state.Task) bool { return state.OpDone.From(t.Status) }
	case "fail":
		return func(t *state.Task) bool { return state.OpFail.From(t.Status) }
	case "release":
		return func(t *state.Task) bool { return state.OpRelease.From(t.Status) }
	case "retry":
		return func(t *state.Task) bool { return state.OpRetry.From(t.Status) }
	case "approve":
		return func(t *state.Task) bool { return t.NeedsApproval() && t.Approved == "" }
	case "claim":
		return func(t *state.Task) bool { return t.Status.Claimable() }
	}
	return nil
}

// TasksFor are the tasks the command (done, retry, claim...) can act on
// now, every task for another command, sorted by id: what completion
// offers.
func TasksFor(command string, tasks []*state.Task) []*state.Task {
	keep := actsOn(command)
	var out []*state.Task
	for _, t := range tasks {
		if keep == nil || keep(t) {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID() < out[j].ID() })
	return out
}

// LoadConfig reads .zerg/config.toml of the store's work tree (the
// defaults in a bare repository) and routes the store's state updates
// through the configured arbiter.
func LoadConfig(s *gitstore.Store) (*config.Config, error) {
	if s.Top == "" {
		return config.Default(), nil
	}
	c, err := config.Load(filepath.Join(s.Top, ".zerg", "config.toml"))
	if err != nil {
		return nil, &Error{Kind: Usage, What: "bad configuration", Why: err.Error()}
	}
	if c.Sync.Arbiter != "" {
		remotes.SetArbiter(s, c.Sync.Arbiter, CheckCaughtUp)
	}
	return c, nil
}

// ViewFeature opens a read-only snapshot of the planned feature.
func ViewFeature(s *gitstore.Store, feature string) (*gitstore.Tx, error) {
	tx, err := s.View(feature)
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, NotPlanned(feature)
	}
	return tx, err
}

// ShownFeature is ResolveFeature for a view: with no feature named and
// none to choose among several, the first planned one.
func ShownFeature(named string, open func() (*gitstore.Store, error)) (string, error) {
	f, err := ResolveFeature(named, open)
	if err == nil || named != "" {
		return f, err
	}
	s, serr := open()
	if serr != nil {
		return "", err
	}
	if fs, ferr := s.Features(); ferr == nil && len(fs) > 0 {
		return fs[0], nil
	}
	return "", err
}

// CheckFeatureName is the usage error for a name levels.ValidFeatureName
// refuses; its message already names the name, so it is said once.
func CheckFeatureName(name string) error {
	err := levels.ValidFeatureName(name)
	if err == nil {
		return nil
	}
	return &Error{Kind: Usage, What: fmt.Sprintf("bad feature name %q", name), Why: nameProblem(err)}
}

// nameProblem is why levels refused a feature name, without the name, for
// a message that names it already. An empty name has nothing to name, so
// its whole sentence is kept.
func nameProblem(err error) string {
	var ne *levels.NameError
	if errors.As(err, &ne) && ne.Name != "" {
		return ne.Problem
	}
	return err.Error()
}
