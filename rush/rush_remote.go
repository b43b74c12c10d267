package rush

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/gitstore/remotes"
	"github.com/git-zerg/git-zerg/rush/schedule"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/worktree"
)

// A rush shared through a remote (rush --remote, rush.remote) runs on each
// clone that starts it, every clone a host. The remote is the arbiter of
// every transition (claims, leases, done: sync.arbiter), so no task is
// ever held by two hosts, and a verified task's pinned commit goes out in
// the same push as the transition that names it. Each level starts from
// the remote's staging; whichever host sees a level settled merges it,
// runs the gates, and moves the remote's staging by compare-and-swap; a
// host that loses that race takes the winner's staging instead of merging
// again. That is rush.schedule = "levels"; by dependencies, see
// flow_remote.go.

// remotePoll is how often a host that waits for other hosts looks at the
// remote's state.
const remotePoll = 100 * time.Millisecond

// shared is what a rush shared with other hosts through a remote keeps
// of them and of the remote.
type shared struct {
	// prefetching: a background catch-up with the remote is on its way,
	// through fresher (its store, only ever used by that one); caughtUp
	// is when the last one ended (Unix nanoseconds) and catchUpTook how
	// long it took; working counts the worker commands running.
	prefetching atomic.Bool
	fresher     *gitstore.Store
	caughtUp    atomic.Int64
	catchUpTook atomic.Int64
	working     atomic.Int32
	// remote shares the rush with other hosts ("" for none); lastPoll is
	// when this host last looked at its state, and looked when the last
	// look that brought it began: the local state holds the remote's as of
	// then.
	remote   string
	lastPoll time.Time
	looked   time.Time
	// levelSynced: the level merge just ended with this host holding the
	// remote's state and staging, so the next level starts on them without
	// asking again. background holds pushes nobody waits for (done before
	// the rush ends).
	levelSynced bool
	background  sync.WaitGroup
	flowShared
}

// hostWorker is a worker's name in the shared state: worker-<n> of each
// host, told apart by the host's name.
func hostWorker(host gitstore.HostIdentity, name string) string {
	label := strings.Map(func(c rune) rune {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
			return c
		}
		return '-'
	}, host.Name)
	out := name + "." + strings.Trim(label, "-")
	if len(out) > 64 {
		out = out[:64]
	}
	return strings.TrimRight(out, ".-")
}

// poll catches up with the remote's state when the last look is older
// than remotePoll.
func (r *rush) poll(force bool) error {
	if r.remote == "" || !force && time.Since(r.lastPoll) < remotePoll {
		return nil
	}
	r.lastPoll = time.Now()
	start := r.lastPoll
	if err := remotes.CatchUp(r.g.Context(), r.s, r.feature); err != nil {
		return err
	}
	r.looked = start
	return nil
}

// prefetch catches up with the remote in the background while a worker's
// result is committed and verified, when other hosts are writing to it: a
// transition then pushes on what the remote holds, where one pushed on
// this host's last look would mostly lose its lease to theirs and cost a
// fetch and a second push anyway. Alone on the remote (no lease lost for a
// while), a host pushes at once and never needs it.
func (r *rush) prefetch() {
	if r.remote == "" || time.Since(remotes.LeaseLost(r.s, r.feature)) > prefetchFor {
		return
	}
	if !r.prefetching.CompareAndSwap(false, true) {
		return // one at a time: the next transition reads what it brings
	}
	r.background.Add(1)
	go func() {
		defer r.background.Done()
		defer r.prefetching.Store(false)
		ctx := r.g.Context()
		// One store for every catch-up, used by one at a time: a Store
		// is not for concurrent use.
		if r.fresher == nil {
			s, err := r.s.Repo().Open(ctx, r.s.Top)
			if err != nil {
				return
			}
			s.Persistent = true
			remotes.SetArbiter(s, r.remote, engine.CheckCaughtUp)
			remotes.SetArbiterWait(s, time.Nanosecond) // a look, not a wait: the transition waits if it must
			remotes.SetRepushPins(s, r.g.ReviewMode() == "")
			r.fresher = s
		}
		start := time.Now()
		remotes.CatchUp(ctx, r.fresher, r.feature)
		r.catchUpTook.Store(int64(time.Since(start)))
		r.caughtUp.Store(time.Now().UnixNano())
	}()
}

