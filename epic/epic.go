// Package epic runs epics: features ordered by their dependencies, each
// rushed (package rush) once those it depends on are complete, from their
// staging. The frozen paths of an epic are read by the engine itself,
// since a done and a claim are judged on them.
package epic

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/engine/rushmarker"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/gitstore/remotes"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
	"github.com/git-zerg/git-zerg/worktree"
)

// An epic's engine is the Engine with no Feature: each feature of the epic
// gets an Engine of its own (forFeature).

// forFeature is the engine of one feature of the epic, on a store of its
// own: feature rushes run side by side, and a rush marks its store.
func forFeature(g *engine.Engine, feature string, ownStore bool) (*engine.Engine, error) {
	sub := &engine.Engine{Ctx: g.Ctx, Store: g.Store, Config: g.Config, Feature: feature, Now: g.Now, Events: g.Events}
	if ownStore {
		s, err := remotes.Reopen(g.Context(), g.Store)
		if err != nil {
			return nil, err
		}
		sub.Store = s
	}
	return sub, nil
}

// readEpic reads a stored epic (kind Usage when there is none).
func readEpic(g *engine.Engine, name string) (*state.Epic, plumbing.Hash, error) {
	e, tip, err := g.Store.Epic(name)
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, tip, &engine.Error{Kind: engine.Usage, What: fmt.Sprintf("epic %q is not planned", name), Hint: "git zerg epic status lists the planned ones"}
	}
	return e, tip, err
}

// PlanResult is what planning an epic stored.
type PlanResult struct {
	Epic     *state.Epic
	Features []*engine.PlanResult
	Commit   string
}

// Plan stores a valid epic under refs/zerg/epics/<name> and plans each
// of its features. Everything that would refuse it is asked first, so a
// refusal writes nothing: a planned epic or feature (unless force), a
// feature that another epic holds.
func Plan(g *engine.Engine, p *levels.EpicPlan, force bool) (*PlanResult, error) {
	s, ep := g.Store, p.Epic
	if _, _, err := s.Epic(ep.Name); err == nil && !force {
		return nil, &engine.Error{Kind: engine.Refused, What: fmt.Sprintf("epic %q is already planned", ep.Name),
			Hint: "git zerg epic plan --force replaces it and its features (their history stays in git zerg log)"}
	} else if err != nil && !errors.Is(err, gitstore.ErrNotFound) {
		return nil, err
	}
	planned, err := s.Features()
	if err != nil {
		return nil, err
	}
	var clash, held []string
	for _, f := range ep.Features {
		for _, name := range planned {
			if name == f.Name && !force {
				clash = append(clash, f.Name)
			}
		}
		other, err := s.EpicOf(f.Name)
		if err != nil {
			return nil, err
		}
		if other != nil && other.Name != ep.Name {
			held = append(held, fmt.Sprintf("%s (epic %s)", f.Name, other.Name))
		}
	}
	if len(held) > 0 {
		return nil, &engine.Error{Kind: engine.Refused, What: "epic plan refused", Why: "features of another epic: " + strings.Join(held, ", ")}
	}
	if len(clash) > 0 {
		return nil, &engine.Error{Kind: engine.Refused, What: "epic plan refused", Why: "already planned: " + strings.Join(clash, ", "),
			Hint: "git zerg epic plan --force replaces them (their history stays in git zerg log)"}
	}
	stored := &state.Epic{Name: ep.Name, Version: ep.Version, Frozen: append([]string{}, ep.Frozen...)}
	for _, f := range ep.Features {
		stored.Features = append(stored.Features, state.EpicFeature{Name: f.Name, Graph: f.Graph,
			Dependencies: f.Dependencies, SoftDependencies: f.SoftDependencies})
	}
	res := &PlanResult{Epic: stored}
	for _, f := range ep.Features {
		sub, _ := forFeature(g, f.Name, false)
		r, err := sub.Plan(p.Plans[f.Name], force)
		if err != nil {
			return nil, err
		}
		res.Features = append(res.Features, r)
	}
	subject := fmt.Sprintf("epic plan %s v%d: %s", ep.Name, ep.Version, words.Plural(len(ep.Features), "feature"))
	tip, err := s.SaveEpic(g.Context(), stored, plumbing.ZeroHash, force, subject, state.OpEpicPlan, g.Time().UTC())
	if err != nil {
		return nil, err
	}
	res.Commit = tip.String()
	return res, nil
}

