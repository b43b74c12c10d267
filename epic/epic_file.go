package epic

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

// ReadFile reads the epic file and each graph it names, a relative
// path being relative to the epic file, and checks them all: errs and
// warns are the problems found, keys of the graphs that look misspelt
// among the errors unless keepMisspelt (epic plan --force), as plan has
// them. err is an unreadable epic file.
func ReadFile(file string, keepMisspelt bool) (plan *levels.EpicPlan, errs, warns []levels.Problem, err error) {
	data, err := os.ReadFile(file)
	if err != nil {
		why := err.Error()
		if errors.Is(err, fs.ErrNotExist) {
			why = "no such file"
		}
		return nil, nil, nil, &engine.Error{Kind: engine.Usage, What: "cannot read epic " + file, Why: why}
	}
	dir := filepath.Dir(file)
	plan, errs, warns = levels.CheckEpic(data, func(p string) ([]byte, error) {
		if filepath.IsAbs(p) {
			return os.ReadFile(p)
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errors.New("no such file")
		}
		return b, err
	})
	if !keepMisspelt {
		n := len(errs)
		if errs, warns = levels.MisspeltErrors(errs, warns); len(errs) > n {
			plan = nil
		}
	}
	return plan, errs, warns, nil
}

// Statuses reads the status of the named epics, of every planned one
// when none is named.
func Statuses(g *engine.Engine, names ...string) ([]*Status, error) {
	if len(names) == 0 {
		var err error
		if names, err = g.Store.Epics(); err != nil {
			return nil, err
		}
		if len(names) == 0 {
			return nil, &engine.Error{Kind: engine.Usage, What: "no epic planned", Hint: "git zerg epic plan FILE"}
		}
	}
	var out []*Status
	for _, n := range names {
		st, err := StatusOf(g, n)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// FeaturesDone counts the epic's features whose tasks are all done.
func (st *Status) FeaturesDone() int {
	n := 0
	for _, f := range st.Features {
		if f.State == "done" {
			n++
		}
	}
	return n
}

// Feature is the status of the epic's feature name; one that is not in
// the epic has nothing but its name.
func (st *Status) Feature(name string) FeatureStatus {
	for _, f := range st.Features {
		if f.Name == name {
			return f
		}
	}
	return FeatureStatus{EpicFeature: state.EpicFeature{Name: name}}
}

// Log is the epic's history, newest first: plans, bumps, approvals.
func Log(g *engine.Engine, name string) ([]gitstore.Entry, error) {
	log, err := g.Store.EpicLog(name)
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, engine.UsageError("epic %q is not planned", name)
	}
	return log, err
}

// Review is the review a version bump of the feature's epic asks of
// it since it was done, nil when none.
func Review(s *gitstore.Store, feature string) (*state.Epic, *state.EpicReview) {
	ep, err := s.EpicOf(feature)
	if err != nil || ep == nil {
		return nil, nil
	}
	return ep, ep.NeedsReview(feature)
}
