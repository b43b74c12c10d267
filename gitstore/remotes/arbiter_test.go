package remotes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
)

// TestArbiterCatchUpIsCheckedSyncRound: an arbiter's catch-up is a
// SyncRound in arbiter mode, so what it brings in goes through the
// incoming check before anything merges: with no check it fails closed, a
// refusal leaves the local state where it was, and a pass merges it and
// lets the transition through the arbiter.
func TestArbiterCatchUpIsCheckedSyncRound(t *testing.T) {
	ctx := context.Background()
	a, b, remote, sa, sb := arbiterPair(t)
	plan(t, sa, "f", tasks(2)) // nothing on the arbiter yet: nothing to check
	tip := git(t, a, "rev-parse", gitstore.FeatureRef("f"))
	if got := strings.Fields(git(t, a, "ls-remote", remote, gitstore.FeatureRef("f"))); len(got) == 0 || got[0] != tip {
		t.Fatalf("the arbiter has %v, want the plan %s", got, tip)
	}

	if err := setStatus(sb, "f", "T000", state.Claimed); err == nil || !strings.Contains(err.Error(), "nothing to check it") {
		t.Fatalf("catch-up without a check: %v, want it refused", err)
	}
	if h, _ := sb.ReadRef(gitstore.FeatureRef("f")); !h.IsZero() {
		t.Fatalf("refused state was merged: %s", h)
	}

	refusal := errors.New("refused by the check")
	var calls []string
	SetArbiter(sb, remote, func(ctx context.Context, s *gitstore.Store, feature string, local, remote plumbing.Hash) error {
		calls = append(calls, feature+" "+remote.String())
		return refusal
	})
	if err := setStatus(sb, "f", "T000", state.Claimed); !errors.Is(err, refusal) {
		t.Fatalf("catch-up with a refusing check: %v", err)
	}
	if h, _ := sb.ReadRef(gitstore.FeatureRef("f")); !h.IsZero() {
		t.Fatalf("refused state was merged: %s", h)
	}
	if len(calls) != 1 || calls[0] != "f "+tip {
		t.Fatalf("check called with %v, want the arbiter's tip %s once", calls, tip)
	}

	SetArbiter(sa, remote, acceptAll)
	SetArbiter(sb, remote, acceptAll)
	if err := setStatus(sb, "f", "T000", state.Claimed); err != nil {
		t.Fatal(err)
	}
	mine := git(t, b, "rev-parse", gitstore.FeatureRef("f"))
	if got := strings.Fields(git(t, b, "ls-remote", remote, gitstore.FeatureRef("f"))); len(got) == 0 || got[0] != mine {
		t.Fatalf("the arbiter has %v, want the transition %s", got, mine)
	}
	if _, err := arbiterOf(sb).catchUp(ctx, "f"); err != nil {
		t.Fatal(err)
	}
}

// TestArbiterPushesOnWhatItKnows: a process that knows what the arbiter
// holds (it pushed it) pushes its next transition without fetching first;
// when another machine moved the arbiter meanwhile, the lease refuses that
// push, and the update catches up and goes through on the arbiter's state,
// losing neither transition.
func TestArbiterPushesOnWhatItKnows(t *testing.T) {
	a, _, remote, sa, sb := arbiterPair(t)
	SetArbiter(sa, remote, acceptAll)
	SetArbiter(sb, remote, acceptAll)
	plan(t, sa, "f", tasks(3))
	if err := setStatus(sa, "f", "T000", state.Claimed); err != nil {
		t.Fatal(err)
	}
	// git's own trace of the commands it runs (the tracking ref alone
	// cannot tell: a push moves it too).
	trace := filepath.Join(t.TempDir(), "trace")
	t.Setenv("GIT_TRACE", trace)
	if err := setStatus(sa, "f", "T001", state.Claimed); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_TRACE", "")
	b, _ := os.ReadFile(trace)
	if ran := string(b); strings.Contains(ran, "git fetch") || !strings.Contains(ran, "git push") {
		t.Fatalf("the second transition ran (want a push and no fetch):\n%s", ran)
	}
	if got, want := strings.Fields(git(t, a, "ls-remote", remote, gitstore.FeatureRef("f")))[0], git(t, a, "rev-parse", gitstore.FeatureRef("f")); got != want {
		t.Fatalf("the arbiter has %s, this machine %s", got, want)
	}

	// Another machine moves the arbiter: what a knows is stale now.
	if err := setStatus(sb, "f", "T002", state.Claimed); err != nil {
		t.Fatal(err)
	}
	if err := setStatus(sa, "f", "T000", state.Verified); err != nil {
		t.Fatal(err)
	}
	tip := strings.Fields(git(t, a, "ls-remote", remote, gitstore.FeatureRef("f")))[0]
	if local := git(t, a, "rev-parse", gitstore.FeatureRef("f")); local != tip {
		t.Fatalf("the arbiter has %s, this machine %s", tip, local)
	}
	want := map[string]state.Status{"T000": state.Verified, "T001": state.Claimed, "T002": state.Claimed}
	tx, err := sa.View("f")
	if err != nil {
		t.Fatal(err)
	}
	for id, st := range want {
		tk, err := tx.Task(id)
		if err != nil {
			t.Fatal(err)
		}
		if tk.Status != st {
			t.Errorf("%s is %s on the arbiter's state, want %s", id, tk.Status, st)
		}
	}
}

