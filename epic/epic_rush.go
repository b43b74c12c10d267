package epic

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/rush"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
	"github.com/git-zerg/git-zerg/worktree"
)

// RushOptions are an epic rush's settings.
type RushOptions struct {
	// Workers is the pool the running features share (0: workers.count).
	Workers int
	Mode    string // subprocess or container
	Resume  bool
	// Interrupt reaches every running feature's rush; once one came, no
	// further feature starts.
	Interrupt <-chan struct{}
}

// FeatureOutcome is how one feature's part of an epic rush ended.
type FeatureOutcome struct {
	Feature string
	Result  *rush.Result // nil when its rush did not run or did not get to its end
	Err     error
	// Skipped says why the feature did not start: a hard dependency that
	// did not complete.
	Skipped string
	// Already: complete before this rush.
	Already bool
}

// RushResult is how an epic rush ended.
type RushResult struct {
	Epic     string
	Complete bool
	Features []FeatureOutcome
}

// Rush runs the features of an epic in dependency order: a feature
// starts once its hard dependencies are complete, from their staging
// (merged, when there are several), and the features that can run at the
// same time do, sharing the worker pool. A soft dependency does not hold a
// feature back; it starts from HEAD when it has no hard one. Each feature
// runs as its own rush (a marker of its own, resumable alone); the epic
// keeps no state of its own beyond its marker, so after a crash the next
// epic rush recomputes what is complete from the features' states and goes
// on with the rest.
func Rush(g *engine.Engine, name string, o RushOptions) (*RushResult, error) {
	ep, err := readyToRush(g, name, &o)
	if err != nil {
		return nil, err
	}
	marker, err := engine.AcquireEpicRush(g.Store, name)
	if err != nil {
		return nil, err
	}
	defer marker.Release()
	if marker.Previous() != nil && !o.Resume {
		g.Note("an earlier rush of epic %s (pid %d) died; continuing from the features' state", name, marker.Previous().PID)
	}
	total := max(1, cmp.Or(o.Workers, g.Config.Workers.Count))
	r := &epicRush{g: g, name: name, ep: ep, o: o, total: total,
		results: make(chan outcome), running: map[string]chan struct{}{}, share: map[string]int{},
		outcomes: map[string]*FeatureOutcome{}, ended: map[string]bool{}}
	defer rush.OnInterrupt(o.Interrupt, r.interrupt)()
	for {
		complete, err := r.look()
		if err != nil {
			return nil, err
		}
		if err := r.start(r.ready(complete)); err != nil {
			return nil, err
		}
		if !r.await() {
			break
		}
	}
	return r.result()
}

// readyToRush reads the epic and refuses a rush of it that could not
// run: a mode epics do not take, a feature not planned.
func readyToRush(g *engine.Engine, name string, o *RushOptions) (*state.Epic, error) {
	switch o.Mode {
	case "", rush.ModeSubprocess:
		o.Mode = rush.ModeSubprocess
	case rush.ModeContainer:
	default:
		return nil, engine.UsageError("rush --epic: mode %q is not for epics (subprocess or container)", o.Mode)
	}
	ep, _, err := readEpic(g, name)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, f := range ep.Features {
		if _, err := g.Store.View(f.Name); err != nil {
			missing = append(missing, f.Name)
		}
	}
	if len(missing) > 0 {
		return nil, &engine.Error{Kind: engine.Usage, What: fmt.Sprintf("epic %s: %s not planned", name, strings.Join(missing, ", ")),
			Hint: "git zerg epic plan --force FILE plans them again"}
	}
	return ep, nil
}

// outcome is how one feature's rush, run by an epic rush, returned.
type outcome struct {
	name string
	res  *rush.Result
	err  error
}

// epicRush is one rush of an epic: the features' rushes it runs and how
// each ended.
type epicRush struct {
	g     *engine.Engine
	name  string
	ep    *state.Epic
	o     RushOptions
	total int // workers shared by the running features

	results chan outcome
	// mu guards what the interrupt handler reads: the running features,
	// their interrupts and shares of the workers, and whether to stop.
	mu      sync.Mutex
	running map[string]chan struct{}
	share   map[string]int
	stopped bool

	outcomes map[string]*FeatureOutcome
	ended    map[string]bool // its rush ran in this epic rush, or it cannot
	firstErr error
}

