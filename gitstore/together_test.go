package gitstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/gitstore/refs"
	"github.com/git-zerg/git-zerg/state"
)

// countingPublisher stands for the sync layer's arbiter: it makes every
// publish here and counts them (the pushes an arbiter would make).
type countingPublisher struct {
	s         *Store
	mu        sync.Mutex
	publishes int
}

func (p *countingPublisher) Remote() string { return "arbiter" }

func (p *countingPublisher) Lease(ctx context.Context, feature string) (Lease, error) {
	return Lease{}, nil
}

func (p *countingPublisher) Publish(ctx context.Context, feature string, l Lease, moves []refs.Update, also []RefMove) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.publishes++
	return p.s.updateRefs(ctx, moves)
}

// TestUpdateTogether: transitions that wait for the process's lock while
// another holds it go out in one state commit and one publish (one push to
// the arbiter); the one that fails is answered with its error and leaves
// nothing in that commit, and the others still go.
func TestUpdateTogether(t *testing.T) {
	a := newRepo(t)
	sa := openStore(t, a)
	plan(t, sa, "f", tasks(4))
	p := &countingPublisher{s: sa}
	sa.SetPublisher(p)
	before := git(t, a, "rev-parse", FeatureRef("f"))

	// Hold the lock as a transition in progress would, queue four (each
	// through a store of its own, as a rush's workers have), then let go.
	mu := sa.ProcessLock()
	mu.Lock()
	refusal := errors.New("refused")
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range 4 {
		s := openIn(t, sa, a)
		s.SetPublisher(p)
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("T%03d", i)
			errs[i] = s.UpdateTogether(context.Background(), "f", time.Now, func(tx *Tx) (*Message, error) {
				if i == 2 {
					// A change, then a refusal: the change must not stay.
					if _, err := putStatus(tx, "T003", state.Blocked); err != nil {
						return nil, err
					}
					return nil, refusal
				}
				return putStatus(tx, id, state.Claimed)
			})
		}()
	}
	waitFor(t, func() bool {
		js := sa.joinersOf("f")
		js.mu.Lock()
		defer js.mu.Unlock()
		return len(js.waiting) == 4
	})
	mu.Unlock()
	wg.Wait()

	for i, err := range errs {
		if want := error(nil); i == 2 {
			if !errors.Is(err, refusal) {
				t.Errorf("transition %d: %v, want its own refusal", i, err)
			}
		} else if err != want {
			t.Errorf("transition %d: %v", i, err)
		}
	}
	tip := git(t, a, "rev-parse", FeatureRef("f"))
	if n := strings.TrimSpace(git(t, a, "rev-list", "--count", before+".."+tip)); n != "1" {
		t.Fatalf("%s state commits, want the three transitions in one", n)
	}
	if p.publishes != 1 {
		t.Fatalf("%d publishes, want the three transitions in one", p.publishes)
	}
	tx, err := sa.View("f")
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]state.Status{"T000": state.Claimed, "T001": state.Claimed, "T002": state.Pending, "T003": state.Claimed} {
		tk, err := tx.Task(id)
		if err != nil {
			t.Fatal(err)
		}
		if tk.Status != want {
			t.Errorf("%s is %s, want %s", id, tk.Status, want)
		}
	}
}

// waitFor polls cond, bounded.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}
