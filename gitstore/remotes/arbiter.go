package remotes

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/gitstore/refs"
	"github.com/git-zerg/git-zerg/lazy"
)

// With an arbiter (sync.arbiter), a transition counts only once the
// arbiter remote has it: before each attempt the store catches up with the
// remote's state, and after the local compare-and-swap it pushes with a
// lease on the values it caught up with. A push that loses undoes the
// local commit and the attempt starts over, so two machines can never hold
// the same task or lock at once.

// SetArbiter makes every state update of s go through remote, with check
// judging the state each catch-up brings in (the engine's replay of the
// history with the gates, as sync does); with a nil check, a catch-up that
// would bring in anything new fails. It installs the arbiter as s's
// Publisher ("" removes it); what SetArbiterWait and SetRepushPins set for
// s stays.
func SetArbiter(s *gitstore.Store, remote string, check IncomingCheck) {
	old := arbiterOf(s)
	if remote == "" {
		s.SetPublisher(nil)
		return
	}
	a := &arbiter{store: wrap(s), remote: remote, check: check}
	if old != nil {
		a.wait, a.repushPins = old.wait, old.repushPins
	}
	s.SetPublisher(a)
}

// remoteArbiter is the remote every update of s goes through (SetArbiter), ""
// for none.
func remoteArbiter(s *gitstore.Store) string {
	if a := arbiterOf(s); a != nil {
		return a.remote
	}
	return ""
}

// Reopen is s.Reopen with s's arbiter, and no check of what its catch-ups
// bring in (each feature of an epic's rush).
func Reopen(ctx context.Context, s *gitstore.Store) (*gitstore.Store, error) {
	n, err := s.Reopen(ctx)
	if err != nil {
		return nil, err
	}
	SetArbiter(n, remoteArbiter(s), nil)
	return n, nil
}

func arbiterOf(s *gitstore.Store) *arbiter {
	a, _ := s.Publisher().(*arbiter)
	return a
}

// arbiter is the Publisher of a store with an arbiter: what the store's
// transactions see of this layer. Like its store, it is used by one
// goroutine at a time.
type arbiter struct {
	store
	remote string
	// check judges the state a catch-up brings in; wait is how long an
	// update waits for the arbiter (0: RemoteWait); repushPins: see
	// SetRepushPins.
	check      IncomingCheck
	wait       time.Duration
	repushPins bool
}

// Remote is the arbiter: transitions share a push only to the same one.
func (s *arbiter) Remote() string { return s.remote }

// Lease is what the arbiter was last seen to hold, when that is still
// what this process knows of it (fresh), else what a catch-up brings.
func (s *arbiter) Lease(ctx context.Context, feature string) (gitstore.Lease, error) {
	if v, ok := s.fresh(feature); ok {
		return v, nil
	}
	return s.catchUp(ctx, feature)
}

// Publish pushes the moves with a lease on l, then makes them here.
func (s *arbiter) Publish(ctx context.Context, feature string, l gitstore.Lease, moves []refs.Update, also []gitstore.RefMove) error {
	return s.publish(ctx, feature, l, moves, also)
}

// SetArbiterWait sets how long an update of s waits for an arbiter that
// does not answer (RemoteWait when zero); nothing without an arbiter.
func SetArbiterWait(s *gitstore.Store, d time.Duration) {
	if a := arbiterOf(s); a != nil {
		a.wait = d
	}
}

func (s *arbiter) remoteWait() time.Duration {
	if s.wait > 0 {
		return s.wait
	}
	return RemoteWait
}

