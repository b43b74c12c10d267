package gitstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore/reflog"
	"github.com/git-zerg/git-zerg/gitstore/refs"
	"github.com/git-zerg/git-zerg/state"
)

// git 2.39's `pack-refs --all`, run concurrently with updates, can put a
// ref back to the value it packed a moment earlier, undoing an update that
// succeeded in between; a compare-and-swap made against the undone value
// then succeeds too, building on it. Measured with git alone (4 writers,
// one pack-refs loop): 11 of 178 acknowledged updates undone. git gc runs
// pack-refs, so this happens in real repositories.
//
// The reflog is the record: git appends every update to it, under the
// ref's lock and before the ref moves; pack-refs never touches it, and gc
// keeps its commits. In the reflog an undone update shows as a break of
// the chain: the next entry does not start from the value the last one
// set, or the ref is not at the last value set. (A move that is logged,
// such as `git update-ref` by hand, was made on purpose and stands; fsck
// has its own check for those.) Before each transaction (and each read of
// the state) the entries added since the last check are followed; every
// value at a break that the ref no longer contains is merged back, with
// the deterministic merge sync uses: a task both sides changed goes to the
// earlier transition, and the other holder's next check finds its claim
// lost.
//
// Finding the breaks, and remembering how far each reflog was checked, is
// gitstore/reflog's, which reads no objects; whether the ref still
// contains a value at a break is asked here, of the objects.

// ReflogMessage names git-zerg's own updates in the reflog, for whoever
// reads it to tell them from other moves of the ref.
const ReflogMessage = refs.ReflogMessage

// lostCommits returns the values the reflog records for ref that its tip
// no longer contains (newest first), and the check to keep when there
// are none.
func (s *Store) lostCommits(ctx context.Context, ref string, tip plumbing.Hash) (lost []plumbing.Hash, sc reflog.Scan, err error) {
	sc, err = s.repo.reflogs.Scan(ref, tip)
	if err != nil {
		return nil, sc, err
	}
	for _, c := range sc.Breaks {
		if !s.hasObject(c) && !s.gitHasObject(ctx, c) {
			continue // pruned long ago: nothing left to restore
		}
		in, err := s.IsAncestor(ctx, c, tip)
		if err != nil {
			return nil, sc, err
		}
		if !in {
			lost = append(lost, c)
		}
	}
	return lost, sc, nil
}

// check is lostCommits, keeping the checkpoint when nothing is lost.
func (s *Store) check(ctx context.Context, ref string, tip plumbing.Hash) ([]plumbing.Hash, error) {
	lost, sc, err := s.lostCommits(ctx, ref, tip)
	if err == nil && len(lost) == 0 {
		s.repo.reflogs.Keep(sc, s.writeCache)
	}
	return lost, err
}

// repair merges back into ref every update its reflog records that the
// ref lost, and reports whether it moved the ref.
func (s *Store) repair(ctx context.Context, ref string) (bool, error) {
	tip, err := s.ReadRef(ref)
	if err != nil {
		return false, err
	}
	lost, err := s.check(ctx, ref, tip)
	if err != nil || len(lost) == 0 {
		return false, err
	}
	next := tip
	for _, c := range lost {
		// A newer lost value usually contains the older ones.
		if in, err := s.IsAncestor(ctx, c, next); err != nil {
			return false, err
		} else if in {
			continue
		}
		if next, err = s.mergeBack(ctx, ref, next, c); err != nil {
			return false, err
		}
	}
	if err := s.updateRefs(ctx, []refUpdate{{Name: ref, New: next, Old: tip}}); err != nil {
		return false, err
	}
	return true, nil
}

func (s *Store) mergeBack(ctx context.Context, ref string, tip, lost plumbing.Hash) (plumbing.Hash, error) {
	subject := fmt.Sprintf("repair: merge back %s, undone by a concurrent ref update", short(lost))
	var res MergeResult
	var err error
	if feature, ok := strings.CutPrefix(ref, FeaturePrefix); ok {
		res, err = s.mergeFeature(ctx, feature, tip, lost, fmt.Sprintf("repair %s: merge back %s, undone by a concurrent ref update", feature, short(lost)))
	} else {
		res, err = s.mergeLocks(ctx, tip, lost, s.currentHolders(ctx), subject)
	}
	return res.Commit, err
}

// currentHolders keeps a lock while its task, in its feature's state as
// repaired now, is held by the lock's owner: after a double claim merged
// back, the loser's locks go with its claim.
func (s *Store) currentHolders(ctx context.Context) func(state.Lock) bool {
	tips := map[string]plumbing.Hash{}
	var keep func(state.Lock) bool
	return func(l state.Lock) bool {
		if l.Feature == "" || l.Task == "" {
			return true
		}
		if _, ok := tips[l.Feature]; !ok {
			ref := FeatureRef(l.Feature)
			if _, err := s.repair(ctx, ref); err != nil {
				return true
			}
			h, err := s.ReadRef(ref)
			if err != nil || h.IsZero() {
				return true
			}
			tips[l.Feature] = h
			keep = s.LockKeeper(tips)
		}
		return keep(l)
	}
}

