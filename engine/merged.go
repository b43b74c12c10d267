package engine

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/git-zerg/git-zerg/engine/rushmarker"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
	"github.com/git-zerg/git-zerg/worktree"
)

// The transitions a rush makes besides claim, done and fail: the level
// merge recorded, a conflict blocked, the claims of a dead rush or of an
// expired lease taken back. Package rush decides when; the state is
// changed here, under the same rules as every other command.

// RecordMerged records verified → done for the tasks of merged whose pin
// is in pins, now in staging at tip.
func (g *Engine) RecordMerged(pins []worktree.Pin, merged []string, tip string) error {
	_, err := g.RecordMergedPushing(pins, merged, tip, nil)
	return err
}

// RecordMergedPushing is RecordMerged whose push to the arbiter also moves
// the staging there (also, when set): pushed says it did. The caller
// handles review mode, which records nothing.
func (g *Engine) RecordMergedPushing(pins []worktree.Pin, merged []string, tip string, also *gitstore.RefMove) (pushed bool, err error) {
	s, feature, policy := g.Store, g.Feature, g.Policy()
	if g.ReviewMode() != "" {
		// Under review a task is done only once its pull request is merged
		// (ship, sync --forge): staging has its work, the task stays
		// verified, and what depends on it waits.
		g.Note("%s merged into staging, verified: done once reviewed (git zerg ship)", strings.Join(merged, ", "))
		return false, nil
	}
	var ids []string
	var last *gitstore.Tx
	err = s.Update(g.Context(), feature, g.Time, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		last = tx
		if also != nil {
			tx.PushAlso(*also)
		}
		if err := CheckStateAt(g.Context(), s, feature, tx.Tip()); err != nil {
			return nil, err
		}
		x := &txn{tx: tx, now: g.Time().UTC(), policy: policy}
		ids = nil
		for _, id := range merged {
			t, err := tx.Task(id)
			if err != nil {
				return nil, err
			}
			// Facts, not trust: the pinned commit must be in staging now.
			if t.Status != state.Verified || !containsPin(pins, id, t.Commit) {
				continue
			}
			t = t.Clone()
			t.Record(x.event(state.OpMerge, state.Done, t.Worker, "", t.Commit))
			tx.SetRef(gitstore.WorkRef(feature, id), "") // reachable from staging now
			if err := x.releaseLocks(t); err != nil {
				return nil, err
			}
			if err := tx.Put(t); err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
		if len(ids) == 0 {
			return nil, nil
		}
		return &gitstore.Message{Subject: fmt.Sprintf("merge %s into staging %s", strings.Join(ids, ", "), words.ShortHash(tip)),
			Op: state.OpMerge, Task: ids[0], From: string(state.Verified), To: string(state.Done)}, nil
	})
	if err != nil {
		return false, err
	}
	// Only what this call recorded: another host may have recorded the
	// rest.
	for _, id := range ids {
		g.Transition(id, "done (merged into staging "+words.ShortHash(tip)+")")
	}
	return last != nil && last.Pushed(), nil
}

func containsPin(pins []worktree.Pin, id, commit string) bool {
	for _, p := range pins {
		if p.Task == id && (p.Commit == commit || strings.HasPrefix(commit, p.Commit)) {
			return true
		}
	}
	return false
}

// TakeBack returns the claims of a dead rush on this host to pending at
// once, instead of waiting for their leases to expire: those of dead, or
// when nil of every rush of this host that is gone (see ClaimHolderAlive).
// stop is called first for each claim taken back, to end what its worker
// left running: it must not write into a worktree about to be reused.
func (g *Engine) TakeBack(dead *rushmarker.Holder, stop func(*state.Worker)) error {
	return g.Store.Update(g.Context(), g.Feature, g.Time, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		x := &txn{tx: tx, now: g.Time().UTC(), policy: g.Policy(), ttl: g.TTL()}
		ws, err := tx.Workers()
		if err != nil {
			return nil, err
		}
		var names []string
		for name, w := range ws {
			if dead != nil && w.Host == dead.Host && (dead.Instance == "" || w.Instance == dead.Instance) && w.PID == dead.PID ||
				dead == nil && deadHolder(tx.Host(), w) {
				stop(w)
				// Expire the lease now; expireLeases does the rest.
				w2 := *w
				w2.Expires = x.now
				if err := tx.PutWorker(&w2); err != nil {
					return nil, err
				}
				names = append(names, name)
			}
		}
		if len(names) == 0 {
			return nil, nil
		}
		if _, err := x.expireLeases(); err != nil {
			return nil, err
		}
		sort.Strings(names)
		if dead == nil {
			return &gitstore.Message{Subject: "take back claims of dead rushes: " + strings.Join(names, ", "),
				Op: state.OpExpire, Reason: "their rush on " + tx.Host().Name + " is gone"}, nil
		}
		return &gitstore.Message{Subject: fmt.Sprintf("take back claims of dead rush %d: %s", dead.PID, strings.Join(names, ", ")),
			Op: state.OpExpire, Reason: fmt.Sprintf("rush pid %d on %s died", dead.PID, dead.Host)}, nil
	})
}