// prefetchFor is how long after a lost lease a host keeps catching up
// before its transitions.
const prefetchFor = 10 * time.Second

// keepFresh catches up with the remote every freshEvery while workers run
// and other hosts write to it (see prefetch), until ctx ends: when a worker
// finishes, this host's view is then a fraction of a second old, and its
// transition mostly goes out at once instead of waiting for a fetch.
func (r *rush) keepFresh(ctx context.Context) {
	t := time.NewTicker(freshEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if r.working.Load() > 0 && r.freshDue(time.Now()) {
			r.prefetch()
		}
	}
}

// freshEvery is the tick of keepFresh. A catch-up is due on a tick once
// half as long as the last one took has passed since it ended: a nearby
// remote (a fetch of 50 ms) is looked at every tick, one 400 ms away about
// every 0.6 s, where a fixed tick shorter than a fetch would fetch without
// pause. (A fixed 300 ms made the three-host benchmark 1.97–2.26× faster
// than one host, mean 2.07× over seven runs; this, 1.99–2.21×, mean 2.10×
// over seven.)
const freshEvery = 150 * time.Millisecond

// freshDue is freshDue of the rush's last catch-up.
func (r *shared) freshDue(now time.Time) bool {
	return schedule.FreshDue(now, time.Unix(0, r.caughtUp.Load()), time.Duration(r.catchUpTook.Load()))
}

// syncStaging makes the local staging branch the remote's, and returns its
// commit. The first host to get there publishes its own (from start,
// HEAD when empty).
func (r *rush) syncStaging(ctx context.Context, start string) (string, error) {
	return r.syncStagingFrom(ctx, start, "")
}