var remoteNameRe = &lazy.Value[*regexp.Regexp]{Build: func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`) }} // compiled on first use, not at every start

// trackingPrefix is where a remote's zerg refs are fetched: a namespace of
// their own, so that fetching never touches local state.
func trackingPrefix(remote string) string {
	name := remote
	if !remoteNameRe.Get().MatchString(remote) || strings.Contains(remote, "..") {
		sum := sha1.Sum([]byte(remote))
		name = "url-" + hex.EncodeToString(sum[:6])
	}
	return "refs/zerg-remotes/" + name + "/"
}

// arbiterView is what catching up saw on the arbiter.
type arbiterView = gitstore.Lease

// RemoteWait bounds how long an update waits for an arbiter that does not
// answer, trying again with backoff, before it fails, unless the store says
// otherwise (SetArbiterWait: rush.remote_wait).
var RemoteWait = 10 * time.Minute

// OnRemoteWait sets what is told, each time an update of one of r's stores
// waits for an arbiter that does not answer: why, and for how long before
// the next try.
func OnRemoteWait(r *gitstore.Repo, f func(remote string, err error, wait time.Duration)) {
	sharedOf(r).remoteWaitNote.Store(&f)
}

// OnRemoteLost sets what is told of each ref an arbiter had lost: here
// is true when one of r's stores re-created it from this clone's state,
// false when a catch-up found it re-created by another clone.
func OnRemoteLost(r *gitstore.Repo, f func(remote, ref string, here bool)) {
	sharedOf(r).remoteLostNote.Store(&f)
}

func (s store) noteRecreated(remote string, refs []string, here bool) {
	if f := s.repo.remoteLostNote.Load(); f != nil {
		for _, ref := range refs {
			(*f)(remote, ref, here)
		}
	}
}

// catchUp is a SyncRound in arbiter mode: the feature and the locks
// fetched from the arbiter, checked and merged into the local refs. When
// someone listens (OnRemoteWait: a rush), an arbiter that does not answer
// is tried again with backoff, up to RemoteWait: nothing is decided
// without it. A one-off command fails at once instead.
func (s *arbiter) catchUp(ctx context.Context, feature string) (arbiterView, error) {
	deadline := time.Now().Add(s.remoteWait())
	wait := 250 * time.Millisecond
	for {
		v, err := s.catchUpOnce(ctx, feature)
		var re *RemoteError
		f := s.repo.remoteWaitNote.Load()
		if f == nil || !errors.As(err, &re) || time.Now().Add(wait).After(deadline) {
			return v, err
		}
		(*f)(s.remote, re.Err, wait)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return v, err
		}
		wait = min(wait*2, 5*time.Second)
	}
}

// shared.seen remembers, for each arbiter and feature, what this process
// last knew the arbiter to hold (caught up with, or pushed
// itself) and where the local refs were then. While the local refs are
// still there, an update skips the catch-up and pushes at once with a
// lease on those values: the lease refuses the push if the arbiter moved
// meanwhile, and the update then catches up and starts over. A rush's
// transitions thus cost one push instead of a fetch and a push, and
// nothing is decided on a state the arbiter no longer holds. A one-off
// command knows nothing yet and always catches up first.

func (s *arbiter) seenKey(feature string) arbiterKey { return arbiterKey{s.remote, feature} }

// fresh returns what the arbiter holds, when this process knows it
// without asking: the local refs are where they were when it last knew.
func (s *arbiter) fresh(feature string) (arbiterView, bool) {
	r := s.repo
	r.mu.Lock()
	sn, ok := r.seen[s.seenKey(feature)]
	r.mu.Unlock()
	if !ok {
		return arbiterView{}, false
	}
	locks, err := s.ReadRef(gitstore.LocksRef)
	if err != nil || locks != sn.locks {
		return arbiterView{}, false
	}
	if feature != "" {
		if feat, err := s.ReadRef(gitstore.FeatureRef(feature)); err != nil || feat != sn.feat {
			return arbiterView{}, false
		}
	}
	return sn.view, true
}

// remember records that the arbiter holds v and the local refs are now at
// the given values.
func (s *arbiter) remember(feature string, v arbiterView, feat, locks plumbing.Hash) {
	r := s.repo
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[s.seenKey(feature)] = seen{view: v, feat: feat, locks: locks}
}

// forget drops what remember recorded: the next update catches up.
func (s *arbiter) forget(feature string) {
	r := s.repo
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.seen, s.seenKey(feature))
}

func (s *arbiter) catchUpOnce(ctx context.Context, feature string) (arbiterView, error) {
	var v arbiterView
	report, fetched, done, err := s.syncRound(ctx, syncOptions{Remote: s.remote, Check: s.check, Arbiter: true, Feature: feature, RepushPins: s.repushPins})
	if err != nil {
		return v, err
	}
	s.noteRecreated(s.remote, report.Recreated, true)
	s.noteRecreated(s.remote, report.Rewound, false)
	hash := func(rel string) plumbing.Hash {
		if fetched[rel] == "" {
			return plumbing.ZeroHash
		}
		return plumbing.NewHash(fetched[rel])
	}
	v.Locks = hash("locks")
	if feature != "" {
		v.Feature = hash("features/" + feature)
	}
	if !done {
		s.forget(feature)
		return v, refs.ErrRace
	}
	s.rememberLocal(feature, v)
	return v, nil
}

// rememberLocal remembers v with the local refs as they are now.
func (s *arbiter) rememberLocal(feature string, v arbiterView) {
	locks, err := s.ReadRef(gitstore.LocksRef)
	if err != nil {
		s.forget(feature)
		return
	}
	var feat plumbing.Hash
	if feature != "" {
		if feat, err = s.ReadRef(gitstore.FeatureRef(feature)); err != nil {
			s.forget(feature)
			return
		}
	}
	s.remember(feature, v, feat, locks)
}

// publish makes a transaction's ref moves happen on the arbiter first,
// with a lease on what catching up saw there, and only then locally. A lost
// lease means the transition did not happen (refs.ErrRace: start over); nothing
// local was touched. When the local refs moved meanwhile (another process
// of this machine), the transition still holds — it is on the arbiter —
// and catching up merges it in.
func (s *arbiter) publish(ctx context.Context, feature string, v arbiterView, moved []refs.Update, also []gitstore.RefMove) error {
	// --no-verify: a transition is not the person's push, and their
	// pre-push hook (a test suite) must not run for each one.
	args := []string{"push", "--quiet", "--atomic", "--porcelain", "--no-verify", s.remote}
	var specs []string
	for _, u := range moved {
		if u.Unchecked && !u.Delete {
			// Pinned work goes with the transition that names it, in the
			// same atomic push: whoever reads the state can fetch the work.
			specs = append(specs, "+"+u.New.String()+":"+u.Name)
			continue
		}
		if u.Verify && u.Name == gitstore.LocksRef && !v.Locks.IsZero() {
			// The decision read the locks without changing them: the push
			// holds only while the arbiter's locks are still the ones read
			// (pushing their own value changes nothing there).
			args = append(args, "--force-with-lease="+gitstore.LocksRef+":"+v.Locks.String())
			specs = append(specs, v.Locks.String()+":"+gitstore.LocksRef)
			continue
		}
		if u.Verify && u.Name == gitstore.LocksRef && !u.Old.IsZero() {
			// The arbiter has no locks (it lost them): the decision holds
			// only while it still has none, and the locks it was made on go
			// there.
			args = append(args, "--force-with-lease="+gitstore.LocksRef+":")
			specs = append(specs, u.Old.String()+":"+gitstore.LocksRef)
			continue
		}
		if u.Verify || u.Unchecked || u.Delete {
			continue
		}
		lease := hashOrEmpty(v.Feature)
		if u.Name == gitstore.LocksRef {
			lease = hashOrEmpty(v.Locks)
		}
		args = append(args, "--force-with-lease="+u.Name+":"+lease)
		specs = append(specs, u.New.String()+":"+u.Name)
	}
	for _, m := range also {
		args = append(args, "--force-with-lease="+m.Ref+":"+m.Old)
		specs = append(specs, m.New+":"+m.Ref)
	}
	var lost []string
	if len(specs) > 0 {
		lost = s.lostOn(s.remote, args)
		if out, err := s.git.Run(ctx, append(args, specs...)...); err != nil {
			s.forget(feature)
			lost := pushLost(err)
			if lost {
				s.repo.mu.Lock()
				s.repo.leaseLost[s.seenKey(feature)] = time.Now()
				s.repo.mu.Unlock()
			}
			if len(also) > 0 && lost && !alsoStale(out, also) {
				// Only the state moved (another host's claim or result):
				// the caller's decision on its other refs still holds, and
				// the attempt goes again on the state as it is now, where
				// starting the caller over would redo its merge for every
				// transition the other hosts make meanwhile.
				return fmt.Errorf("%w: arbiter %s moved first", refs.ErrRace, s.remote)
			}
			if len(also) > 0 && lost {
				// Whichever lease failed, the caller decides again on what
				// the arbiter holds now (its ref may be another host's).
				return fmt.Errorf("%w: %s", gitstore.ErrRemoteRefMoved, s.remote)
			}
			if pushLost(err) {
				return fmt.Errorf("%w: arbiter %s moved first", refs.ErrRace, s.remote)
			}
			if gitcmd.ExitCode(err) > 0 {
				// Not answered: perhaps applied, perhaps not. Start over:
				// catching up (which waits for the arbiter) brings the
				// transition in if it got there, and the operation, applied
				// again to that state, finds it done.
				return fmt.Errorf("%w: push to %s failed: %v", refs.ErrRace, s.remote, err)
			}
			return err
		}
		// The remote has the re-created refs now, whatever happens here.
		s.noteRecreated(s.remote, lost, true)
		s.trackPushed(ctx, s.remote, specs)
	}
	if err := s.MoveRefs(ctx, moved); err != nil {
		if !errors.Is(err, refs.ErrRace) {
			s.forget(feature)
			return err
		}
		if _, err := s.catchUp(ctx, feature); err != nil {
			return fmt.Errorf("the arbiter has the transition, but this machine could not catch up: %w", err)
		}
		return nil
	}
	for _, u := range moved {
		switch {
		case u.Verify && u.Name == gitstore.LocksRef && v.Locks.IsZero():
			v.Locks = u.Old
		case u.Verify || u.Unchecked || u.Delete:
		case u.Name == gitstore.LocksRef:
			v.Locks = u.New
		case u.Name == gitstore.FeatureRef(feature):
			v.Feature = u.New
		}
	}
	s.rememberLocal(feature, v)
	return nil
}

// alsoStale reports whether a refused push's porcelain report (out) may
// have refused one of also's refs: true unless it names a ref refused for
// a stale lease and none of also's among them. A report it cannot read
// counts as stale.
func alsoStale(out []byte, also []gitstore.RefMove) bool {
	stale := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 3 || f[0] != "!" || !strings.Contains(f[2], "(stale info)") {
			continue
		}
		_, dst, ok := strings.Cut(f[1], ":")
		if !ok {
			return true
		}
		stale[dst] = true
	}
	if len(stale) == 0 {
		return true
	}
	for _, m := range also {
		if stale[m.Ref] {
			return true
		}
	}
	return false
}

// trackPushed sets the tracking refs of the state refs a push that went
// through set on remote to what it set them to, as git does for a branch's
// remote-tracking ref: a host that only ever pushed a ref has then fetched
// it too, in effect, and knows the remote had it (see lostOn) should the
// remote lose it later. Nothing depends on it otherwise, so a failure is
// left for the next fetch to mend.
func (s store) trackPushed(ctx context.Context, remote string, specs []string) {
	var us []refs.Update
	for _, spec := range specs {
		src, dst, ok := strings.Cut(strings.TrimPrefix(spec, "+"), ":")
		rel, state := strings.CutPrefix(dst, gitstore.ZergPrefix)
		if !ok || !state || !stateRef(rel) || !plumbing.IsHash(src) {
			continue
		}
		us = append(us, refs.Update{Name: trackingPrefix(remote) + rel, New: plumbing.NewHash(src), Unchecked: true})
	}
	if len(us) > 0 {
		s.MoveRefs(ctx, us)
	}
}

// lostOn names the state refs a push leasing on their absence re-creates
// though this clone had fetched them from remote before (their tracking
// refs, which a fetch that finds no ref leaves as they were): the remote
// lost them, and this clone's state, the same history, goes back.
func (s store) lostOn(remote string, leases []string) []string {
	var lost []string
	for _, l := range leases {
		ref, ok := strings.CutSuffix(strings.TrimPrefix(l, "--force-with-lease="), ":")
		rel, state := strings.CutPrefix(ref, gitstore.ZergPrefix)
		if !ok || !state || !stateRef(rel) {
			continue
		}
		if h, _ := s.ReadRef(trackingPrefix(remote) + rel); !h.IsZero() {
			lost = append(lost, ref)
		}
	}
	return lost
}

// LeaseLost is when a transition of this process (of s's Repo) to s's
// arbiter last found it moved by someone else (zero: never): others are
// writing to it now.
func LeaseLost(s *gitstore.Store, feature string) time.Time {
	r := sharedOf(s.Repo())
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.leaseLost[arbiterKey{remoteArbiter(s), feature}]
}

func hashOrEmpty(h plumbing.Hash) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}
