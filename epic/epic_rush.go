package epic

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/rush"
	"github.com/git-zerg/git-zerg/state"
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
	switch o.Mode {
	case "", rush.ModeSubprocess:
		o.Mode = rush.ModeSubprocess
	case rush.ModeContainer:
	default:
		return nil, engine.UsageError("rush --epic: mode %q is not for epics (subprocess or container)", o.Mode)
	}
	ep, _, err := Read(g, name)
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
	total := o.Workers
	if total == 0 {
		total = g.Config.Workers.Count
	}
	if total < 1 {
		total = 1
	}
	marker, err := engine.AcquireRush(g.Store, "epics/"+name)
	if err != nil {
		var ee *engine.Error
		if errors.As(err, &ee) && ee.Kind == engine.Refused {
			ee.Why = strings.Replace(ee.Why, "a rush of epics/"+name, "a rush of epic "+name, 1)
		}
		return nil, err
	}
	defer marker.Release()
	if marker.Previous() != nil && !o.Resume {
		g.Note("an earlier rush of epic %s (pid %d) died; continuing from the features' state", name, marker.Previous().PID)
	}

	type outcome struct {
		name string
		res  *rush.Result
		err  error
	}
	results := make(chan outcome)
	var mu sync.Mutex
	running := map[string]chan struct{}{} // feature -> its interrupts
	share := map[string]int{}
	stopped := false
	defer rush.OnInterrupt(o.Interrupt, func() {
		mu.Lock()
		stopped = true
		for _, ch := range running {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
		mu.Unlock()
	})()

	out := &RushResult{Epic: name}
	outcomes := map[string]*FeatureOutcome{}
	ended := map[string]bool{} // its rush ran in this epic rush, or it cannot
	var firstErr error
	for {
		complete := map[string]bool{}
		for _, f := range ep.Features {
			ok, _, err := featureComplete(g, f.Name)
			if err != nil {
				return nil, err
			}
			complete[f.Name] = ok
			if ok && outcomes[f.Name] == nil {
				outcomes[f.Name] = &FeatureOutcome{Feature: f.Name, Already: true}
				ended[f.Name] = true
			}
		}
		mu.Lock()
		halt := stopped
		busy := 0
		for _, n := range share {
			busy += n
		}
		mu.Unlock()
		var ready []state.EpicFeature
		for _, f := range ep.Features {
			if ended[f.Name] || running[f.Name] != nil {
				continue
			}
			wait := false
			for _, d := range f.Dependencies {
				switch {
				case complete[d]:
				case ended[d]:
					// It will not complete in this rush: neither can this.
					outcomes[f.Name] = &FeatureOutcome{Feature: f.Name, Skipped: d + " did not complete"}
					ended[f.Name] = true
					g.Note("epic %s: %s skipped: its dependency %s did not complete", name, f.Name, d)
					wait = true
				default:
					wait = true
				}
				if ended[f.Name] {
					break
				}
			}
			if !wait {
				ready = append(ready, f)
			}
		}
		if free := total - busy; !halt && free > 0 && len(ready) > 0 {
			// The free workers go to the features that can start now,
			// evenly, the first in epic order getting what is left over.
			k := min(len(ready), free)
			for i, f := range ready[:k] {
				n := free / k
				if i < free%k {
					n++
				}
				from, err := startFrom(g, f)
				if err != nil {
					firstErr = err
					outcomes[f.Name] = &FeatureOutcome{Feature: f.Name, Err: err}
					ended[f.Name] = true
					g.Note("epic %s: %s cannot start: %v", name, f.Name, err)
					continue
				}
				sub, err := forFeature(g, f.Name, true)
				if err != nil {
					return nil, err
				}
				ch := make(chan struct{}, 2)
				mu.Lock()
				running[f.Name], share[f.Name] = ch, n
				mu.Unlock()
				g.Note("epic %s: %s starts with %s from %s", name, f.Name, engine.Plural(n, "worker"), from)
				go func(f string, sub *engine.Engine, n int) {
					res, err := rush.Run(sub, rush.Options{Workers: n, Mode: o.Mode, Resume: o.Resume, Interrupt: ch})
					results <- outcome{f, res, err}
				}(f.Name, sub, n)
			}
		}
		mu.Lock()
		left := len(running)
		mu.Unlock()
		if left == 0 {
			break
		}
		r := <-results
		mu.Lock()
		delete(running, r.name)
		delete(share, r.name)
		mu.Unlock()
		ended[r.name] = true
		outcomes[r.name] = &FeatureOutcome{Feature: r.name, Result: r.res, Err: r.err}
		if r.err != nil {
			var ee *engine.Error
			if firstErr == nil || errors.As(r.err, &ee) && ee.Kind == engine.Interrupted {
				firstErr = r.err
			}
			g.Note("epic %s: %s ended: %v", name, r.name, r.err)
		} else if r.res != nil && r.res.Complete {
			g.Note("epic %s: %s complete, staging %s at %s", name, r.name, r.res.Staging, engine.ShortHash(r.res.Tip))
		}
	}
	out.Complete = true
	for _, f := range ep.Features {
		oc := outcomes[f.Name]
		if oc == nil {
			oc = &FeatureOutcome{Feature: f.Name, Skipped: "not started"}
		}
		out.Features = append(out.Features, *oc)
		ok, _, err := featureComplete(g, f.Name)
		if err != nil {
			return out, err
		}
		out.Complete = out.Complete && ok
	}
	if out.Complete {
		return out, nil
	}
	var ee *engine.Error
	if errors.As(firstErr, &ee) && (ee.Kind == engine.Interrupted || ee.Kind == engine.NeedsPerson || ee.Kind == engine.Usage) {
		return out, firstErr
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
	return out, engine.FailedError(fmt.Sprintf("rush of epic %s ended with unfinished features", name), strings.Join(stuck, "; "))
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
		return worktree.StagingBranch(f.Name) + " (" + engine.ShortHash(cur.String()) + ")", nil
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
	return where + " (" + engine.ShortHash(start) + ")", nil
}
