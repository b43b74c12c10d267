package gitstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/git-zerg/git-zerg/gitstore/refs"
)

// Drop closes the pack files a store keeps open, for a store of one task
// or one look that is used no more. Unlike Close it leaves the
// update-ref process the repository's stores share.
func (s *Store) Drop() error {
	s.db.DropPacks()
	return nil
}

// Close ends the long-lived `git update-ref --stdin` of a Persistent
// store, so that no git process outlives the command.
func (s *Store) Close() error { return s.refs.ClosePipe() }

// Update runs fn in a transaction on feature ("" for locks only) and
// commits what it changed, retrying from a fresh read when another writer
// moved the refs meanwhile. fn must be repeatable: it may run several
// times, and it returns the message describing the change, or nil when it
// changed nothing.
func (s *Store) Update(ctx context.Context, feature string, now func() time.Time, fn func(tx *Tx) (*Message, error)) error {
	return s.update(ctx, feature, false, now, fn)
}

// Create is Update for a feature that must not exist yet (or may, with
// force, be replaced); fn calls tx.Init.
func (s *Store) Create(ctx context.Context, feature string, force bool, now func() time.Time, fn func(tx *Tx) (*Message, error)) error {
	return s.update(ctx, feature, !force, now, func(tx *Tx) (*Message, error) {
		tx.create = true
		return fn(tx)
	})
}

// ProcessLock serializes the transactions of the stores of s's Repo (see
// Repo.txMu). Update takes it; a layer above holds it to move refs between
// transactions without racing them (an arbiter's catch-up) and must not
// call Update meanwhile.
func (s *Store) ProcessLock() *sync.Mutex { return &s.repo.txMu }

// MoveRefs moves refs in one compare-and-swap transaction, as a
// transaction's commit does (refs.ErrRace: one moved first), for the layer
// above that merges state from elsewhere into the local refs or makes a
// Publisher's moves here (gitstore/remotes). A state change is a Tx
// (Update), never this.
func (s *Store) MoveRefs(ctx context.Context, us []refs.Update) error { return s.updateRefs(ctx, us) }

// writerTurnWait bounds the wait for a turn among this machine's writers
// (see writerTurn): many transactions' worth, and well inside the retry
// budget.
const writerTurnWait = 5 * time.Second

func (s *Store) update(ctx context.Context, feature string, mustBeNew bool, now func() time.Time, fn func(tx *Tx) (*Message, error)) error {
	mu := s.ProcessLock()
	mu.Lock()
	defer mu.Unlock()
	defer s.writerTurn(min(s.Retry, writerTurnWait))()
	return s.updateLocked(ctx, feature, mustBeNew, now, fn)
}

// updateLocked is update with the process's lock held.
func (s *Store) updateLocked(ctx context.Context, feature string, mustBeNew bool, now func() time.Time, fn func(tx *Tx) (*Message, error)) error {
	var held heldPacks
	defer held.Release(s.db)
	deadline := time.Now().Add(s.Retry)
	wait := time.Millisecond
	for {
		var view Lease
		if s.publisher != nil {
			var err error
			// A catch-up whose local update lost its race leaves the
			// attempt to find out what won.
			if view, err = s.publisher.Lease(ctx, feature); err != nil && !errors.Is(err, errRace) {
				return err
			}
		}
		if err := s.repairAll(ctx, feature); err != nil && !errors.Is(err, errRace) {
			return err
		}
		tx, err := s.begin(feature)
		if err != nil {
			return err
		}
		if err := s.lacksUpdates(ctx, tx); err != nil {
			// An update git undid is not in what was read: the repair lost
			// its compare-and-swap, or git undid one after it. Building on
			// this state would make this transition win over the undone one
			// when it is merged back (a writer's own last update among
			// them), so the repair goes again first.
			if time.Now().After(deadline) {
				return fmt.Errorf("%w (%v)", ErrContention, err)
			}
			time.Sleep(time.Duration(rand.Int64N(int64(wait))) + 200*time.Microsecond)
			if wait < 64*time.Millisecond {
				wait *= 2
			}
			continue
		}
		tx.view = view
		if mustBeNew && tx.root != nil {
			return fmt.Errorf("feature %q: %w", feature, ErrExists)
		}
		msg, err := fn(tx)
		if errors.Is(err, errAgain) {
			continue
		}
		if err != nil {
			return err
		}
		if msg == nil || !tx.dirty() {
			return nil
		}
		tx.held = &held
		err = tx.commit(ctx, msg, now())
		if !errors.Is(err, errRace) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w (%v)", ErrContention, err)
		}
		// Full jitter keeps racing processes from retrying in lockstep.
		time.Sleep(time.Duration(rand.Int64N(int64(wait))) + 200*time.Microsecond)
		if wait < 64*time.Millisecond {
			wait *= 2
		}
	}
}

// View opens a read-only transaction: a consistent snapshot of the feature
// ("" for the locks alone) as of now.
func (s *Store) View(feature string) (*Tx, error) {
	tx, err := s.begin(feature)
	if err != nil {
		return nil, err
	}
	tx = s.healed(tx)
	if feature != "" && tx.root == nil {
		return nil, fmt.Errorf("feature %q: %w", feature, ErrNotFound)
	}
	return tx, nil
}