// featureComplete reports whether every task of the feature is done; a
// feature that is not planned is not.
func featureComplete(g *engine.Engine, feature string) (bool, []*state.Task, error) {
	tx, err := g.Store.View(feature)
	if errors.Is(err, gitstore.ErrNotFound) {
		return false, nil, nil
	}
	if err != nil {
		return false, nil, err
	}
	tasks, err := tx.Tasks()
	if err != nil {
		return false, nil, err
	}
	return words.Counts(tasks)[string(state.Done)] == len(tasks), tasks, nil
}

// FeatureStatus is how far one feature of an epic got.
type FeatureStatus struct {
	state.EpicFeature
	Level int
	// State: done, running (a rush runs it now), started, blocked,
	// ready (its hard dependencies are done) or waiting (for them);
	// "not planned" when its state is gone.
	State  string
	Done   int
	Total  int
	Counts map[string]int
	Review *state.EpicReview // set when a version bump sent it back
	// Staging is the feature's staging tip, "" before it has one.
	Staging string
}

// Status is an epic's progress.
type Status struct {
	Epic     *state.Epic
	Levels   [][]string
	Features []FeatureStatus
	Complete bool
}

// StatusOf reads the progress of each feature of the epic.
func StatusOf(g *engine.Engine, name string) (*Status, error) {
	ep, _, err := readEpic(g, name)
	if err != nil {
		return nil, err
	}
	out := &Status{Epic: ep, Levels: epicLevels(ep), Complete: true}
	level := map[string]int{}
	for i, l := range out.Levels {
		for _, f := range l {
			level[f] = i + 1
		}
	}
	complete := map[string]bool{}
	for _, f := range ep.Features {
		ok, tasks, err := featureComplete(g, f.Name)
		if err != nil {
			return nil, err
		}
		complete[f.Name] = ok
		fs := FeatureStatus{EpicFeature: f, Level: level[f.Name], Total: len(tasks), Counts: words.Counts(tasks),
			Review: ep.NeedsReview(f.Name)}
		fs.Done = fs.Counts[string(state.Done)]
		if tip, _ := g.Store.ReadRef("refs/heads/" + worktree.StagingBranch(f.Name)); !tip.IsZero() {
			fs.Staging = tip.String()
		}
		if tasks == nil {
			fs.State = "not planned"
		}
		out.Features = append(out.Features, fs)
		out.Complete = out.Complete && ok
	}
	for i := range out.Features {
		fs := &out.Features[i]
		if fs.State != "" {
			continue
		}
		started := fs.Done > 0
		for st, n := range fs.Counts {
			if n > 0 && st != string(state.Pending) {
				started = true
			}
		}
		depsDone := true
		for _, d := range fs.Dependencies {
			depsDone = depsDone && complete[d]
		}
		switch {
		case complete[fs.Name]:
			fs.State = "done"
		case featureRushRunning(g.Store, fs.Name):
			fs.State = "running"
		case fs.Counts[string(state.Blocked)] > 0:
			fs.State = "blocked"
		case started:
			fs.State = "started"
		case depsDone:
			fs.State = "ready"
		default:
			fs.State = "waiting"
		}
	}
	return out, nil
}

// featureRushRunning reports whether a live rush of this host runs the
// feature.
func featureRushRunning(s *gitstore.Store, feature string) bool {
	_, alive := rushmarker.Read(s, feature)
	return alive
}

// epicLevels orders the stored epic's features by hard dependencies.
func epicLevels(ep *state.Epic) [][]string {
	e := &levels.Epic{Name: ep.Name, Version: ep.Version}
	for _, f := range ep.Features {
		e.Features = append(e.Features, &levels.EpicFeature{Name: f.Name, Dependencies: f.Dependencies})
	}
	return levels.EpicLevels(e)
}

// BumpResult is a new version of an epic.
type BumpResult struct {
	Epic *state.Epic
	// Review: the complete features now awaiting review.
	Review []string
}

