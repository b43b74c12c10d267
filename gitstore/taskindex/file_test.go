package taskindex

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/state"
)

func testIndex(t testing.TB, entries []Entry) *Index {
	t.Helper()
	h := func(s string) plumbing.Hash { return plumbing.ComputeHash(plumbing.BlobObject, []byte(s)) }
	shards := map[string]plumbing.Hash{}
	for i := range entries {
		shards[ShardOf(entries[i].ID)] = h(ShardOf(entries[i].ID))
	}
	data := encodeIndexFile(h("tasks"), h("meta"), shards, entries)
	f, err := parseIndexFile(data)
	if err != nil {
		t.Fatal(err)
	}
	if f.tasks != h("tasks") || f.meta != h("meta") || !reflect.DeepEqual(f.shards, shards) {
		t.Fatalf("header read back as %s %s %v", f.tasks, f.meta, f.shards)
	}
	return indexOf(f)
}

// TestIndexFileRoundTrip: what the file keeps reads back the same, entry by
// entry as a claim reads it and all at once; a file cut short or changed
// anywhere is refused, never half read.
func TestIndexFileRoundTrip(t *testing.T) {
	h := func(s string) plumbing.Hash { return plumbing.ComputeHash(plumbing.BlobObject, []byte(s)) }
	entries := []Entry{
		{ID: "T1", Blob: h("1"), Status: state.Pending, Level: 1, Dependents: 2},
		{ID: "x.y-z", Status: state.Done, Level: 1},
		{ID: "T2", Status: state.Failed, Level: 2, Deps: []string{"T1", "x.y-z"}, Attempts: 3,
			NotBefore: time.Date(2026, 3, 1, 12, 0, 0, 5, time.UTC), Unapproved: true,
			Spent: &state.Usage{CostUSD: 0.125, InputTokens: 10, OutputTokens: 20, Turns: 3}},
		// State made by hand may hold what no plan allows.
		{ID: "odd\tid,with%seps\n", Status: state.Status("we\tird"), Level: 3, Deps: []string{"T2"}},
	}
	ix := testIndex(t, entries)
	if ix.Len() != len(entries) {
		t.Fatalf("%d entries, wrote %d", ix.Len(), len(entries))
	}
	for p := range entries {
		if got := ix.entryAt(int32(p)); !reflect.DeepEqual(got, entries[p]) {
			t.Errorf("entry %d read back\n%+v\nwrote\n%+v", p, got, entries[p])
		}
		if got := ix.Status(entries[p].ID); got != entries[p].Status {
			t.Errorf("status of %q read back %q", entries[p].ID, got)
		}
	}
	if !reflect.DeepEqual(ix.All(), entries) {
		t.Errorf("all read back\n%+v\nwrote\n%+v", ix.All(), entries)
	}
	data := ix.f.data
	for _, cut := range []int{0, 10, len(data) / 2, len(data) - 1} {
		if _, err := parseIndexFile(data[:cut]); err == nil {
			t.Errorf("a file cut at %d of %d bytes was read", cut, len(data))
		}
	}
	for _, at := range []int{len(data) / 3, len(data) - 2} {
		bad := append([]byte(nil), data...)
		bad[at] ^= 1
		if _, err := parseIndexFile(bad); err == nil {
			t.Errorf("a file changed at byte %d was read", at)
		}
	}
}

// TestCandidatesBestFirst: Candidates yields exactly the pending or failed
// tasks whose dependencies are done, in the ready rule's order, from a
// fresh encoding and after entries changed on top of it.
func TestCandidatesBestFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 4))
	statuses := []state.Status{state.Pending, state.Pending, state.Failed, state.Done, state.Done, state.Claimed, state.Blocked}
	const n = 300
	entries := make([]Entry, n)
	for i := range entries {
		entries[i] = Entry{ID: fmt.Sprintf("T%03d", i), Status: statuses[rng.IntN(len(statuses))],
			Level: 1 + rng.IntN(4), Dependents: rng.IntN(3)}
		for k := rng.IntN(3); k > 0 && i > 0; k-- {
			entries[i].Deps = append(entries[i].Deps, fmt.Sprintf("T%03d", rng.IntN(i)))
		}
	}
	ix := testIndex(t, entries)
	check := func(when string, ix *Index, entries []Entry) {
		t.Helper()
		status := map[string]state.Status{}
		for _, e := range entries {
			status[e.ID] = e.Status
		}
		var want []int
		for i, e := range entries {
			ok := e.Status == state.Pending || e.Status == state.Failed
			for _, d := range e.Deps {
				ok = ok && status[d] == state.Done
			}
			if ok {
				want = append(want, i)
			}
		}
		sort.SliceStable(want, func(a, b int) bool {
			return gates.Better(entries[want[a]].Level, entries[want[a]].Dependents, entries[want[b]].Level, entries[want[b]].Dependents)
		})
		var got, wantIDs []string
		ix.Candidates(func(e *Entry, st func(string) state.Status) bool {
			got = append(got, e.ID)
			for _, d := range e.Deps {
				if st(d) != status[d] {
					t.Errorf("%s: status of %s's dependency %s is %s, not %s", when, e.ID, d, st(d), status[d])
				}
			}
			return true
		})
		for _, i := range want {
			wantIDs = append(wantIDs, entries[i].ID)
		}
		if fmt.Sprint(got) != fmt.Sprint(wantIDs) {
			t.Fatalf("%s: candidates\n%v\nwant\n%v", when, got, wantIDs)
		}
	}
	check("encoded", ix, entries)
	// Changes on top, as refreshIndex makes them: the entry and its
	// dependents judged again.
	for step := 0; step < 200; step++ {
		p := int32(rng.IntN(n))
		entries[p].Status = statuses[rng.IntN(len(statuses))]
		ix = ix.derive(ix.Tasks)
		ix.set(p, entries[p])
		check(fmt.Sprintf("step %d", step), ix, entries)
		if step%50 == 49 {
			ix = ix.Encoded()
			check(fmt.Sprintf("step %d, encoded again", step), ix, entries)
		}
	}
}