// repairAll repairs the refs a transaction on feature reads (see repair).
func (s *Store) repairAll(ctx context.Context, feature string) error {
	if feature != "" {
		if _, err := s.repair(ctx, FeatureRef(feature)); err != nil {
			return err
		}
	}
	_, err := s.repair(ctx, LocksRef)
	return err
}

// healed returns tx, or when its refs lack an update git undid, a new
// read after the repair: the state read must hold every update
// acknowledged. The repair's compare-and-swap can lose to the very
// pack-refs or writer that caused the loss, so it is tried a few times;
// after that a read goes on with what it found (a read-only repository,
// a ref held locked), and the next writer repairs it.
func (s *Store) healed(tx *Tx) *Tx {
	ctx := context.Background()
	wait := time.Millisecond
	for attempt := 0; attempt < healAttempts; attempt++ {
		lost, err := s.check(ctx, LocksRef, tx.locksTip)
		if err == nil && len(lost) == 0 && tx.feature != "" {
			lost, err = s.check(ctx, FeatureRef(tx.feature), tx.featTip)
		}
		if err != nil || len(lost) == 0 {
			return tx
		}
		if s.repairAll(ctx, tx.feature) == nil {
			if again, err := s.begin(tx.feature); err == nil {
				tx = again
			}
			continue // check the new read: another update may be undone
		}
		healWait(time.Duration(rand.Int64N(int64(wait))) + 200*time.Microsecond)
		wait *= 2
	}
	return tx
}

// healWait is the pause between a read's repairs; tests use it to end
// the contention instead of letting time pass.
var healWait = time.Sleep

// healAttempts bounds a read's repairs: with the waits between them about
// 30 ms in all, longer than a pack-refs holds its lock.
const healAttempts = 6

// lacksUpdates says what of the refs tx read misses an update their
// reflogs record (nil when nothing): a transaction must not build on such a
// state. Not only the last update counts: git can undo several in a row,
// and a compare-and-swap against the undone value then succeeds.
func (s *Store) lacksUpdates(ctx context.Context, tx *Tx) error {
	lacks := func(ref string, tip plumbing.Hash) error {
		lost, err := s.check(ctx, ref, tip)
		if err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		if len(lost) > 0 {
			return fmt.Errorf("%s lacks %s, undone by a concurrent ref update", ref, short(lost[0]))
		}
		return nil
	}
	if tx.feature != "" {
		if err := lacks(FeatureRef(tx.feature), tx.featTip); err != nil {
			return err
		}
	}
	return lacks(LocksRef, tx.locksTip)
}

// Rollback is an update a state ref's reflog records whose commit the ref
// no longer contains, undone without a trace of its own (a concurrent git
// pack-refs) and not merged back yet. A move the reflog records (git
// update-ref by hand) is not one.
type Rollback struct {
	Ref     string
	Commit  plumbing.Hash // the value the update set
	Old     plumbing.Hash // the value it replaced
	When    time.Time     // when the update was made, to the second
	Subject string        // the commit's subject: the transition undone
}

// Rollbacks lists the undone updates of a feature's state ref, or of the
// locks ref for feature "", oldest first. It reads the whole reflog and
// changes nothing: the next transaction (or read) merges them back.
func (s *Store) Rollbacks(feature string) ([]Rollback, error) {
	ref := LocksRef
	if feature != "" {
		ref = FeatureRef(feature)
	}
	return s.RollbacksOf(ref)
}

// RollbacksOf is Rollbacks for any ref with a reflog.
func (s *Store) RollbacksOf(ref string) ([]Rollback, error) {
	tip, err := s.ReadRef(ref)
	if err != nil || tip.IsZero() {
		return nil, err
	}
	entries, err := reflog.Read(s.CommonDir, ref)
	if err != nil || len(entries) == 0 {
		return nil, err
	}
	cands := reflog.Breaks(plumbing.ZeroHash, entries, tip)
	if len(cands) == 0 {
		return nil, nil
	}
	// What the values at the breaks hold that the tip lacks, in one walk
	// of git's: every transition undone, not only the last of a run.
	var in strings.Builder
	for _, c := range cands {
		in.WriteString(c.String() + "\n")
	}
	in.WriteString("^" + tip.String() + "\n")
	out, err := s.git.RunWith(context.Background(), gitcmd.Call{Stdin: strings.NewReader(in.String())}, "rev-list", "--ignore-missing", "--stdin")
	if err != nil {
		return nil, fmt.Errorf("%s: list undone updates: %w", ref, err)
	}
	unreachable := map[plumbing.Hash]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); plumbing.IsHash(l) {
			unreachable[plumbing.NewHash(l)] = true
		}
	}
	var rbs []Rollback
	listed := map[plumbing.Hash]bool{}
	for _, e := range entries {
		if !unreachable[e.New] || listed[e.New] {
			continue
		}
		listed[e.New] = true
		rb := Rollback{Ref: ref, Commit: e.New, Old: e.Old, When: e.When}
		if c, err := s.readCommit(e.New); err == nil {
			rb.Subject, _, _ = strings.Cut(c.Message, "\n")
		}
		rbs = append(rbs, rb)
	}
	return rbs, nil
}