// Bump makes the next version of the epic: its frozen paths replaced
// by frozen when setFrozen, and every complete feature sent back to
// review, since it was built against the previous version. A frozen path
// that a task still to be done owns is refused: that task could never
// finish.
func Bump(g *engine.Engine, name string, frozen []string, setFrozen bool) (*BumpResult, error) {
	var probs []string
	for _, p := range frozen {
		if err := levels.CheckPath(p); err != nil {
			probs = append(probs, err.Error())
		}
	}
	if len(probs) > 0 {
		return nil, &engine.Error{Kind: engine.Usage, What: "epic bump: bad frozen path", Why: strings.Join(probs, "; ")}
	}
	for attempt := 0; ; attempt++ {
		ep, tip, err := readEpic(g, name)
		if err != nil {
			return nil, err
		}
		if setFrozen {
			ep.Frozen = append([]string{}, frozen...)
		}
		res := &BumpResult{Epic: ep}
		ep.Version++
		now := g.Time().UTC()
		var review []state.EpicReview
		for _, f := range ep.Features {
			ok, tasks, err := featureComplete(g, f.Name)
			if err != nil {
				return nil, err
			}
			var open []*levels.Task
			for _, t := range tasks {
				if t.Status != state.Done {
					open = append(open, t.Spec)
				}
			}
			for _, p := range levels.FrozenOwned(ep.Frozen, open) {
				probs = append(probs, f.Name+": "+p.Msg)
			}
			switch {
			case ok && len(tasks) > 0:
				review = append(review, state.EpicReview{Feature: f.Name, Version: ep.Version, Since: now})
				res.Review = append(res.Review, f.Name)
			case ep.NeedsReview(f.Name) != nil:
				review = append(review, *ep.NeedsReview(f.Name))
			}
		}
		if len(probs) > 0 {
			return nil, &engine.Error{Kind: engine.Usage, What: "epic bump refused", Why: strings.Join(probs, "; ")}
		}
		ep.Review = review
		subject := fmt.Sprintf("epic bump %s v%d", name, ep.Version)
		if len(res.Review) > 0 {
			subject += ": review " + strings.Join(res.Review, ", ")
		}
		_, err = g.Store.SaveEpic(g.Context(), ep, tip, false, subject, state.OpEpicBump, now)
		if errors.Is(err, gitstore.ErrEpicMoved) && attempt < 5 {
			continue
		}
		return res, err
	}
}

// Approve takes features off the epic's review list: a person looked at
// them against the current version.
func Approve(g *engine.Engine, name string, features []string) (*state.Epic, error) {
	for attempt := 0; ; attempt++ {
		ep, tip, err := readEpic(g, name)
		if err != nil {
			return nil, err
		}
		var unknown, notWaiting []string
		for _, f := range features {
			switch {
			case ep.Feature(f) == nil:
				unknown = append(unknown, f)
			case ep.NeedsReview(f) == nil:
				notWaiting = append(notWaiting, f)
			}
		}
		if len(unknown) > 0 {
			return nil, &engine.Error{Kind: engine.Usage, What: fmt.Sprintf("epic %s has no feature %s", name, strings.Join(unknown, ", "))}
		}
		if len(notWaiting) > 0 {
			return nil, &engine.Error{Kind: engine.Refused, What: "epic approve refused", Why: strings.Join(notWaiting, ", ") + " needs no review"}
		}
		keep := ep.Review[:0:0]
		for _, r := range ep.Review {
			approved := false
			for _, f := range features {
				approved = approved || r.Feature == f
			}
			if !approved {
				keep = append(keep, r)
			}
		}
		ep.Review = keep
		subject := fmt.Sprintf("epic approve %s v%d: %s (by %s)", name, ep.Version, strings.Join(features, ", "), g.UserIdentity())
		_, err = g.Store.SaveEpic(g.Context(), ep, tip, false, subject, state.OpEpicApprove, g.Time().UTC())
		if errors.Is(err, gitstore.ErrEpicMoved) && attempt < 5 {
			continue
		}
		return ep, err
	}
}

// ViewOrder is the features of epic name in its order, for the live views
// to list alone, and the one to open on: the first not done (the last
// when all are).
func ViewOrder(g *engine.Engine, name string) (features []string, first string, err error) {
	st, err := StatusOf(g, name)
	if err != nil {
		return nil, "", err
	}
	features = []string{}
	for _, f := range st.Features {
		features = append(features, f.Name)
		if first == "" && f.State != "done" && f.State != "not planned" {
			first = f.Name
		}
	}
	if first == "" && len(features) > 0 {
		first = features[len(features)-1]
	}
	return features, first, nil
}
