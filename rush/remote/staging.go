package remote

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/gitstore/remotes"
	"github.com/git-zerg/git-zerg/rush/schedule"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/worktree"
)

// SyncStaging makes the local staging branch (mgr's) the remote's, and
// returns its commit. The first host to get there publishes its own (from
// start, HEAD when empty).
func (l *Link) SyncStaging(ctx context.Context, mgr *worktree.Manager, start string) (string, error) {
	return l.SyncStagingFrom(ctx, mgr, start, "")
}

// SyncStagingFrom is SyncStaging with the remote's staging already
// fetched at fetched ("" to fetch it).
func (l *Link) SyncStagingFrom(ctx context.Context, mgr *worktree.Manager, start, fetched string) (string, error) {
	ref := mgr.StagingRef()
	for try := 0; ; try++ {
		remoteTip := fetched
		fetched = ""
		err := error(nil)
		if remoteTip == "" {
			err = l.try(func() (err error) {
				remoteTip, err = remotes.FetchStaging(ctx, l.Store, l.Remote, l.Feature, ref)
				return err
			})
		}
		if err != nil {
			return "", err
		}
		local, err := mgr.EnsureStaging(ctx, start)
		if err != nil {
			return "", err
		}
		if remoteTip == "" {
			var lost bool
			err := l.try(func() (err error) {
				lost, err = remotes.PushStaging(ctx, l.Store, l.Remote, ref, local, "")
				return err
			})
			if err != nil {
				return "", err
			}
			if lost && try < 3 {
				continue // another host published first: take that one
			}
			return local, nil
		}
		if remoteTip != local {
			if err := mgr.SetStaging(ctx, remoteTip, local); err != nil {
				return "", foreignStaging(err)
			}
		}
		return remoteTip, nil
	}
}

// TakeStaging fetches the remote's staging through s and, when the remote
// has one other than local (mgr's staging tip), makes it the local one;
// it returns the staging tip.
func (l *Link) TakeStaging(ctx context.Context, s *gitstore.Store, mgr *worktree.Manager, local string) (string, error) {
	var remoteTip string
	if err := l.try(func() (err error) {
		remoteTip, err = remotes.FetchStaging(ctx, s, l.Remote, l.Feature, mgr.StagingRef())
		return err
	}); err != nil {
		return "", err
	}
	if remoteTip != "" && remoteTip != local {
		if err := mgr.SetStaging(ctx, remoteTip, local); err != nil {
			return "", foreignStaging(err)
		}
		return remoteTip, nil
	}
	return local, nil
}

// CatchUp brings the remote's state into s, waiting for a remote that
// does not answer.
func (l *Link) CatchUp(ctx context.Context, s *gitstore.Store) error {
	return l.try(func() error { return remotes.CatchUp(ctx, s, l.Feature) })
}

// FetchWork fetches the pinned work (commits by ref) through s, waiting
// for a remote that does not answer.
func (l *Link) FetchWork(ctx context.Context, s *gitstore.Store, work map[string]string) error {
	return l.try(func() error { return remotes.FetchWork(ctx, s, l.Remote, work) })
}

// PushMerged sends a merge out: the staging moved from old to tip, and the
// tasks of pins (ids) recorded done, in one atomic push leased on old, so
// the other hosts see both at once, one push sooner. Under review nothing
// is recorded done: the staging goes alone. lost: another host moved the
// staging first, and nothing went out.
func (l *Link) PushMerged(g *engine.Engine, pins []worktree.Pin, ids []string, tip, ref, old string) (lost bool, err error) {
	if g.ReviewMode() == "" {
		pushed, err := g.RecordMergedPushing(pins, ids, tip, &gitstore.RefMove{Ref: ref, Old: old, New: tip})
		if errors.Is(err, gitstore.ErrRemoteRefMoved) {
			err = nil
		}
		return err == nil && !pushed, err
	}
	err = l.try(func() (err error) {
		lost, err = remotes.PushStaging(g.Context(), g.Store, l.Remote, ref, tip, old)
		return err
	})
	return lost, err
}

// DropPins removes the pins of work now in staging from the remote, in
// one push with refs, in the background (Close waits for it). Best
// effort: a pin left behind only keeps a merged commit reachable.
func (l *Link) DropPins(pins []worktree.Pin, refs map[string]string) {
	l.background.Add(1)
	go func() {
		defer l.background.Done()
		l.dropPins(pins, refs)
	}()
}

func (l *Link) dropPins(pins []worktree.Pin, refs map[string]string) {
	if refs == nil {
		refs = map[string]string{}
	}
	for _, p := range pins {
		refs[gitstore.WorkRef(l.Feature, p.Task)] = ""
	}
	remotes.PushRefs(l.Ctx, l.Store, l.Remote, refs)
}

// mergePoll is how often a host waiting for another host's level merge
// looks: every host waits on it, so it is shorter than Poll.
const mergePoll = 100 * time.Millisecond

// AwaitMerge waits (up to schedule.MergeGrace) until the level's work is merged by
// another host, and reports whether it was, with the remote's staging
// (ref) fetched beside the state: the next level starts one fetch sooner.
// The merge moves the staging before the state, so it is nearly always the
// merged one; when the two fetches crossed that moment, the level's work
// is not all in it, and the next round asks again.
func (l *Link) AwaitMerge(level int, ref string) (bool, string) {
	ctx := l.Ctx
	// A store of its own for the second fetch: a Store is not for
	// concurrent use.
	other, err := l.Store.Repo().Open(ctx, l.Store.Top)
	if err != nil {
		return false, ""
	}
	defer other.Drop()
	deadline := time.Now().Add(schedule.MergeGrace)
	for time.Now().Before(deadline) {
		select {
		case <-time.After(mergePoll):
		case <-l.Stop.Done():
			return false, ""
		}
		var staging string
		var serr error
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			staging, serr = remotes.FetchStaging(ctx, other, l.Remote, l.Feature, ref)
		}()
		perr := l.Poll(true)
		wg.Wait()
		if perr != nil {
			return false, ""
		}
		tasks, err := l.tasks()
		if err != nil {
			return false, ""
		}
		merged := true
		for _, t := range tasks {
			if t.Level == level && t.Status == state.Verified {
				merged = false
			}
		}
		if merged {
			if serr != nil {
				staging = ""
			}
			return true, staging
		}
	}
	return false, ""
}

// tasks reads the feature's tasks in the rush's own store.
func (l *Link) tasks() ([]*state.Task, error) {
	tx, err := l.Store.View(l.Feature)
	if err != nil {
		return nil, err
	}
	return tx.Tasks()
}

// foreignStaging turns a refused staging from a remote into the rush's
// refusal.
func foreignStaging(err error) error {
	var fe *worktree.ForeignError
	if !errors.As(err, &fe) {
		return err
	}
	return &engine.Error{Kind: engine.Refused, What: "staging refused", Why: fe.Error(),
		Hint: fmt.Sprintf("nothing was built on it; whoever moved it must put it back (to %s, the tip git-zerg set here, or a merge of verified work on it)", fe.Known)}
}
