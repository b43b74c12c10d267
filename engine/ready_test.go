package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
)

// TestReadyFromIndexIsReadyOrder: after random transitions, the ready tasks
// the index proposes are those ReadyOrder finds in a full read, in the same
// order, and a claim of the best ready task takes the first of them.
func TestReadyFromIndexIsReadyOrder(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"feature": "f", "tasks": [`)
	const n = 60
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		deps, risk := "", ""
		if i >= 20 {
			deps = fmt.Sprintf(`, "dependencies": ["T%02d"]`, i-20+(i%3))
		}
		if i%9 == 4 {
			risk = `, "risk": "high"`
		}
		fmt.Fprintf(&b, `{"id": "T%02d", "title": "t"%s%s, "verification": {"command": "true"}}`, i, deps, risk)
	}
	b.WriteString("]}")
	g, clock := newEngine(t, b.String(), nil)
	rng := rand.New(rand.NewPCG(13, 2))
	p := g.Policy()
	seen := map[state.Status]bool{}
	for step := 0; step < 80; step++ {
		id := fmt.Sprintf("T%02d", rng.IntN(n))
		w := fmt.Sprintf("w%d", rng.IntN(4))
		switch rng.IntN(7) {
		case 0, 1:
			// Without files there are no locks: the best ready task of a
			// full read is the one claimed.
			tx, err := g.View()
			if err != nil {
				t.Fatal(err)
			}
			ws, _ := tx.Workers()
			tasks, _ := tx.Tasks()
			ready := p.ReadyOrder(tasks, clock.Now())
			got, _, err := g.Claim(ClaimRequest{Worker: w})
			if err != nil && ws[w] == nil {
				t.Fatal(err)
			}
			if ws[w] == nil && len(ready) > 0 && (got == nil || got.ID() != ready[0].ID()) {
				t.Fatalf("step %d: claimed %v, the best ready task is %s", step, got, ready[0].ID())
			}
		case 2:
			g.Claim(ClaimRequest{Worker: w, Task: id})
		case 3:
			// Fail what a worker holds, if it holds something.
			if tx, err := g.View(); err == nil {
				if ws, err := tx.Workers(); err == nil && ws[w] != nil {
					g.Fail(Failure{Worker: w, Task: ws[w].Task, Reason: "no"})
				}
			}
		case 4:
			g.Approve(id)
		case 5:
			if tx, err := g.View(); err == nil {
				if ws, err := tx.Workers(); err == nil && ws[w] != nil {
					id = ws[w].Task
				}
			}
			markDone(t, g, clock, id)
		case 6:
			clock.Add(time.Duration(rng.IntN(40)) * time.Minute)
		}
		tx, ix := freshView(t, g)
		var got []string
		for _, e := range ReadyEntries(ix, p, clock.Now()) {
			got = append(got, e.ID)
		}
		tasks, err := tx.Tasks()
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range tasks {
			seen[tk.Status] = true
		}
		var want []string
		for _, tk := range p.ReadyOrder(tasks, clock.Now()) {
			want = append(want, tk.ID())
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("step %d: index proposes %v, a full read finds %v", step, got, want)
		}
		if got, want := waitingForIndex(ix, p, clock.Now()), waitingForTasks(tasks, p, clock.Now()); got != want {
			t.Fatalf("step %d: the index says %q, a full read %q", step, got, want)
		}
	}
	for _, st := range []state.Status{state.Pending, state.Claimed, state.Done, state.Failed} {
		if !seen[st] {
			t.Errorf("no task was ever %s: the test did not test much", st)
		}
	}
}

// TestReadyBestFirstIsReadyEntries: the order claim tries candidates in
// (the index's candidates, read in part) is ReadyEntries' (every entry,
// sorted), through changes, a rewritten delta and a new encoding.
func TestReadyBestFirstIsReadyEntries(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"feature": "f", "tasks": [`)
	const n = 120
	rng := rand.New(rand.NewPCG(13, 3))
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		deps := ""
		if i >= 30 && rng.IntN(2) == 0 {
			deps = fmt.Sprintf(`, "dependencies": ["T%03d"]`, rng.IntN(i))
		}
		fmt.Fprintf(&b, `{"id": "T%03d", "title": "t"%s, "verification": {"command": "true"}}`, i, deps)
	}
	b.WriteString("]}")
	g, clock := newEngine(t, b.String(), nil)
	p := g.Policy()
	for step := 0; step < 60; step++ {
		w := fmt.Sprintf("w%d", step)
		got, _, err := g.Claim(ClaimRequest{Worker: w})
		if err != nil {
			t.Fatal(err)
		}
		switch step % 3 {
		case 0:
			if _, _, err := g.Fail(Failure{Worker: w, Task: got.ID(), Reason: "no"}); err != nil {
				t.Fatal(err)
			}
		case 1:
			// Its dependents become candidates.
			markDone(t, g, clock, got.ID())
		}
		_, ix := freshView(t, g)
		var best, want []string
		readyBestFirst(ix, p, clock.Now(), func(e *gitstore.IndexEntry) bool { best = append(best, e.ID); return true })
		for _, e := range ReadyEntries(ix, p, clock.Now()) {
			want = append(want, e.ID)
		}
		if fmt.Sprint(best) != fmt.Sprint(want) {
			t.Fatalf("step %d: best first %v\nReadyEntries %v", step, best, want)
		}
	}
}

// markDone records a claimed task done, as a level merge leaves it; the
// engine's done needs real work, which is not what these tests are about.
// freshView is the feature's state now and its task index.
func freshView(t *testing.T, g *Engine) (*gitstore.Tx, *gitstore.Index) {
	t.Helper()
	tx, err := g.View()
	if err != nil {
		t.Fatal(err)
	}
	ix, err := tx.Index()
	if err != nil {
		t.Fatal(err)
	}
	return tx, ix
}

func markDone(t *testing.T, g *Engine, clock interface{ Now() time.Time }, id string) {
	t.Helper()
	err := g.Store.Update(context.Background(), g.Feature, clock.Now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		tk, err := tx.Task(id)
		if err != nil || tk.Status != state.Claimed {
			return nil, err
		}
		c := tk.Clone()
		c.Record(state.Event{Clock: tx.Clock() + 1, At: clock.Now(), Op: "done", To: state.Done, Worker: c.Worker})
		if err := tx.DeleteWorker(c.Worker); err != nil {
			return nil, err
		}
		return &gitstore.Message{Subject: "done " + id, Op: "done", Task: id, From: "claimed", To: "done"}, tx.Put(c)
	})
	if err != nil {
		t.Fatal(err)
	}
}
