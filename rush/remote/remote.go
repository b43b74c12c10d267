// Package remote is the I/O of a rush shared with other hosts through a
// git remote: the looks at the remote's state (polled, and caught up in
// the background while workers run), the staging fetched, published and
// taken, the pinned work fetched, a merge pushed with its tasks recorded
// done and its pins dropped, and the waits for a remote that does not
// answer. What to merge, when and on which staging is the rush's, which
// calls a Link; nothing here imports the rush.
package remote

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/gitstore/remotes"
	"github.com/git-zerg/git-zerg/rush/schedule"
)

// Poll is how often a host that waits for other hosts looks at the
// remote's state.
const Poll = 100 * time.Millisecond

// Link is what a rush shared with other hosts through a remote keeps of
// them and of the remote. One belongs to one rush; Remote "" is a rush of
// this clone alone, for which the looks at the remote do nothing. The
// fields are the rush's settings, set before the first call; Close waits
// for what the link runs in the background.
type Link struct {
	Store   *gitstore.Store // the rush's own
	Remote  string          // shares the rush with other hosts ("" for none)
	Feature string
	// Ctx is what the fetches and pushes end with; Stop, when it ends,
	// cuts the waits short (the rush is stopping).
	Ctx  context.Context
	Stop context.Context
	// Wait is rush.remote_wait, how long the rush waits for a remote that
	// does not answer (0: remotes.RemoteWait).
	Wait time.Duration
	// Repush: each transition pushes the pins again (not under
	// forge.review).
	Repush bool
	// Flows: the rush schedules by dependencies (see Contend).
	Flows bool
	Note  func(format string, args ...any)

	// prefetching: a background catch-up with the remote is on its way,
	// through fresher (its store, only ever used by that one); caughtUp
	// is when the last one ended (Unix nanoseconds) and catchUpTook how
	// long it took; working counts the worker commands running.
	prefetching atomic.Bool
	fresher     *gitstore.Store
	caughtUp    atomic.Int64
	catchUpTook atomic.Int64
	working     atomic.Int32
	// lastPoll is when this host last looked at the remote's state, and
	// looked when the last look that brought it began: the local state
	// holds the remote's as of then.
	lastPoll time.Time
	looked   time.Time
	// background holds pushes nobody waits for (done before the rush
	// ends).
	background sync.WaitGroup
}

// Share makes remote the arbiter of the transitions of g's store (the
// rush's own), and has g say when the remote does not answer and when it
// had lost a ref.
func Share(g *engine.Engine, remote string) {
	s := g.Store
	remotes.SetArbiter(s, remote, engine.CheckCaughtUp)
	remotes.SetArbiterWait(s, time.Duration(g.Config.Rush.RemoteWait))
	remotes.SetRepushPins(s, g.ReviewMode() == "")
	remotes.OnRemoteWait(s.Repo(), func(remote string, err error, wait time.Duration) {
		noteWaiting(g.Note, remote, err, wait)
	})
	remotes.OnRemoteLost(s.Repo(), func(remote, ref string, here bool) {
		if here {
			g.NoteRecreated(remote, ref)
		} else {
			g.Note("remote %s had lost %s; another host re-created it from its state, merged here with this host's", remote, ref)
		}
	})
}

// Close waits for what the link does in the background, and drops the
// store of its catch-ups.
func (l *Link) Close() {
	l.background.Wait()
	if l.fresher != nil {
		l.fresher.Drop()
	}
}

// Poll catches up with the remote's state when the last look is older
// than Poll.
func (l *Link) Poll(force bool) error {
	if l.Remote == "" || !force && time.Since(l.lastPoll) < Poll {
		return nil
	}
	l.lastPoll = time.Now()
	start := l.lastPoll
	if err := remotes.CatchUp(l.Ctx, l.Store, l.Feature); err != nil {
		return err
	}
	l.looked = start
	return nil
}

// JustPolled counts the state this host holds now as a look at the
// remote's: the next Poll that is not forced is one Poll from now.
func (l *Link) JustPolled() {
	l.lastPoll = time.Now()
}

// Looked is when the last look at the remote that brought its state here
// began: the local state holds the remote's as of then.
func (l *Link) Looked() time.Time {
	return l.looked
}

// Working counts the worker commands running (n is +1 as one starts, -1
// as it ends): the catch-ups in the background are for them.
func (l *Link) Working(n int32) {
	l.working.Add(n)
}