// ExpireStale takes back the claims whose lease ran out (a host that died
// stops renewing them): the tasks go back to pending for any host.
func (g *Engine) ExpireStale() error {
	tx, err := g.Store.View(g.Feature)
	if err != nil {
		return err
	}
	ws, err := tx.Workers()
	if err != nil {
		return err
	}
	now := g.Time()
	stale := false
	for _, w := range ws {
		if !now.Before(w.Expires) {
			stale = true
		}
	}
	if !stale {
		return nil
	}
	var names []string
	err = g.Store.Update(g.Context(), g.Feature, g.Time, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		if err := CheckStateAt(g.Context(), g.Store, g.Feature, tx.Tip()); err != nil {
			return nil, err
		}
		x := &txn{tx: tx, now: g.Time().UTC(), policy: g.Policy(), ttl: g.TTL()}
		names, err = x.expireLeases()
		if err != nil || len(names) == 0 {
			return nil, err
		}
		sort.Strings(names)
		return &gitstore.Message{Subject: "expire leases: " + strings.Join(names, ", "), Op: state.OpExpire, Reason: "leases ran out"}, nil
	})
	if err == nil && len(names) > 0 {
		g.Note("took back the claims of %s: their leases ran out", strings.Join(names, ", "))
	}
	return err
}

// deadHolder: the claim was made by a rush of self, this clone's host,
// that is gone, whatever way it ended (its marker may be gone with it). A
// claim of another clone under this one's name is not this clone's to take.
func deadHolder(self gitstore.HostIdentity, w *state.Worker) bool {
	return self.Holds(w) && w.PID > 0 && w.PID != os.Getpid() && !rushmarker.ClaimHolderAlive(self, w)
}

// BlockConflict takes a verified task whose work conflicts in the level
// merge out of it: verified → blocked with reason, its locks released
// (retry runs it again). A task no longer verified with that commit is
// left as it is.
func (g *Engine) BlockConflict(task, commit, reason string) error {
	return g.blockAtMerge(task, commit, reason, "conflict")
}

// BlockGatesFailed blocks a task verified with commit whose work, merged
// onto a staging that passed, made the quality gates fail.
func (g *Engine) BlockGatesFailed(task, commit, reason string) error {
	return g.blockAtMerge(task, commit, reason, "gates failed")
}

// blockAtMerge moves a task verified with commit to blocked in the merge,
// with reason, its locks released; the subject says what (a conflict, not
// verified here). A task no longer verified with that commit is left.
func (g *Engine) blockAtMerge(id, commit, reason, what string) error {
	s, feature, policy := g.Store, g.Feature, g.Policy()
	err := s.Update(g.Context(), feature, g.Time, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		if err := CheckStateAt(g.Context(), s, feature, tx.Tip()); err != nil {
			return nil, err
		}
		x := &txn{tx: tx, now: g.Time().UTC(), policy: policy}
		t, err := tx.Task(id)
		if err != nil {
			return nil, err
		}
		if t.Status != state.Verified || t.Commit != commit {
			return nil, nil
		}
		t = t.Clone()
		t.Record(x.event(state.OpMerge, state.Blocked, t.Worker, reason, commit))
		t.Reason = reason
		if err := x.releaseLocks(t); err != nil {
			return nil, err
		}
		return &gitstore.Message{Subject: fmt.Sprintf("merge %s: %s", t.ID(), what), Op: state.OpMerge, Task: t.ID(),
			From: string(state.Verified), To: string(state.Blocked), Reason: reason}, tx.Put(t)
	})
	if err != nil {
		return err
	}
	g.Transition(id, "blocked: "+reason)
	return nil
}
