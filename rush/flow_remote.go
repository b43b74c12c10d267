package rush

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/rush/remote"
	"github.com/git-zerg/git-zerg/rush/schedule"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
	"github.com/git-zerg/git-zerg/worktree"
)

// The flow schedule of a rush shared through a remote. Each host runs the
// flow loop of runFlow, and the remote stays the arbiter of every
// transition: a claim is picked on the remote's state as it commits, among
// the tasks whose dependencies the staging the worker starts from holds.
//
// Each host has its merge queue. A host merges the verified work it can
// onto the remote's staging as it last knew it, gates the result here, and
// pushes the staging and the tasks recorded done in one atomic push leased
// on the staging and the state it started from. A push that lost only the
// state lease is retried on the new state by the arbiter; a lost staging
// lease is another host's merge: the queue takes the remote's staging,
// finds which of its work is in it already (InHistory: recorded done by
// that host, or to record here), and merges on it the rest and every task
// verified meanwhile (schedule.JoinLost). One host merges for all (schedule.MergeQueue): the
// one with the first name among those seen active; the others merge a
// host's work only once that host stayed quiet for the grace, so the hosts
// do not race to move the one staging, and the work of a dead host, the
// merger included, still reaches staging. A host whose view of
// the state holds tasks done that its gated staging does not (another
// host merged them) takes the remote's staging the same way, and gates it
// here before anything starts from it: another host's gate record does not
// count here.

// flowShared is what the flow scheduler shares with the claims of its
// workers: which tasks may start from each gated staging tip.
type flowShared struct {
	eligibleMu sync.Mutex
	eligible   map[string]func(*state.Task) bool // by staging tip
	newest     string                            // the last tip given eligible
	flowPaths  map[string]float64                // schedule.Remaining(): the claim's rank
}

// setEligible records which tasks a worker may claim when it starts from
// the gated staging g.
func (r *rush) setEligible(g gated, tasks []*state.Task) {
	only := schedule.Eligible(tasks, g.held)
	r.eligibleMu.Lock()
	defer r.eligibleMu.Unlock()
	if r.eligible == nil {
		r.eligible = map[string]func(*state.Task) bool{}
	}
	r.eligible[g.tip] = only
	r.newest = g.tip
}

// newestGated is the newest staging tip gated here, tip when none is
// known: a worker that goes on to its next task starts from it.
func (r *rush) newestGated(tip string) string {
	r.eligibleMu.Lock()
	defer r.eligibleMu.Unlock()
	if r.newest == "" {
		return tip
	}
	return r.newest
}

// flowClaim is what a worker starting from tip may claim on the remote's
// state, and in which order: the longest path first, as flowReady orders.
func (r *rush) flowClaim(tip string) (only func(*state.Task) bool, rank func(*state.Task) float64) {
	r.eligibleMu.Lock()
	only = r.eligible[tip]
	r.eligibleMu.Unlock()
	if only == nil {
		only = func(*state.Task) bool { return false } // a tip never gated here: nothing starts from it
	}
	paths := r.flowPaths
	return only, func(t *state.Task) float64 { return paths[t.ID()] }
}

// flowJoin brings the remote's state and then its staging here before the
// flow loop reads them: a staging fetched after the state holds every task
// done in it (a merge moves both in one push, and staging only forward).
func (r *rush) flowJoin() error {
	if err := r.link.Poll(true); err != nil {
		return err
	}
	_, err := r.link.SyncStaging(r.g.Context(), r.mgr, "")
	return err
}

// flowLook is the flow loop's look at the remote: its state now and then
// (what the other hosts claimed, verified and merged), and, when this host
// has a worker free, the claims whose lease ran out taken back (a dead
// host's: the tasks go back to pending).
func (r *rush) flowLook(free bool) error {
	if err := r.link.Poll(false); err != nil {
		return err
	}
	if free {
		return r.g.ExpireStale()
	}
	return nil
}

// leases is the workers' leases in the rush's own view of the state.
func (r *rush) leases() map[string]*state.Worker {
	tx, err := r.s.View(r.feature)
	if err != nil {
		return nil
	}
	ws, _ := tx.Workers()
	return ws
}

// remoteIdle is waitIdle for a host of a shared rush, whose scheduler has
// nothing running: it goes on while some verified work is still to merge
// (pending: what this host has not merged, another host's within its
// grace) or another host's merge to take, and ends once every task is
// settled and its gated staging holds every task done.
func (r *rush) remoteIdle(tasks []*state.Task, base gated, pending []worktree.Pin) bool {
	if r.stopErr() != nil {
		return false
	}
	if len(pending) > 0 || schedule.Behind(tasks, base.held) {
		r.pause(remote.Poll)
		return true
	}
	return r.waitIdle(tasks, 0)
}

