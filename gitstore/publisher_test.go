package gitstore

import (
	"context"
	"fmt"
	"testing"

	"github.com/git-zerg/git-zerg/gitstore/refs"
	"github.com/git-zerg/git-zerg/state"
)

// publisherFake stands for the sync layer: it leases every attempt, loses
// the first publish it is handed (as a push that lost its lease would),
// and makes the others here.
type publisherFake struct {
	s                 *Store
	leases, publishes int
	moved             []refs.Update
}

func (p *publisherFake) Remote() string { return "arbiter" }

func (p *publisherFake) Lease(ctx context.Context, feature string) (Lease, error) {
	p.leases++
	return Lease{}, nil
}

func (p *publisherFake) Publish(ctx context.Context, feature string, l Lease, moves []refs.Update, also []RefMove) error {
	p.publishes++
	if p.publishes == 1 {
		return fmt.Errorf("%w: the arbiter moved first", errRace)
	}
	p.moved = moves
	return p.s.updateRefs(ctx, moves)
}

// TestTransactionHandsItsMovesToThePublisher: with a Publisher, a
// transaction leases each attempt and hands its moves to it instead of
// moving the refs itself; a publish that lost its race starts the attempt
// over, leased again. The compare-and-swap store needs nothing else of
// the sync layer.
func TestTransactionHandsItsMovesToThePublisher(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	plan(t, s, "f", tasks(1))
	before, err := s.ReadRef(FeatureRef("f"))
	if err != nil {
		t.Fatal(err)
	}
	p := &publisherFake{s: s}
	s.publisher = p
	if err := setStatus(s, "f", "T000", state.Claimed); err != nil {
		t.Fatal(err)
	}
	if p.leases != 2 || p.publishes != 2 {
		t.Fatalf("%d leases and %d publishes, want 2 of each (the first publish lost)", p.leases, p.publishes)
	}
	after, err := s.ReadRef(FeatureRef("f"))
	if err != nil {
		t.Fatal(err)
	}
	var feature *refs.Update
	for i := range p.moved {
		if p.moved[i].Name == FeatureRef("f") {
			feature = &p.moved[i]
		}
	}
	if feature == nil || feature.Old != before || feature.New != after || after == before {
		t.Fatalf("published %+v; the feature moved %s -> %s", p.moved, before, after)
	}
	s.publisher = nil
	if err := setStatus(s, "f", "T000", state.Pending); err != nil {
		t.Fatal(err)
	}
	if p.leases != 2 || p.publishes != 2 {
		t.Fatalf("a store without a publisher still asked it: %d leases, %d publishes", p.leases, p.publishes)
	}
}
