package gitstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore/taskindex"
	"github.com/git-zerg/git-zerg/state"
)

// TestIndexAgreesWithFullScan makes random transitions, in one process and
// in fresh ones (with and without the index file, before and after it is
// rewritten), and after each compares the index with a full read of the
// tasks: the index may only ever describe the state as it is.
func TestIndexAgreesWithFullScan(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	const n = 300
	ts := tasks(n)
	for i, tk := range ts {
		tk.Level = 1 + i/100
		if i >= 100 {
			tk.Spec.Dependencies = []string{ts[i-100].ID()}
			ts[i-100].Dependents = []string{tk.ID()}
		}
		if i%7 == 0 {
			tk.Spec.Risk = "high"
		}
	}
	plan(t, s, "f", ts)
	rng := rand.New(rand.NewPCG(13, 1))
	statuses := state.Statuses
	ctx := context.Background()
	for step := 0; step < 80; step++ {
		// One to three tasks change in one transition, in any way a
		// transition (or a sync merge) can change them.
		k := 1 + rng.IntN(3)
		err := s.Update(ctx, "f", time.Now, func(tx *Tx) (*Message, error) {
			for j := 0; j < k; j++ {
				id := fmt.Sprintf("T%03d", rng.IntN(n))
				tk, err := tx.Task(id)
				if err != nil {
					return nil, err
				}
				c := tk.Clone()
				c.Record(state.Event{Op: "test", To: statuses[rng.IntN(len(statuses))]})
				c.Attempts = rng.IntN(4)
				if rng.IntN(4) == 0 {
					c.NotBefore = time.Now().Add(time.Duration(rng.IntN(3)-1) * time.Hour).UTC().Truncate(time.Second)
				}
				if rng.IntN(3) == 0 {
					c.Approved = "someone"
				}
				if err := tx.Put(c); err != nil {
					return nil, err
				}
			}
			return &Message{Subject: "random", Op: "test"}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// The writer's own process, a fresh one, and (now and then) one
		// without the file.
		checkIndex(t, s, fmt.Sprintf("step %d, writer", step))
		if step%5 == 0 {
			os.Remove(s.indexPath("f"))
		}
		fresh := openStore(t, dir)
		checkIndex(t, fresh, fmt.Sprintf("step %d, fresh process", step))
	}

	// Another plan with the same ids in other levels: the index is
	// rebuilt, not brought forward.
	ts = tasks(n)
	for i, tk := range ts {
		tk.Level = 1 + (n-1-i)/150
	}
	var ids [][]string
	for l := 0; l < 2; l++ {
		var lv []string
		for i := n - 1 - l*150; i >= n-150-l*150; i-- {
			lv = append(lv, ts[i].ID())
		}
		ids = append(ids, lv)
	}
	err := s.Create(ctx, "f", true, time.Now, func(tx *Tx) (*Message, error) {
		return &Message{Subject: "plan", Op: "plan"}, tx.Init(&state.Feature{Name: "f", Levels: ids}, ts)
	})
	if err != nil {
		t.Fatal(err)
	}
	fresh := openStore(t, dir)
	checkIndex(t, fresh, "after another plan")
}

var scans int

func checkIndex(t *testing.T, s *Store, when string) {
	t.Helper()
	tx, err := s.View("f")
	if err != nil {
		t.Fatal(err)
	}
	ix, err := tx.Index()
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	// The full read, by a process that has seen nothing.
	scan := openStore(t, s.Top)
	scans++
	os.Remove(scan.cachePath("f"))
	os.Remove(scan.deltaPath("f"))
	stx, err := scan.View("f")
	if err != nil {
		t.Fatal(err)
	}
	all, err := stx.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	// An index for another plan would be rebuilt by every reader: right,
	// but as slow as no index.
	if ix.Meta != tx.root["feature.json"].Hash || ix.Tasks != tx.root["tasks"].Hash {
		t.Fatalf("%s: the index names plan %s and tasks %s, the state %s and %s", when,
			ix.Meta, ix.Tasks, tx.root["feature.json"].Hash, tx.root["tasks"].Hash)
	}
	if ix.Len() != len(all) {
		t.Fatalf("%s: index has %d tasks, the state %d", when, ix.Len(), len(all))
	}
	entries := ix.All()
	for i, tk := range all {
		want := taskindex.EntryOf(tk, entries[i].Blob)
		if got := entries[i]; !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: entry %d\n got %+v\nwant %+v", when, i, got, want)
		}
	}
	// The candidates, as a claim reads them (without All), from the same
	// index read afresh.
	status := map[string]state.Status{}
	for _, tk := range all {
		status[tk.ID()] = tk.Status
	}
	var want []string
	for _, tk := range all {
		ok := tk.Status == state.Pending || tk.Status == state.Failed
		for _, d := range tk.Deps() {
			ok = ok && status[d] == state.Done
		}
		if ok {
			want = append(want, tk.ID())
		}
	}
	sort.SliceStable(want, func(a, b int) bool {
		ea, _ := ix.Entry(want[a])
		eb, _ := ix.Entry(want[b])
		return gates.Better(ea.Level, ea.Dependents, eb.Level, eb.Dependents)
	})
	again, err := s.View("f")
	if err != nil {
		t.Fatal(err)
	}
	lazy, err := again.Index()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	lazy.Candidates(func(e *IndexEntry, _ func(string) state.Status) bool { got = append(got, e.ID); return true })
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: candidates\n%v\nwant\n%v", when, got, want)
	}
}