func BenchmarkIndexRead(b *testing.B) {
	entries := make([]Entry, 10000)
	for i := range entries {
		entries[i] = Entry{ID: fmt.Sprintf("T%04d", i), Status: state.Pending, Level: 1 + i%10/9, Dependents: i % 10 / 8}
		if i%10 == 9 {
			entries[i].Deps = []string{fmt.Sprintf("T%04d", i-1)}
		}
	}
	data := testIndex(b, entries).f.data
	b.SetBytes(int64(len(data)))
	b.Run("first-candidate", func(b *testing.B) {
		for b.Loop() {
			f, err := parseIndexFile(data)
			if err != nil {
				b.Fatal(err)
			}
			(&Index{f: f}).Candidates(func(*Entry, func(string) state.Status) bool { return false })
		}
	})
	b.Run("all", func(b *testing.B) {
		for b.Loop() {
			f, err := parseIndexFile(data)
			if err != nil {
				b.Fatal(err)
			}
			(&Index{f: f}).All()
		}
	})
}

// TestIndexDelta: a delta reads back as the changes it was made from, on
// the file it names only; a damaged one is refused.
func TestIndexDelta(t *testing.T) {
	h := func(s string) plumbing.Hash { return plumbing.ComputeHash(plumbing.BlobObject, []byte(s)) }
	entries := []Entry{
		{ID: "T1", Blob: h("1"), Status: state.Pending, Level: 1, Dependents: 1},
		{ID: "T2", Blob: h("2"), Status: state.Pending, Level: 2, Deps: []string{"T1"}},
		{ID: "T3", Blob: h("3"), Status: state.Pending, Level: 1},
	}
	base := testIndex(t, entries)
	ix := &Index{Tasks: h("tasks 2"), Meta: base.Meta, Shards: map[string]plumbing.Hash{"00": h("s")}, f: base.f,
		over: map[int32]Entry{
			0: {ID: "T1", Blob: h("1b"), Status: state.Done, Level: 1, Dependents: 1,
				Spent: &state.Usage{CostUSD: 1.5, Turns: 2}},
			2: {ID: "T3", Blob: h("3b"), Status: state.Failed, Level: 1, Attempts: 2, Unapproved: true,
				NotBefore: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)},
		},
		cand: map[int32]bool{0: false, 1: true, 2: true}}
	data := ix.Delta()
	got := base.WithDelta(data)
	if got == nil {
		t.Fatalf("delta refused:\n%s", data)
	}
	if got.Tasks != ix.Tasks || !reflect.DeepEqual(got.Shards, ix.Shards) || !reflect.DeepEqual(got.over, ix.over) ||
		!reflect.DeepEqual(got.cand, ix.cand) {
		t.Fatalf("read back\n%+v\n%+v\nwrote\n%+v\n%+v", got.over, got.cand, ix.over, ix.cand)
	}
	var ids []string
	got.Candidates(func(e *Entry, _ func(string) state.Status) bool { ids = append(ids, e.ID); return true })
	if fmt.Sprint(ids) != "[T3 T2]" {
		t.Errorf("candidates through the delta: %v", ids)
	}
	for _, at := range []int{len(data) / 2, len(data) - 2} {
		bad := append([]byte(nil), data...)
		bad[at] ^= 1
		if base.WithDelta(bad) != nil {
			t.Errorf("a delta changed at byte %d was read", at)
		}
	}
	other := testIndex(t, append(entries, Entry{ID: "T4", Status: state.Pending, Level: 1}))
	if other.WithDelta(data) != nil {
		t.Error("a delta was read on a file it was not made on")
	}
}
