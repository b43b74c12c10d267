package remotes

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
)

// TestReposShareNothing: what this layer keeps for one repository's Repo
// never reaches another repository opened in the same process: the
// listener a rush sets on its Repo hears its own arbiter's waits only, and
// what was seen on an arbiter is not shared.
func TestReposShareNothing(t *testing.T) {
	ctx := context.Background()
	a, b := newRepo(t), newRepo(t)
	sa, sb := openStore(t, a), openStore(t, b)
	plan(t, sa, "f", tasks(1))
	plan(t, sb, "f", tasks(1))
	gone := func(name string) string { return filepath.Join(t.TempDir(), name+".git") } // no remote there: never answers
	ra, rb := gone("a"), gone("b")
	SetArbiter(sa, ra, acceptAll)
	SetArbiter(sb, rb, acceptAll)
	SetArbiterWait(sa, time.Minute)
	SetArbiterWait(sb, time.Minute)

	var mu sync.Mutex
	var heard []string
	var cancel context.CancelFunc
	OnRemoteWait(sa.Repo(), func(remote string, err error, wait time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		heard = append(heard, remote)
		cancel() // one wait heard is enough: end it at once
	})
	update := func(s *gitstore.Store) error {
		c, cc := context.WithCancel(ctx)
		defer cc()
		mu.Lock()
		cancel = cc
		mu.Unlock()
		return s.Update(c, "f", time.Now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
			return putStatus(tx, "T000", state.Done)
		})
	}
	var re *RemoteError
	if err := update(sb); !errors.As(err, &re) {
		t.Fatalf("b's update with its arbiter gone: %v, want it failed on the remote", err)
	}
	if err := update(sa); !errors.As(err, &re) {
		t.Fatalf("a's update with its arbiter gone: %v, want it failed on the remote", err)
	}
	mu.Lock()
	if len(heard) != 1 || heard[0] != ra {
		t.Errorf("a's listener heard waits for %v, want its own arbiter %s once", heard, ra)
	}
	mu.Unlock()

	tip, err := sa.ReadRef(gitstore.FeatureRef("f"))
	if err != nil {
		t.Fatal(err)
	}
	arbiterOf(sa).remember("f", arbiterView{Feature: tip}, tip, plumbing.ZeroHash)
	SetArbiter(sb, ra, acceptAll) // the same arbiter and feature: still nothing known
	if _, ok := arbiterOf(sb).fresh("f"); ok {
		t.Error("what a saw on its arbiter is known to b")
	}
	if _, ok := arbiterOf(sa).fresh("f"); !ok {
		t.Error("a forgot what it saw on its arbiter")
	}
}

// TestSetArbiterKeepsItsSettings: the wait and the re-push of pins set
// for a store's arbiter stay when SetArbiter names it again (a rush sets
// them once, and the engine may set the arbiter afterwards), and a store
// opened again has the arbiter without them, as a new store does.
func TestSetArbiterKeepsItsSettings(t *testing.T) {
	s := openStore(t, newRepo(t))
	SetArbiterWait(s, time.Minute) // no arbiter yet: nothing to set
	SetArbiter(s, "origin", acceptAll)
	if a := arbiterOf(s); a == nil || a.wait != 0 || remoteArbiter(s) != "origin" {
		t.Fatalf("arbiter %+v", a)
	}
	SetArbiterWait(s, time.Minute)
	SetRepushPins(s, true)
	SetArbiter(s, "origin", nil)
	if a := arbiterOf(s); a.wait != time.Minute || !a.repushPins || a.check != nil {
		t.Fatalf("set again: wait %v, repush %v, check %v", a.wait, a.repushPins, a.check != nil)
	}
	n, err := Reopen(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if a := arbiterOf(n); a == nil || a.remote != "origin" || a.wait != 0 || a.repushPins || a.check != nil {
		t.Fatalf("reopened with %+v", a)
	}
	SetArbiter(s, "", nil)
	if s.Publisher() != nil || remoteArbiter(s) != "" {
		t.Fatal("SetArbiter(\"\") left a publisher")
	}
}