// gitHasObject asks git whether the object exists. The in-process answer
// can say no for a moment while `git repack -a -d` replaces the packs
// under it; taken for "pruned long ago", that no would let the check pass
// an undone update by for good.
func (s *Store) gitHasObject(ctx context.Context, h plumbing.Hash) bool {
	_, err := s.git.Run(ctx, "cat-file", "-e", h.String())
	return err == nil
}

// DamagedError: a state ref reaches an object the repository no longer
// has. git-zerg keeps the objects of every update it acknowledges (see
// confirmWritten); this is what is left when something else deleted
// them: a `git prune --expire=now` run by hand beside an update, a
// deleted file. Nothing can bring back what the lost objects held, so
// the state is not moved on a guess: the hint names the state to go back
// to, the newest one the ref's reflog records whose every object exists,
// and the git command that does it.
type DamagedError struct {
	Ref string
	Tip plumbing.Hash
	// Missing says what is missing, as far as the failed read tells.
	Missing string
	Err     error // the read that failed
	// Restore is the state to go back to, zero when the reflog has none.
	Restore plumbing.Hash
}

func (e *DamagedError) Error() string { return e.What() + " (" + e.Why() + ")" }
func (e *DamagedError) Unwrap() error { return e.Err }

// What names the damaged state.
func (e *DamagedError) What() string {
	if f, ok := strings.CutPrefix(e.Ref, FeaturePrefix); ok {
		return fmt.Sprintf("the state of feature %s is damaged", f)
	}
	return fmt.Sprintf("the state in %s is damaged", e.Ref)
}

// Why says what is missing, and what deletes such objects.
func (e *DamagedError) Why() string {
	return e.Missing + ": deleted by git prune or git gc --prune=now beside an update, or lost"
}

// Hint is the command that repairs it.
func (e *DamagedError) Hint() string {
	if e.Restore.IsZero() {
		return fmt.Sprintf("no complete state is left in its reflog: fetch it from a clone that has it (git fetch REMOTE +%s:%s) or remove it (git update-ref -d %s)", e.Ref, e.Ref, e.Ref)
	}
	return fmt.Sprintf("go back to its last complete state, %s (what came after it is lost): git update-ref -m 'restore: objects missing' %s %s %s", short(e.Restore), e.Ref, e.Restore, e.Tip)
}

// Damaged turns err, from a read of the state at tip of ref, into a
// DamagedError when an object the state needs is missing: our reader
// found one missing, or git failed on the history and finds one missing
// when asked. Other errors are returned as they are. Only for reads of
// the state itself: a worker's commit may be missing for good reasons
// (not fetched yet).
func (s *Store) Damaged(ctx context.Context, ref string, tip plumbing.Hash, err error) error {
	var de *DamagedError
	var ge *gitcmd.Error
	if err == nil || tip.IsZero() || errors.As(err, &de) {
		return err
	}
	missing := ""
	switch {
	case !s.hasObject(tip) && !s.gitHasObject(ctx, tip):
		missing = fmt.Sprintf("its commit %s is missing", tip)
	case errors.Is(err, ErrMissingObject):
		missing = err.Error()
	case errors.As(err, &ge) && !s.complete(ctx, tip):
		missing = "an object of its history is missing (" + ge.Error() + ")"
	default:
		return err
	}
	return &DamagedError{Ref: ref, Tip: tip, Missing: missing, Err: err, Restore: s.lastComplete(ctx, ref, tip)}
}

// complete reports whether every object of commit c's history exists.
// git rather than our reader: it reads every object, and stops at the
// first one missing.
func (s *Store) complete(ctx context.Context, c plumbing.Hash) bool {
	_, err := s.git.Run(ctx, "rev-list", "--objects", "--quiet", c.String())
	return err == nil
}

// restoreCandidates bounds the states of the reflog looked at: each look
// is a walk of the whole history.
const restoreCandidates = 20

// lastComplete is the newest value the ref's reflog records whose every
// object, history included, exists (zero when none).
func (s *Store) lastComplete(ctx context.Context, ref string, tip plumbing.Hash) plumbing.Hash {
	entries, err := reflog.Read(s.CommonDir, ref)
	if err != nil {
		return plumbing.ZeroHash
	}
	seen := map[plumbing.Hash]bool{tip: true, plumbing.ZeroHash: true}
	looked := 0
	for i := len(entries) - 1; i >= 0 && looked < restoreCandidates; i-- {
		for _, c := range []plumbing.Hash{entries[i].New, entries[i].Old} {
			if seen[c] {
				continue
			}
			seen[c] = true
			looked++
			if s.complete(ctx, c) {
				return c
			}
		}
	}
	return plumbing.ZeroHash
}

// damaged is Damaged for a read of this transaction's feature state.
func (tx *Tx) damaged(err error) error {
	return tx.s.Damaged(context.Background(), FeatureRef(tx.feature), tx.featTip, err)
}

// locksDamaged is Damaged for a read of the locks it began with.
func (tx *Tx) locksDamaged(err error) error {
	return tx.s.Damaged(context.Background(), LocksRef, tx.locksTip, err)
}