// syncStagingFrom is syncStaging with the remote's staging already
// fetched at fetched ("" to fetch it).
func (r *rush) syncStagingFrom(ctx context.Context, start, fetched string) (string, error) {
	ref := r.mgr.StagingRef()
	for try := 0; ; try++ {
		remoteTip := fetched
		fetched = ""
		err := error(nil)
		if remoteTip == "" {
			err = r.remoteTry(func() (err error) {
				remoteTip, err = remotes.FetchStaging(ctx, r.s, r.remote, r.feature, ref)
				return err
			})
		}
		if err != nil {
			return "", err
		}
		local, err := r.mgr.EnsureStaging(ctx, start)
		if err != nil {
			return "", err
		}
		if remoteTip == "" {
			var lost bool
			err := r.remoteTry(func() (err error) {
				lost, err = remotes.PushStaging(ctx, r.s, r.remote, ref, local, "")
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
			if err := r.mgr.SetStaging(ctx, remoteTip, local); err != nil {
				return "", foreignStaging(err)
			}
		}
		return remoteTip, nil
	}
}

// remoteMerge merges a settled level on this host unless another host
// did: the level's verified work already in the remote's staging is
// recorded done; the rest is merged here, gated, and pushed with a lease on
// the staging it started from. A lost push means another host merged
// first: its staging is taken and the round starts over (its work is the
// same, so it is not merged twice).
func (r *rush) remoteMerge(level int) (stop error, err error) {
	ctx := r.g.Context()
	ref := r.mgr.StagingRef()
	polled, fetched := false, ""
	for round := 1; ; round++ {
		// The first round goes on what this host knows: it saw the level
		// settled, and only this level's merge moves the staging it
		// started from. Had another host merged first, the lease on the
		// staging push says so, and the next round asks the remote.
		var tip string
		var err error
		if round == 1 {
			tip, err = r.mgr.EnsureStaging(ctx, "")
		} else {
			if !polled {
				if err := r.poll(true); err != nil {
					return nil, err
				}
			}
			tip, err = r.syncStagingFrom(ctx, "", fetched)
			polled, fetched = false, ""
		}
		if err != nil {
			return nil, err
		}
		tasks, err := r.snapshot(r.s)
		if err != nil {
			return nil, err
		}
		var in, out []worktree.Pin
		work := map[string]string{}
		var last *state.Task // the level's last verification
		var verified []*state.Task
		var commits []string
		for _, t := range tasks {
			if t.Level != level || t.Status != state.Verified {
				continue
			}
			if last == nil || lastAt(t).After(lastAt(last)) {
				last = t
			}
			verified = append(verified, t)
			commits = append(commits, t.Commit)
		}
		merged, err := r.s.InHistory(ctx, tip, commits)
		if err != nil {
			return nil, err
		}
		for _, t := range verified {
			p := worktree.Pin{Task: t.ID(), Commit: t.Commit}
			if merged[t.Commit] {
				in = append(in, p)
			} else {
				out = append(out, p)
				work[gitstore.WorkRef(r.feature, t.ID())] = t.Commit
			}
		}
		if len(out) == 0 {
			if len(in) > 0 {
				// Usually already recorded by the host that merged; its
				// push also dropped the pins.
				if err := r.g.RecordMerged(in, pinIDs(in), tip); err != nil {
					return nil, err
				}
			}
			r.levelSynced = round > 1
			// Another host's gate record does not count here: the gates
			// run on this machine once per tree.
			return runQualityGates(r.g, r.mgr, true)
		}
		if round == 1 && last != nil && last.Host != r.s.Host().Name {
			if ok, staging := r.awaitMerge(level); ok {
				polled, fetched = true, staging
				continue // the host that settled the level merged it
			}
		}
		if err := r.remoteTry(func() error { return remotes.FetchWork(ctx, r.s, r.remote, work) }); err != nil {
			if round < 5 {
				continue // merged and dropped meanwhile: the staging has it now
			}
			return nil, err
		}
		res, stop, err := mergeOnly(r.g, r.mgr, out)
		if stop != nil || err != nil {
			return stop, err
		}
		// Gated before it goes out: a staging that did not pass is never
		// built on, here or elsewhere.
		if stop, err := runQualityGates(r.g, r.mgr, false); stop != nil || err != nil {
			return stop, err
		}
		all := append(in, out...)
		lost, err := r.pushMerged(r.g, all, pinIDs(all), res.Tip, ref, tip)
		if err != nil {
			return nil, err
		}
		if lost {
			if round >= 20 {
				return nil, engine.RefusedError("level merge gave up", fmt.Sprintf("the staging on %s kept moving for %d rounds", r.remote, round))
			}
			r.g.Note("level %d: the remote moved while this host merged it; looking again", level)
			continue
		}
		r.levelSynced = true // the remote's staging and state are this host's own
		// The gate record goes out for the record (it stands in for the
		// gates only where it was made), with the pins dropped.
		extra := map[string]string{}
		if rec, _ := r.s.ReadRef(gitstore.GatesRef(res.Tree)); !rec.IsZero() {
			extra[gitstore.GatesRef(res.Tree)] = rec.String()
		}
		// Nobody waits for this push: it goes on while the next level starts.
		r.background.Add(1)
		go func() {
			defer r.background.Done()
			r.dropRemotePins(all, extra)
		}()
		return nil, nil
	}
}

// pushMerged sends a merge out: the staging moved from old to tip, and the
// tasks of pins (ids) recorded done, in one atomic push leased on old, so
// the other hosts see both at once, one push sooner. Under review nothing
// is recorded done: the staging goes alone. lost: another host moved the
// staging first, and nothing went out.
func (r *rush) pushMerged(g *engine.Engine, pins []worktree.Pin, ids []string, tip, ref, old string) (lost bool, err error) {
	if g.ReviewMode() == "" {
		pushed, err := g.RecordMergedPushing(pins, ids, tip, &gitstore.RefMove{Ref: ref, Old: old, New: tip})
		if errors.Is(err, gitstore.ErrRemoteRefMoved) {
			err = nil
		}
		return err == nil && !pushed, err
	}
	err = r.remoteTry(func() (err error) {
		lost, err = remotes.PushStaging(g.Context(), g.Store, r.remote, ref, tip, old)
		return err
	})
	return lost, err
}

// dropRemotePins removes the pins of work now in staging from the remote,
// in one push with refs (best effort: a pin left behind only keeps a
// merged commit reachable).
func (r *rush) dropRemotePins(pins []worktree.Pin, refs map[string]string) {
	if refs == nil {
		refs = map[string]string{}
	}
	for _, p := range pins {
		refs[gitstore.WorkRef(r.feature, p.Task)] = ""
	}
	remotes.PushRefs(r.g.Context(), r.s, r.remote, refs)
}

func pinIDs(pins []worktree.Pin) []string {
	ids := make([]string, len(pins))
	for i, p := range pins {
		ids[i] = p.Task
	}
	return ids
}

// remoteTry runs a step that needs the remote, again with backoff (up to
// rush.remote_wait) while the remote does not answer, saying so. A
// push that was not answered may have been applied: each step is a
// compare-and-swap or a fetch, so doing it again is safe.
func (r *rush) remoteTry(step func() error) error {
	deadline := time.Now().Add(r.remoteWait())
	wait := 250 * time.Millisecond
	for {
		err := step()
		var re *remotes.RemoteError
		if !errors.As(err, &re) || time.Now().Add(wait).After(deadline) {
			return err
		}
		r.remoteWaiting(r.remote, re.Err, wait)
		select {
		case <-time.After(wait):
		case <-r.stopCtx.Done():
			return err
		}
		wait = min(wait*2, 5*time.Second)
	}
}

// remoteWait is how long the rush waits for a remote that does not answer.
func (r *rush) remoteWait() time.Duration {
	if r.cfg != nil && r.cfg.Rush.RemoteWait > 0 {
		return time.Duration(r.cfg.Rush.RemoteWait)
	}
	return remotes.RemoteWait
}

// remoteWaiting says that the remote does not answer, once per wait.
func (r *rush) remoteWaiting(remote string, err error, wait time.Duration) {
	why := err.Error()
	var ge *gitcmd.Error
	if errors.As(err, &ge) {
		why = ge.Reason() // the command line is not the person's
	}
	if i := strings.IndexByte(why, '\n'); i >= 0 {
		why = why[:i]
	}
	r.g.Note("remote %s does not answer (%s); trying again in %s", remote, why, wait.Round(time.Millisecond))
}

// mergePoll is how often a host waiting for another host's level merge
// looks: every host waits on it, so it is shorter than remotePoll.
const mergePoll = 100 * time.Millisecond

// awaitMerge waits (up to schedule.MergeGrace) until the level's work is merged by
// another host, and reports whether it was, with the remote's staging
// fetched beside the state: the next level starts one fetch sooner. The
// merge moves the staging before the state, so it is nearly always the
// merged one; when the two fetches crossed that moment, the level's work
// is not all in it, and the next round asks again.
func (r *rush) awaitMerge(level int) (bool, string) {
	ctx := r.g.Context()
	// A store of its own for the second fetch: a Store is not for
	// concurrent use.
	other, err := r.s.Repo().Open(ctx, r.s.Top)
	if err != nil {
		return false, ""
	}
	defer other.Drop()
	deadline := time.Now().Add(schedule.MergeGrace)
	for time.Now().Before(deadline) {
		select {
		case <-time.After(mergePoll):
		case <-r.stopCtx.Done():
			return false, ""
		}
		var staging string
		var serr error
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			staging, serr = remotes.FetchStaging(ctx, other, r.remote, r.feature, r.mgr.StagingRef())
		}()
		perr := r.poll(true)
		wg.Wait()
		if perr != nil {
			return false, ""
		}
		tasks, err := r.snapshot(r.s)
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

// lastAt is when the task's last transition happened.
func lastAt(t *state.Task) time.Time {
	if len(t.History) == 0 {
		return time.Time{}
	}
	return t.History[len(t.History)-1].At
}

// heldBy is the task worker holds in the local state, nil when none (or
// when the lease is another clone's under this one's name).
func heldBy(s *gitstore.Store, feature, worker string) *state.Task {
	tx, err := s.View(feature)
	if err != nil {
		return nil
	}
	ws, err := tx.Workers()
	if err != nil || ws[worker] == nil || !s.Host().Holds(ws[worker]) {
		return nil
	}
	t, err := tx.Task(ws[worker].Task)
	if err != nil || t.Status != state.Claimed || t.Worker != worker {
		return nil
	}
	return t
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