// remoteBatch is mergeBatch on a host of a shared rush: pins merged onto
// the remote's staging, gated here, and pushed with their tasks recorded
// done; with no pins, the remote's staging taken and gated here. from is
// the gated staging the scheduler starts workers from.
func (r *rush) remoteBatch(g *engine.Engine, mgr *worktree.Manager, pins []worktree.Pin, from gated) batch {
	ctx := g.Context()
	for round := 1; ; round++ {
		var v batchView
		var err error
		if v, pins, err = r.roundView(g, mgr, pins, from, round); err != nil {
			return batch{err: err}
		}
		merged, out, work, err := r.batchSort(g, v, pins)
		if err != nil {
			return batch{err: err}
		}
		if len(out) == 0 {
			return r.batchHeld(g, mgr, v, merged)
		}
		if err := r.link.FetchWork(ctx, g.Store, work); err != nil {
			if round < 5 {
				continue // merged and dropped meanwhile: the staging has it now
			}
			return batch{err: err}
		}
		if b, again := r.batchMerge(g, mgr, v, merged, out, round); !again {
			return b
		}
	}
}

// batchView is what a round of remoteBatch merges onto: the staging tip,
// the tasks whose work it holds, and the state read for the round.
type batchView struct {
	tip   string
	held  map[string]bool
	tasks []*state.Task
}

// roundView is a round's start: the staging here and the state, or, but
// for the first round of a merge of this host's own work from the gated
// staging, the remote's state and staging taken. On a round after the
// first, the work other hosts lost joins pins (not under forge.review).
func (r *rush) roundView(g *engine.Engine, mgr *worktree.Manager, pins []worktree.Pin, from gated, round int) (batchView, []worktree.Pin, error) {
	ctx := g.Context()
	local, err := mgr.EnsureStaging(ctx, "")
	if err != nil {
		return batchView{}, pins, err
	}
	v := batchView{tip: local, held: from.held}
	if v.tasks, err = r.snapshot(g.Store); err != nil {
		return batchView{}, pins, err
	}
	if len(pins) == 0 || round > 1 || local != from.tip || !schedule.OwnWork(v.tasks, pinIDs(pins), r.s.Host().Name) {
		// The first round of a merge of this host's own work goes on
		// what this host knows: the lease on the staging push says
		// whether another host merged since. Otherwise the state
		// first (another host's work may be merged already: no need
		// to verify it again here), then the staging, which then
		// holds every task done in that state.
		if err := r.link.CatchUp(ctx, g.Store); err != nil {
			return batchView{}, pins, err
		}
		if v.tasks, err = r.snapshot(g.Store); err != nil {
			return batchView{}, pins, err
		}
		if round > 1 && g.ReviewMode() == "" {
			pins = slices.Concat(pins, pinsOf(schedule.JoinLost(pinIDs(pins), v.tasks)))
		}
		if v.tip, err = r.link.TakeStaging(ctx, g.Store, mgr, local); err != nil {
			return batchView{}, pins, err
		}
		v.held = doneSet(v.tasks)
	}
	return v, pins, nil
}

// batchSort sorts the pins whose task is verified with that commit still
// by whether the staging of v has their work already (merged) or not
// (out, with work: the refs to fetch it from).
func (r *rush) batchSort(g *engine.Engine, v batchView, pins []worktree.Pin) (merged, out []worktree.Pin, work map[string]string, err error) {
	byID := make(map[string]*state.Task, len(v.tasks))
	for _, t := range v.tasks {
		byID[t.ID()] = t
	}
	var still []worktree.Pin // pins whose task is verified with that commit still
	var commits []string
	for _, p := range pins {
		if t := byID[p.Task]; t != nil && t.Status == state.Verified && t.Commit == p.Commit {
			still = append(still, p)
			commits = append(commits, p.Commit)
		}
	}
	in, err := g.Store.InHistory(g.Context(), v.tip, commits)
	if err != nil {
		return nil, nil, nil, err
	}
	work = map[string]string{}
	for _, p := range still {
		if in[p.Commit] {
			merged = append(merged, p)
		} else {
			out = append(out, p)
			work[gitstore.WorkRef(r.feature, p.Task)] = p.Commit
		}
	}
	return merged, out, work, nil
}

// batchHeld is a batch with nothing left to merge: what the staging has
// already recorded done, and the staging gated here.
func (r *rush) batchHeld(g *engine.Engine, mgr *worktree.Manager, v batchView, merged []worktree.Pin) batch {
	var b batch
	if len(merged) > 0 {
		// Usually recorded already by the host that merged them.
		if err := g.RecordMerged(merged, pinIDs(merged), v.tip); err != nil {
			b.err = err
			return b
		}
	}
	if b.stop, b.err = runQualityGates(g, mgr, true); b.stop != nil || b.err != nil {
		return b
	}
	b.gated = gated{tip: v.tip, held: plus(v.held, pinIDs(merged))}
	r.setEligible(b.gated, v.tasks)
	return b
}