// Prefetch catches up with the remote in the background while a worker's
// result is committed and verified, when other hosts are writing to it: a
// transition then pushes on what the remote holds, where one pushed on
// this host's last look would mostly lose its lease to theirs and cost a
// fetch and a second push anyway. Alone on the remote (no lease lost for a
// while), a host pushes at once and never needs it.
func (l *Link) Prefetch() {
	if l.Remote == "" || time.Since(remotes.LeaseLost(l.Store, l.Feature)) > prefetchFor {
		return
	}
	if !l.prefetching.CompareAndSwap(false, true) {
		return // one at a time: the next transition reads what it brings
	}
	l.background.Add(1)
	go func() {
		defer l.background.Done()
		defer l.prefetching.Store(false)
		ctx := l.Ctx
		// One store for every catch-up, used by one at a time: a Store
		// is not for concurrent use.
		if l.fresher == nil {
			s, err := l.Store.Repo().Open(ctx, l.Store.Top)
			if err != nil {
				return
			}
			s.Persistent = true
			remotes.SetArbiter(s, l.Remote, engine.CheckCaughtUp)
			remotes.SetArbiterWait(s, time.Nanosecond) // a look, not a wait: the transition waits if it must
			remotes.SetRepushPins(s, l.Repush)
			l.fresher = s
		}
		start := time.Now()
		remotes.CatchUp(ctx, l.fresher, l.Feature)
		l.catchUpTook.Store(int64(time.Since(start)))
		l.caughtUp.Store(time.Now().UnixNano())
	}()
}

// prefetchFor is how long after a lost lease a host keeps catching up
// before its transitions.
const prefetchFor = 10 * time.Second

// KeepFresh catches up with the remote every freshEvery while workers run
// and other hosts write to it (see Prefetch), in the background until ctx
// ends: when a worker finishes, this host's view is then a fraction of a
// second old, and its transition mostly goes out at once instead of
// waiting for a fetch.
func (l *Link) KeepFresh(ctx context.Context) {
	l.background.Add(1)
	go func() {
		defer l.background.Done()
		l.keepFresh(ctx)
	}()
}

func (l *Link) keepFresh(ctx context.Context) {
	t := time.NewTicker(freshEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if l.working.Load() > 0 && l.freshDue(time.Now()) {
			l.Prefetch()
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
func (l *Link) freshDue(now time.Time) bool {
	return schedule.FreshDue(now, time.Unix(0, l.caughtUp.Load()), time.Duration(l.catchUpTook.Load()))
}

// Arbitrate makes the remote the arbiter of s's transitions, as it is of
// the rush's own store.
func (l *Link) Arbitrate(s *gitstore.Store) {
	remotes.SetArbiter(s, l.Remote, engine.CheckCaughtUp)
	remotes.SetArbiterWait(s, l.wait())
	remotes.SetRepushPins(s, l.Repush)
	l.Contend(s)
}

// Contend is how long a transition of a rush shared by dependencies
// keeps trying while other hosts' transitions win the remote first: there
// is no quiet moment between levels, and a host whose pushes keep landing
// needs no fetch between them where the others need one each, so a host
// can lose for longer than one machine's writers ever do (30 s) and still
// get its turn when the others' work runs out.
func (l *Link) Contend(s *gitstore.Store) {
	if l.Flows {
		s.Retry = max(s.Retry, l.wait())
	}
}

// try runs a step that needs the remote, again with backoff (up to
// rush.remote_wait) while the remote does not answer, saying so. A
// push that was not answered may have been applied: each step is a
// compare-and-swap or a fetch, so doing it again is safe.
func (l *Link) try(step func() error) error {
	deadline := time.Now().Add(l.wait())
	wait := 250 * time.Millisecond
	for {
		err := step()
		var re *remotes.RemoteError
		if !errors.As(err, &re) || time.Now().Add(wait).After(deadline) {
			return err
		}
		noteWaiting(l.Note, l.Remote, re.Err, wait)
		select {
		case <-time.After(wait):
		case <-l.Stop.Done():
			return err
		}
		wait = min(wait*2, 5*time.Second)
	}
}

// wait is how long the rush waits for a remote that does not answer.
func (l *Link) wait() time.Duration {
	if l.Wait > 0 {
		return l.Wait
	}
	return remotes.RemoteWait
}

// noteWaiting says that the remote does not answer, once per wait.
func noteWaiting(note func(format string, args ...any), remote string, err error, wait time.Duration) {
	why := err.Error()
	var ge *gitcmd.Error
	if errors.As(err, &ge) {
		why = ge.Reason() // the command line is not the person's
	}
	if i := strings.IndexByte(why, '\n'); i >= 0 {
		why = why[:i]
	}
	note("remote %s does not answer (%s); trying again in %s", remote, why, wait.Round(time.Millisecond))
}