// interrupt passes an interrupt on to every running feature's rush and
// starts no more.
func (r *epicRush) interrupt() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	for _, ch := range r.running {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// look reads which features are complete; one complete before its rush
// ran here ends as already complete.
func (r *epicRush) look() (map[string]bool, error) {
	complete := map[string]bool{}
	for _, f := range r.ep.Features {
		ok, _, err := featureComplete(r.g, f.Name)
		if err != nil {
			return nil, err
		}
		complete[f.Name] = ok
		if ok && r.outcomes[f.Name] == nil {
			r.outcomes[f.Name] = &FeatureOutcome{Feature: f.Name, Already: true}
			r.ended[f.Name] = true
		}
	}
	return complete, nil
}

// ready is the features that can start now, in epic order; a feature
// whose hard dependency ended incomplete ends skipped, since it cannot
// complete in this rush either.
func (r *epicRush) ready(complete map[string]bool) []state.EpicFeature {
	var ready []state.EpicFeature
	for _, f := range r.ep.Features {
		if r.ended[f.Name] || r.running[f.Name] != nil {
			continue
		}
		wait := false
		for _, d := range f.Dependencies {
			if complete[d] {
				continue
			}
			wait = true
			if r.ended[d] {
				r.outcomes[f.Name] = &FeatureOutcome{Feature: f.Name, Skipped: d + " did not complete"}
				r.ended[f.Name] = true
				r.g.Note("epic %s: %s skipped: its dependency %s did not complete", r.name, f.Name, d)
				break
			}
		}
		if !wait {
			ready = append(ready, f)
		}
	}
	return ready
}

// start gives the free workers to the ready features, evenly, the first
// in epic order getting what is left over, and starts their rushes.
func (r *epicRush) start(ready []state.EpicFeature) error {
	r.mu.Lock()
	halt, busy := r.stopped, 0
	for _, n := range r.share {
		busy += n
	}
	r.mu.Unlock()
	free := r.total - busy
	if halt || free <= 0 || len(ready) == 0 {
		return nil
	}
	k := min(len(ready), free)
	for i, f := range ready[:k] {
		n := free / k
		if i < free%k {
			n++
		}
		from, err := startFrom(r.g, f)
		if err != nil {
			r.firstErr = err
			r.outcomes[f.Name] = &FeatureOutcome{Feature: f.Name, Err: err}
			r.ended[f.Name] = true
			r.g.Note("epic %s: %s cannot start: %v", r.name, f.Name, err)
			continue
		}
		sub, err := forFeature(r.g, f.Name, true)
		if err != nil {
			return err
		}
		ch := make(chan struct{}, 2)
		r.mu.Lock()
		r.running[f.Name], r.share[f.Name] = ch, n
		r.mu.Unlock()
		r.g.Note("epic %s: %s starts with %s from %s", r.name, f.Name, words.Plural(n, "worker"), from)
		go func(f string, sub *engine.Engine, n int) {
			res, err := rush.Run(sub, rush.Options{Workers: n, Mode: r.o.Mode, Resume: r.o.Resume, Interrupt: ch})
			r.results <- outcome{f, res, err}
		}(f.Name, sub, n)
	}
	return nil
}

// await waits for the next running feature's rush to end and records how;
// false when none is running. An interrupt is the error the epic rush
// ends with, whatever failed before it.
func (r *epicRush) await() bool {
	r.mu.Lock()
	left := len(r.running)
	r.mu.Unlock()
	if left == 0 {
		return false
	}
	o := <-r.results
	r.mu.Lock()
	delete(r.running, o.name)
	delete(r.share, o.name)
	r.mu.Unlock()
	r.ended[o.name] = true
	r.outcomes[o.name] = &FeatureOutcome{Feature: o.name, Result: o.res, Err: o.err}
	switch {
	case o.err != nil:
		var ee *engine.Error
		if r.firstErr == nil || errors.As(o.err, &ee) && ee.Kind == engine.Interrupted {
			r.firstErr = o.err
		}
		r.g.Note("epic %s: %s ended: %v", r.name, o.name, o.err)
	case o.res != nil && o.res.Complete:
		r.g.Note("epic %s: %s complete, staging %s at %s", r.name, o.name, o.res.Staging, words.ShortHash(o.res.Tip))
	}
	return true
}

// result is how the epic rush ended: complete, or the error that says
// which features did not and why.
func (r *epicRush) result() (*RushResult, error) {
	out := &RushResult{Epic: r.name, Complete: true}
	for _, f := range r.ep.Features {
		oc := r.outcomes[f.Name]
		if oc == nil {
			oc = &FeatureOutcome{Feature: f.Name, Skipped: "not started"}
		}
		out.Features = append(out.Features, *oc)
		ok, _, err := featureComplete(r.g, f.Name)
		if err != nil {
			return out, err
		}
		out.Complete = out.Complete && ok
	}
	if out.Complete {
		return out, nil
	}
	var ee *engine.Error
	if errors.As(r.firstErr, &ee) && (ee.Kind == engine.Interrupted || ee.Kind == engine.NeedsPerson || ee.Kind == engine.Usage) {
		return out, r.firstErr
	}
	var stuck []string
	for _, oc := range out.Features {
		switch {
		case oc.Err != nil:
			stuck = append(stuck, fmt.Sprintf("%s: %v", oc.Feature, oc.Err))
		case oc.Skipped != "":
			stuck = append(stuck, fmt.Sprintf("%s: %s", oc.Feature, oc.Skipped))
		}
	}
	return out, engine.FailedError(fmt.Sprintf("rush of epic %s ended with unfinished features", r.name), strings.Join(stuck, "; "))
}

// startFrom makes sure the feature's staging holds what its hard
// dependencies built before its first task runs, and says where it
// started. Without hard dependencies the rush starts it from HEAD, as any
// rush; with one, staging starts at that dependency's staging tip; with
// several, at a merge of their tips made in the object store.
func startFrom(g *engine.Engine, f state.EpicFeature) (string, error) {
	if len(f.Dependencies) == 0 {
		return "HEAD", nil
	}
	s := g.Store
	var tips, labels []string
	for _, d := range f.Dependencies {
		tip, err := s.ReadRef("refs/heads/" + worktree.StagingBranch(d))
		if err != nil {
			return "", err
		}
		if tip.IsZero() {
			return "", &engine.Error{Kind: engine.Failed, What: fmt.Sprintf("%s has no staging branch", d)}
		}
		tips, labels = append(tips, tip.String()), append(labels, d)
	}
	sub, _ := forFeature(g, f.Name, false)
	mgr := sub.Manager()
	cur, err := s.ReadRef("refs/heads/" + worktree.StagingBranch(f.Name))
	if err != nil {
		return "", err
	}
	if !cur.IsZero() {
		// Started before (a resumed epic): it must hold its dependencies'
		// results, or the feature would build without them.
		for i, t := range tips {
			ok, err := s.IsAncestor(g.Context(), plumbing.NewHash(t), cur)
			if err != nil {
				return "", err
			}
			if !ok {
				return "", &engine.Error{Kind: engine.Refused, What: fmt.Sprintf("%s lacks what %s built", worktree.StagingBranch(f.Name), labels[i]),
					Hint: fmt.Sprintf("if nothing of %s is on it yet: git branch -D %s", f.Name, worktree.StagingBranch(f.Name))}
			}
		}
		return worktree.StagingBranch(f.Name) + " (" + words.ShortHash(cur.String()) + ")", nil
	}
	start := tips[0]
	where := worktree.StagingBranch(labels[0])
	if len(tips) > 1 {
		start, err = mgr.MergeCommits(g.Context(), labels, tips, fmt.Sprintf("start %s from %s", f.Name, strings.Join(labels, ", ")))
		var c *worktree.Conflict
		if errors.As(err, &c) {
			return "", &engine.Error{Kind: engine.Failed, What: fmt.Sprintf("the dependencies of %s do not merge", f.Name),
				Why: fmt.Sprintf("%s conflicts in %s", c.Task, strings.Join(c.Files, ", "))}
		}
		if err != nil {
			return "", err
		}
		where = "a merge of " + strings.Join(labels, ", ")
	}
	if _, err := mgr.EnsureStaging(g.Context(), start); err != nil {
		return "", err
	}
	return where + " (" + words.ShortHash(start) + ")", nil
}