// batchMerge merges out onto the staging of v, gates it here (failed
// gates: the search for the task to blame), and pushes it with merged
// and out recorded done. again is a push that lost the staging's lease
// to another host's merge: the round is to run again on the new staging.
func (r *rush) batchMerge(g *engine.Engine, mgr *worktree.Manager, v batchView, merged, out []worktree.Pin, round int) (b batch, again bool) {
	res, stop, err := mergeOnly(g, mgr, out)
	if stop != nil || err != nil {
		b.stop, b.err = stop, err
		return b, false
	}
	// Gated before it goes out: a staging that did not pass is never
	// built on, here or elsewhere.
	if b.stop, b.err = runQualityGates(g, mgr, false); b.err != nil {
		return b, false
	} else if b.stop != nil {
		return r.remoteSplit(g, mgr, b.stop, merged, out, gated{tip: v.tip, held: v.held}, res.Tip, v.tasks), false
	}
	all := append(merged, out...)
	ids := append(pinIDs(merged), append(res.Merged, res.Skipped...)...)
	if r.beforeDone != nil {
		r.beforeDone(ids)
	}
	lost, err := r.link.PushMerged(g, all, ids, res.Tip, mgr.StagingRef(), v.tip)
	if err != nil {
		b.err = err
		return b, false
	}
	if lost {
		if round >= 20 {
			b.err = engine.RefusedError("merge gave up", fmt.Sprintf("the staging on %s kept moving for %d rounds", r.link.Remote, round))
			return b, false
		}
		g.Note("the staging on %s moved while this host merged %s; merging again on it", r.link.Remote, words.Plural(len(out), "task"))
		return batch{}, true
	}
	b.tasks = ids
	held := v.held
	if g.ReviewMode() == "" {
		held = plus(held, ids)
	}
	b.gated = gated{tip: res.Tip, held: held}
	r.setEligible(b.gated, v.tasks)
	// The gate record goes out for the record (it stands in for the
	// gates only where it was made), with the pins dropped; nobody
	// waits for that push.
	extra := map[string]string{}
	if rec, _ := g.Store.ReadRef(gitstore.GatesRef(res.Tree)); !rec.IsZero() {
		extra[gitstore.GatesRef(res.Tree)] = rec.String()
	}
	r.link.DropPins(all, extra)
	return b, false
}

// remoteSplit is land's search for the task to blame, on a host of a
// shared rush: the gates failed on failedTip, the batch out merged onto
// base (with merged, work base already held). Nothing of it went out, so
// staging goes back to base here and the batch is split in halves, each
// merged, gated and pushed in turn, down to the task whose work breaks the
// gates: that one is blocked, the others land. Gates that fail on base
// too blame nothing and stop the rush, as on one clone.
func (r *rush) remoteSplit(g *engine.Engine, mgr *worktree.Manager, failed error, merged, out []worktree.Pin, base gated, failedTip string, tasks []*state.Task) batch {
	var ee *engine.Error
	if !errors.As(failed, &ee) || ee.Kind != engine.Failed || failedTip == base.tip {
		return batch{stop: failed} // interrupted, or nothing merged
	}
	passed, err := r.passedBefore(g, mgr, base.tip, failedTip)
	if err != nil {
		return batch{err: err}
	}
	if !passed {
		return batch{stop: failed}
	}
	if len(out) == 1 {
		if err := g.BlockGatesFailed(out[0].Task, out[0].Commit, "quality gates failed with its work merged: "+ee.Why); err != nil {
			return batch{err: err}
		}
		r.setEligible(base, tasks)
		return batch{gated: base}
	}
	half := len(out) / 2
	first := r.remoteBatch(g, mgr, append(merged, out[:half]...), base)
	if first.stop != nil || first.err != nil {
		return first
	}
	rest := r.remoteBatch(g, mgr, out[half:], first.gated)
	rest.tasks = append(first.tasks, rest.tasks...)
	return rest
}

// pinsOf is the work of tasks, to merge.
func pinsOf(tasks []*state.Task) []worktree.Pin {
	out := make([]worktree.Pin, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, worktree.Pin{Task: t.ID(), Commit: t.Commit})
	}
	return out
}

// plus is held and ids, a new set.
func plus(held map[string]bool, ids []string) map[string]bool {
	out := make(map[string]bool, len(held)+len(ids))
	for id := range held {
		out[id] = true
	}
	for _, id := range ids {
		out[id] = true
	}
	return out
}

// flowEnd brings every host of a shared rush to the remote's state and
// staging at its end, so that each says the same.
func (r *rush) flowEnd(ctx context.Context) error {
	if err := r.link.Poll(true); err != nil {
		return err
	}
	_, err := r.link.SyncStaging(ctx, r.mgr, "")
	return err
}