// TestArbiterLeaseOnLocksRead: a transition decided on the locks it read
// (a claim that checks the files are free) without changing them goes
// through only while the arbiter's locks are the ones read: when another
// machine took a lock meanwhile, the push is refused and the decision is
// made again on the arbiter's locks.
func TestArbiterLeaseOnLocksRead(t *testing.T) {
	_, _, remote, sa, sb := arbiterPair(t)
	SetArbiter(sa, remote, acceptAll)
	SetArbiter(sb, remote, acceptAll)
	plan(t, sa, "f", tasks(3))
	ctx := context.Background()
	lock := func(s *gitstore.Store, path string) {
		t.Helper()
		err := s.Update(ctx, "", time.Now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
			locks, err := tx.Locks()
			if err != nil {
				return nil, err
			}
			tx.SetLocks(append(locks, state.Lock{Path: path, Owner: "o", Expires: time.Now().Add(time.Hour)}))
			return &gitstore.Message{Subject: "lock " + path, Op: "lock"}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	seen := -1
	claim := func(id string) {
		t.Helper()
		err := sa.Update(ctx, "f", time.Now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
			locks, err := tx.Locks()
			if err != nil {
				return nil, err
			}
			seen = len(locks)
			return putStatus(tx, id, state.Claimed)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	lock(sa, "a.txt")
	claim("T000") // sa knows the arbiter's state from here on
	lock(sb, "b.txt")
	claim("T001")
	if seen != 2 {
		t.Fatalf("the claim that went through saw %d locks; the arbiter holds 2", seen)
	}
}

// TestArbiterCatchUpBringsWork: catching up with the arbiter brings the
// work other machines pinned with their transitions, so that the level
// merge has every verified commit without a fetch of its own.
func TestArbiterCatchUpBringsWork(t *testing.T) {
	a, b, remote, sa, sb := arbiterPair(t)
	SetArbiter(sa, remote, acceptAll)
	SetArbiter(sb, remote, acceptAll)
	plan(t, sa, "f", tasks(2))
	git(t, b, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "work of T000")
	work := git(t, b, "rev-parse", "HEAD")
	err := sb.Update(context.Background(), "f", time.Now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		tx.SetRef(gitstore.WorkRef("f", "T000"), work)
		return putStatus(tx, "T000", state.Verified)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := arbiterOf(sa).catchUp(context.Background(), "f"); err != nil {
		t.Fatal(err)
	}
	if got := git(t, a, "rev-parse", trackingPrefix(remote)+"work/f/T000"); got != work {
		t.Fatalf("tracking ref of the pin is %s, want %s", got, work)
	}
}

// TestArbiterPushAlso: a transition can move another ref on the arbiter in
// its own push, by compare-and-swap: both arrive, or neither; a refused
// push ends the update with gitstore.ErrRemoteRefMoved and changes nothing here or
// there; a transition with nothing to record pushes nothing.
func TestArbiterPushAlso(t *testing.T) {
	a, _, remote, sa, _ := arbiterPair(t)
	SetArbiter(sa, remote, acceptAll)
	plan(t, sa, "f", tasks(3))
	ctx := context.Background()
	head := git(t, a, "rev-parse", "HEAD")
	const ref = "refs/heads/zerg/f/staging"
	remoteAt := func(name string) string {
		f := strings.Fields(git(t, a, "ls-remote", remote, name))
		if len(f) == 0 {
			return ""
		}
		return f[0]
	}
	move := func(id string, m gitstore.RefMove) (bool, error) {
		var last *gitstore.Tx
		err := sa.Update(ctx, "f", time.Now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
			last = tx
			tx.PushAlso(m)
			if id == "" {
				return nil, nil
			}
			return putStatus(tx, id, state.Claimed)
		})
		return last != nil && last.Pushed(), err
	}

	pushed, err := move("T000", gitstore.RefMove{Ref: ref, Old: "", New: head})
	if err != nil || !pushed {
		t.Fatalf("first move: pushed %v, %v", pushed, err)
	}
	if got := remoteAt(ref); got != head {
		t.Fatalf("the arbiter's %s is %q, want %s", ref, got, head)
	}
	state1 := remoteAt(gitstore.FeatureRef("f"))
	if local := git(t, a, "rev-parse", gitstore.FeatureRef("f")); state1 != local {
		t.Fatalf("the arbiter has the state %s, this machine %s", state1, local)
	}

	// A stale lease on the other ref: nothing moves, here or there.
	git(t, a, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "next")
	next := git(t, a, "rev-parse", "HEAD")
	stale := strings.Repeat("1", 40)
	if _, err := move("T001", gitstore.RefMove{Ref: ref, Old: stale, New: next}); !errors.Is(err, gitstore.ErrRemoteRefMoved) {
		t.Fatalf("stale lease: %v, want gitstore.ErrRemoteRefMoved", err)
	}
	if got := remoteAt(gitstore.FeatureRef("f")); got != state1 {
		t.Fatalf("the refused push moved the arbiter's state to %s", got)
	}
	if got := remoteAt(ref); got != head {
		t.Fatalf("the refused push moved the arbiter's %s to %s", ref, got)
	}
	if local := git(t, a, "rev-parse", gitstore.FeatureRef("f")); local != state1 {
		t.Fatalf("the refused push moved the local state to %s", local)
	}

	if pushed, err := move("", gitstore.RefMove{Ref: ref, Old: head, New: head}); err != nil || pushed {
		t.Fatalf("nothing to record: pushed %v, %v", pushed, err)
	}
}

// TestArbiterPushAlsoStateMoved: a push with another ref whose lease
// holds, refused only because the state moved on the arbiter meanwhile
// (another clone's transition), goes again on that state by itself: both
// transitions and the other ref arrive, and the caller is not told the
// other ref moved.
func TestArbiterPushAlsoStateMoved(t *testing.T) {
	a, _, remote, sa, sb := arbiterPair(t)
	SetArbiter(sa, remote, acceptAll)
	SetArbiter(sb, remote, acceptAll)
	plan(t, sa, "f", tasks(3))
	ctx := context.Background()
	if err := CatchUp(ctx, sb, "f"); err != nil {
		t.Fatal(err)
	}
	head := git(t, a, "rev-parse", "HEAD")
	const ref = "refs/heads/zerg/f/staging"
	attempts := 0
	var last *gitstore.Tx
	err := sa.Update(ctx, "f", time.Now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		attempts++
		last = tx
		tx.PushAlso(gitstore.RefMove{Ref: ref, Old: "", New: head})
		if attempts == 1 {
			// The other clone's transition reaches the arbiter first.
			if err := sb.Update(ctx, "f", time.Now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
				return putStatus(tx, "T001", state.Claimed)
			}); err != nil {
				t.Fatal(err)
			}
		}
		return putStatus(tx, "T000", state.Claimed)
	})
	if err != nil || !last.Pushed() {
		t.Fatalf("pushed %v, %v; want the update through on its second attempt", last.Pushed(), err)
	}
	if attempts != 2 {
		t.Errorf("%d attempts, want 2", attempts)
	}
	if got := strings.Fields(git(t, a, "ls-remote", remote, ref)); len(got) == 0 || got[0] != head {
		t.Errorf("the arbiter's %s is %v, want %s", ref, got, head)
	}
	tx, err := sa.View("f")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"T000", "T001"} {
		if tk, err := tx.Task(id); err != nil || tk.Status != state.Claimed {
			t.Errorf("%s after both transitions: %v, %v", id, tk, err)
		}
	}
}

// TestAlsoStale: a refused push's report blames another ref only when it
// names that ref stale, or names none it can read.
func TestAlsoStale(t *testing.T) {
	also := []gitstore.RefMove{{Ref: "refs/heads/zerg/f/staging"}}
	for _, c := range []struct {
		out  string
		want bool
	}{
		{"To r\n!\tabc:refs/heads/zerg/f/staging\t[rejected] (atomic push failed)\n!\tdef:refs/zerg/features/f\t[rejected] (stale info)\nDone\n", false},
		{"To r\n!\tabc:refs/heads/zerg/f/staging\t[rejected] (stale info)\n!\tdef:refs/zerg/features/f\t[rejected] (stale info)\nDone\n", true},
		{"To r\n!\tabc:refs/heads/zerg/f/staging\t[remote rejected] (failed to update ref)\nDone\n", true},
		{"", true},
	} {
		if got := alsoStale([]byte(c.out), also); got != c.want {
			t.Errorf("alsoStale(%q) = %v, want %v", c.out, got, c.want)
		}
	}
}

// TestFetchDropsOnlyTheMissingRef: a catch-up's batch fetch that fails
// because the remote lacks one ref (no lock taken there yet) goes again
// without that refspec alone, as git's own error names it.
func TestFetchDropsOnlyTheMissingRef(t *testing.T) {
	remote := filepath.Join(t.TempDir(), "remote.git")
	git(t, filepath.Dir(remote), "init", "-q", "--bare", remote)
	dir := newRepo(t)
	s := openStore(t, dir)
	plan(t, s, "f", tasks(1))
	git(t, dir, "push", "-q", remote, gitstore.FeatureRef("f"))
	specs := []string{
		"+" + gitstore.LocksRef + ":refs/zerg-remotes/r/locks",
		"+" + gitstore.FeatureRef("f") + ":refs/zerg-remotes/r/features/f",
		"+" + gitstore.WorkPrefix + "f/*:refs/zerg-remotes/r/work/f/*",
	}
	_, err := wrap(s).git.Run(context.Background(), fetchArgs(remote, specs...)...)
	if err == nil {
		t.Fatal("the fetch of a ref the remote lacks succeeded: the test shows nothing")
	}
	rest, name := withoutMissing(specs, err)
	if len(rest) != 2 || rest[0] != specs[1] || rest[1] != specs[2] || name != gitstore.LocksRef {
		t.Fatalf("withoutMissing = %q, %q, want the locks refspec alone dropped (git said %v)", rest, name, err)
	}
	if _, err := wrap(s).git.Run(context.Background(), fetchArgs(remote, rest...)...); err != nil {
		t.Fatalf("the fetch without it: %v", err)
	}
	if got, _ := withoutMissing(rest, errors.New("unable to connect")); len(got) != len(rest) {
		t.Error("an error that names no ref dropped refspecs")
	}
}

// TestArbiterRewoundNoted: a remote that lost a state ref gets it back
// from the first host to push, from that host's state; a host that had
// fetched (or pushed) a later value there is told, when it catches up,
// that the remote lost it and another host re-created it, and the merge
// keeps both sides. The host that re-created it says so itself.
func TestArbiterRewoundNoted(t *testing.T) {
	ctx := context.Background()
	a, _, remote, sa, sb := arbiterPair(t)
	SetArbiter(sa, remote, acceptAll)
	SetArbiter(sb, remote, acceptAll)
	type note struct {
		ref  string
		here bool
	}
	var toldA, toldB []note
	OnRemoteLost(sa.Repo(), func(_, ref string, here bool) { toldA = append(toldA, note{ref, here}) })
	OnRemoteLost(sb.Repo(), func(_, ref string, here bool) { toldB = append(toldB, note{ref, here}) })
	plan(t, sa, "f", tasks(3))
	if err := setStatus(sb, "f", "T001", state.Claimed); err != nil {
		t.Fatal(err)
	}
	if err := setStatus(sa, "f", "T000", state.Claimed); err != nil { // on top of b's: a knows more
		t.Fatal(err)
	}
	git(t, a, "push", "-q", remote, ":"+gitstore.FeatureRef("f"))
	if err := setStatus(sb, "f", "T002", state.Claimed); err != nil { // b re-creates it, without a's
		t.Fatal(err)
	}
	if len(toldB) != 1 || toldB[0] != (note{gitstore.FeatureRef("f"), true}) {
		t.Errorf("b was told %v, want that it re-created %s", toldB, gitstore.FeatureRef("f"))
	}
	if _, err := arbiterOf(sa).catchUp(ctx, "f"); err != nil {
		t.Fatal(err)
	}
	if len(toldA) != 1 || toldA[0] != (note{gitstore.FeatureRef("f"), false}) {
		t.Errorf("a was told %v, want that another host re-created %s", toldA, gitstore.FeatureRef("f"))
	}
	tx, err := sa.View("f")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"T000", "T001", "T002"} {
		if tk, _ := tx.Task(id); tk == nil || tk.Status != state.Claimed {
			t.Errorf("%s is not claimed on a after the catch-up", id)
		}
	}
}
