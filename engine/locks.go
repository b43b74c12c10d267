package engine

import (
	"fmt"
	"strings"
	"time"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

// Lock takes manual locks on paths for owner until ttl from now; a path
// the owner already holds is renewed. Another owner's active lock on an
// overlapping path refuses them all.
func (g *Engine) Lock(paths []string, owner, reason string, ttl time.Duration) ([]state.Lock, error) {
	var taken []state.Lock
	err := g.Store.Update(g.Context(), "", g.Time, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		now := g.Time().UTC()
		locks, err := tx.Locks()
		if err != nil {
			return nil, err
		}
		var why []string
		for _, p := range paths {
			if err := gates.Lock(p, owner, locks, now); err != nil {
				why = append(why, err.(*gates.Refusal).Reasons...)
			}
		}
		if len(why) > 0 {
			return nil, RefusedError("lock refused", strings.Join(why, "; "))
		}
		keep := activeLocks(locks, now)
		taken = nil
		for _, p := range paths {
			// Re-locking one's own path renews it.
			kept := keep[:0]
			for _, l := range keep {
				if !(l.Path == p && l.Owner == owner) {
					kept = append(kept, l)
				}
			}
			keep = kept
			l := state.Lock{Path: p, Owner: owner, Reason: reason, Created: now, Expires: now.Add(ttl)}
			keep = append(keep, l)
			taken = append(taken, l)
		}
		tx.SetLocks(keep)
		return &gitstore.Message{Subject: "lock " + strings.Join(paths, " "), Op: state.OpLock, Worker: owner, Reason: reason}, nil
	})
	if err != nil {
		return nil, err
	}
	return taken, nil
}

// Unlock drops the locks on paths. Another owner's lock needs force; the
// broken ones are returned ("<path> held by <owner>") and recorded.
func (g *Engine) Unlock(paths []string, who string, force bool) ([]string, error) {
	var broken []string
	err := g.Store.Update(g.Context(), "", g.Time, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		now := g.Time().UTC()
		locks, err := tx.Locks()
		if err != nil {
			return nil, err
		}
		want := map[string]bool{}
		for _, p := range paths {
			want[p] = true
		}
		found := map[string]bool{}
		broken = nil
		var keep []state.Lock
		for _, l := range locks {
			if !l.Active(now) {
				continue
			}
			if !want[l.Path] {
				keep = append(keep, l)
				continue
			}
			if err := gates.Unlock(l, who, force, now); err != nil {
				// One line naming the path once: the refusal has no task.
				if r, ok := err.(*gates.Refusal); ok {
					return nil, RefusedError("unlock "+l.Path+" refused", strings.Join(r.Reasons, "; "))
				}
				return nil, err
			}
			found[l.Path] = true
			if l.Owner != who {
				broken = append(broken, fmt.Sprintf("%s held by %s", l.Path, l.Owner))
			}
		}
		for _, p := range paths {
			if !found[p] {
				return nil, UsageError("%s is not locked", p)
			}
		}
		tx.SetLocks(keep)
		msg := &gitstore.Message{Subject: "unlock " + strings.Join(paths, " "), Op: state.OpUnlock, Worker: who}
		if len(broken) > 0 {
			msg.Subject = "unlock --force " + strings.Join(paths, " ")
			msg.Reason = "broken by " + who + ": " + strings.Join(broken, ", ")
		}
		return msg, nil
	})
	if err != nil {
		return nil, err
	}
	return broken, nil
}

// CheckPaths validates the paths given to lock or unlock: each a valid
// repository path, none twice.
func CheckPaths(paths []string) error {
	seen := map[string]bool{}
	for _, p := range paths {
		if err := levels.CheckPath(p); err != nil {
			return UsageError("bad path %q (%v)", p, err)
		}
		if seen[p] {
			return UsageError("path %q given twice", p)
		}
		seen[p] = true
	}
	return nil
}

// CheckLock validates what lock is given before anything is read: the
// paths, and a lease that is not negative.
func CheckLock(paths []string, ttl time.Duration) error {
	if err := CheckPaths(paths); err != nil {
		return err
	}
	if ttl < 0 {
		return UsageError("--ttl must be positive")
	}
	return nil
}

// LockAs takes manual locks on paths for worker on this host, else (worker
// "") the user, for ttl, else the configured lease.
func (g *Engine) LockAs(worker string, paths []string, reason string, ttl time.Duration) ([]state.Lock, error) {
	owner, err := g.lockOwner(worker)
	if err != nil {
		return nil, err
	}
	return g.Lock(paths, owner, reason, g.lockTTL(ttl))
}

// UnlockAs drops the locks on paths as worker (or the user), as Unlock.
func (g *Engine) UnlockAs(worker string, paths []string, force bool) ([]string, error) {
	who, err := g.lockOwner(worker)
	if err != nil {
		return nil, err
	}
	return g.Unlock(paths, who, force)
}

// lockOwner is who takes or removes a lock by hand: the worker on this
// host, as claim and done name it, else (worker "") the user.
func (g *Engine) lockOwner(worker string) (string, error) {
	if worker == "" {
		return g.UserIdentity(), nil
	}
	if err := CheckWorker(worker); err != nil {
		return "", err
	}
	return Owner(g.Store.Host(), worker), nil
}

// lockTTL is the lease of a manual lock: ttl, else the configured one.
func (g *Engine) lockTTL(ttl time.Duration) time.Duration {
	if ttl == 0 && g.Config != nil {
		return time.Duration(g.Config.Locks.TTL)
	}
	return ttl
}

// Locks are the active locks of the repository, manual and claimed.
func (g *Engine) Locks() ([]state.Lock, error) {
	tx, err := g.Store.View("")
	if err != nil {
		return nil, err
	}
	all, err := tx.Locks()
	if err != nil {
		return nil, err
	}
	return activeLocks(all, g.Time()), nil
}
