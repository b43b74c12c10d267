package statemerge

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitobj"
	"github.com/git-zerg/git-zerg/gitstore/odb"
	"github.com/git-zerg/git-zerg/state"
)

func entry(s string) gitobj.TreeEntry {
	if s == "" {
		return gitobj.TreeEntry{}
	}
	return gitobj.TreeEntry{Hash: plumbing.ComputeHash(plumbing.BlobObject, []byte(s))}
}

func TestPick3(t *testing.T) {
	for _, c := range []struct {
		name       string
		base, a, b string
		want       string
		ok         bool
	}{
		{"unchanged", "x", "x", "x", "x", true},
		{"a changed", "x", "y", "x", "y", true},
		{"b changed", "x", "x", "y", "y", true},
		{"same change", "x", "y", "y", "y", true},
		{"added on a", "", "y", "", "y", true},
		{"deleted on b", "x", "x", "", "", true},
		{"both changed", "x", "y", "z", "", false},
		{"added on both", "", "y", "z", "", false},
		{"deleted on a, changed on b", "x", "", "z", "", false},
	} {
		got, ok := pick3(entry(c.base), entry(c.a), entry(c.b))
		if ok != c.ok || got.Hash != entry(c.want).Hash {
			t.Errorf("%s: pick3 = %v, %v; want %v, %v", c.name, got.Hash, ok, entry(c.want).Hash, c.ok)
		}
	}
}

func TestEventLessDoubleClaim(t *testing.T) {
	claim := func(clock uint64, worker string) []state.Event {
		return []state.Event{{Clock: clock, Op: state.OpClaim, From: state.Pending, To: state.Claimed, Worker: worker}}
	}
	for _, c := range []struct {
		name  string
		a, b  []state.Event
		aWins bool
	}{
		{"earlier clock wins", claim(3, "w2"), claim(5, "w1"), true},
		{"earlier clock wins on b", claim(7, "w1"), claim(4, "w2"), false},
		{"tie broken by bytes", claim(5, "w1"), claim(5, "w2"), true},
		{"tie broken by bytes on b", claim(5, "w2"), claim(5, "w1"), false},
		{"events beat none", claim(9, "w1"), nil, true},
		{"none loses to events", nil, claim(9, "w1"), false},
	} {
		if got := eventLess(c.a, c.b); got != c.aWins {
			t.Errorf("%s: eventLess = %v, want %v", c.name, got, c.aWins)
		}
		// The order is total: exactly one side wins whichever is first.
		if len(c.a) > 0 && len(c.b) > 0 && eventLess(c.b, c.a) == c.aWins {
			t.Errorf("%s: eventLess not antisymmetric", c.name)
		}
	}
}

func TestUnionNames(t *testing.T) {
	es := func(names ...string) odb.Entries {
		e := odb.Entries{}
		for _, n := range names {
			e[n] = entry(n)
		}
		return e
	}
	for _, c := range []struct {
		in   []odb.Entries
		want []string
	}{
		{nil, nil},
		{[]odb.Entries{es(), es()}, nil},
		{[]odb.Entries{es("b", "a"), es("c", "a"), es("a")}, []string{"a", "b", "c"}},
		{[]odb.Entries{es(), es("z"), es("y", "x")}, []string{"x", "y", "z"}},
	} {
		if got := unionNames(c.in...); !slices.Equal(got, c.want) {
			t.Errorf("unionNames = %q, want %q", got, c.want)
		}
	}
}

// memObjects holds JSON blobs in memory; the task rule needs no trees.
type memObjects map[plumbing.Hash][]byte

func (m memObjects) ReadTree(plumbing.Hash) (*gitobj.Tree, error) { panic("no trees") }
func (m memObjects) WriteTree(odb.Entries) (plumbing.Hash, error) { panic("no trees") }
func (m memObjects) ReadJSON(h plumbing.Hash, v any) error        { return json.Unmarshal(m[h], v) }
func (m memObjects) WriteJSON(v any) (plumbing.Hash, error) {
	b, err := json.Marshal(v)
	h := plumbing.ComputeHash(plumbing.BlobObject, b)
	m[h] = b
	return h, err
}

func TestMergeTaskEarlierClaimWins(t *testing.T) {
	db := memObjects{}
	put := func(task *state.Task) gitobj.TreeEntry {
		h, err := db.WriteJSON(task)
		if err != nil {
			t.Fatal(err)
		}
		return gitobj.TreeEntry{Hash: h}
	}
	claimed := func(clock uint64, worker string) *state.Task {
		return &state.Task{Status: state.Claimed, Worker: worker, History: []state.Event{
			{Clock: 1, Op: state.OpPlan, To: state.Pending},
			{Clock: clock, Op: state.OpClaim, From: state.Pending, To: state.Claimed, Worker: worker},
		}}
	}
	base := put(&state.Task{Status: state.Pending, History: []state.Event{{Clock: 1, Op: state.OpPlan, To: state.Pending}}})
	for _, c := range []struct {
		a, b   *state.Task
		winner string
	}{
		{claimed(4, "early"), claimed(6, "late"), "early"},
		{claimed(6, "late"), claimed(4, "early"), "early"},
	} {
		m := &merger{db: db, clock: 9}
		te, err := m.mergeTask("t1", base, put(c.a), put(c.b))
		if err != nil {
			t.Fatal(err)
		}
		var got state.Task
		if err := db.ReadJSON(te.Hash, &got); err != nil {
			t.Fatal(err)
		}
		if got.Worker != c.winner {
			t.Errorf("winner = %q, want %q", got.Worker, c.winner)
		}
		last := got.History[len(got.History)-1]
		if last.Op != state.OpConflict || last.Clock != 9 || last.Worker != "late" {
			t.Errorf("last event = %+v, want the conflict recording the late claim at clock 9", last)
		}
		if len(m.conflicts) != 1 || m.conflicts[0].Task != "t1" {
			t.Errorf("conflicts = %+v", m.conflicts)
		}
	}
}
