package engine

import (
	"time"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
)

// txn is the context of one state transaction: the store's transaction,
// the clock and the policy. Its helpers apply what the gates allowed.
type txn struct {
	tx     *gitstore.Tx
	now    time.Time
	policy gates.Policy
	ttl    time.Duration
}

func (x *txn) event(op state.Op, to state.Status, worker, reason, commit string) state.Event {
	// Every event of one transaction carries the clock of its commit.
	return state.Event{Clock: x.tx.Clock() + 1, At: x.now, Op: op, To: to, Worker: worker, Reason: reason, Commit: commit}
}

// statusOf reads dependency states lazily: a claim of one task reads only
// its own dependencies, whatever the size of the graph.
func (x *txn) statusOf(id string) state.Status {
	t, err := x.tx.Task(id)
	if err != nil {
		return ""
	}
	return t.Status
}

// expireLeases takes back the claims of workers whose lease ran out: the
// task returns to pending, and the expiry counts as a failed attempt.
// Returns the workers expired.
func (x *txn) expireLeases() ([]string, error) {
	ws, err := x.tx.Workers()
	if err != nil {
		return nil, err
	}
	var expired []string
	for name, w := range ws {
		if x.now.Before(w.Expires) {
			continue
		}
		expired = append(expired, name)
		if err := x.tx.DeleteWorker(name); err != nil {
			return nil, err
		}
		t, err := x.tx.Task(w.Task)
		if err != nil || t.Status != state.Claimed || t.Worker != name {
			continue
		}
		t = t.Clone()
		if t.Attempts < x.policy.MaxAttempts {
			t.Record(x.event(state.OpExpire, state.Pending, name, "lease expired", ""))
			t.NotBefore = x.now.Add(x.policy.BackoffAfter(t.ID(), t.Attempts))
		} else {
			t.Record(x.event(state.OpExpire, state.Failed, name, "lease expired", ""))
			t.Record(x.event(state.OpBlock, state.Blocked, name, "attempts exhausted", ""))
		}
		t.Reason = "lease of " + name + " expired"
		if t.Status == state.Pending {
			t.Worker, t.Owner = "", ""
		}
		if err := x.tx.Put(t); err != nil {
			return nil, err
		}
		if err := x.releaseLocks(t); err != nil {
			return nil, err
		}
	}
	return expired, nil
}

// releaseLocks drops the task's locks (and any expired lock on the way,
// since every write cleans up expired locks).
func (x *txn) releaseLocks(t *state.Task) error {
	locks, err := x.tx.Locks()
	if err != nil {
		return err
	}
	keep := make([]state.Lock, 0, len(locks))
	changed := false
	for _, l := range locks {
		if (l.Task == t.ID() && l.Feature == x.tx.Feature()) || !l.Active(x.now) {
			changed = true
			continue
		}
		keep = append(keep, l)
	}
	if changed {
		x.tx.SetLocks(keep)
	}
	return nil
}

// takeLocks locks the task's owned paths for owner until the lease ends.
func (x *txn) takeLocks(t *state.Task, owner string, until time.Time) error {
	paths := t.Spec.Owned()
	if len(paths) == 0 {
		return nil
	}
	locks, err := x.tx.Locks()
	if err != nil {
		return err
	}
	keep := make([]state.Lock, 0, len(locks)+len(paths))
	for _, l := range locks {
		if l.Active(x.now) {
			keep = append(keep, l)
		}
	}
	for _, p := range paths {
		keep = append(keep, state.Lock{Path: p, Owner: owner, Reason: t.ID(), Feature: x.tx.Feature(), Task: t.ID(), Created: x.now, Expires: until})
	}
	x.tx.SetLocks(keep)
	return nil
}

// activeLocks are the locks not yet expired at now.
func activeLocks(locks []state.Lock, now time.Time) []state.Lock {
	var out []state.Lock
	for _, l := range locks {
		if l.Active(now) {
			out = append(out, l)
		}
	}
	return out
}
