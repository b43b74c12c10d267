package report

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/gitstore/storetest"
	"github.com/git-zerg/git-zerg/lazy"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/state/statetest"
	"github.com/git-zerg/git-zerg/view"
	"github.com/git-zerg/git-zerg/words"
)

func newStore(t *testing.T) *gitstore.Store { return storetest.New(t) }

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// plan stores a feature of n tasks in two levels, with the values the
// documents escape in their titles.
func plan(t *testing.T, s *gitstore.Store, n int) []string {
	t.Helper()
	var ts []*state.Task
	lv := [][]string{{}, {}}
	var ids []string
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("T%03d", i)
		sp := &levels.Task{ID: id, Title: statetest.Strings[i%len(statetest.Strings)], Files: levels.Files{Create: []string{id + ".go"}},
			Verification: levels.Verification{Command: "true", TimeoutSeconds: i % 3 * 30}}
		level := 1
		if i%4 == 3 {
			sp.Dependencies, level = []string{ids[i-1]}, 2
		}
		ts = append(ts, &state.Task{Spec: sp, Level: level, Status: state.Pending,
			History: []state.Event{{Clock: 1, At: t0, Op: "plan", To: state.Pending}}})
		lv[level-1] = append(lv[level-1], id)
		ids = append(ids, id)
	}
	err := s.Create(context.Background(), "f", false, func() time.Time { return t0 }, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		return &gitstore.Message{Subject: "plan f", Op: "plan"}, tx.Init(&state.Feature{Name: "f", Levels: lv}, ts)
	})
	if err != nil {
		t.Fatal(err)
	}
	return append(lv[0], lv[1]...)
}

// fail records a failure of each task, with what its attempt cost.
func fail(t *testing.T, s *gitstore.Store, ids ...string) {
	t.Helper()
	err := s.Update(context.Background(), "f", func() time.Time { return t0 }, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		for _, id := range ids {
			tk, err := tx.Task(id)
			if err != nil {
				return nil, err
			}
			tk.Status, tk.Attempts, tk.Reason, tk.Worker = state.Failed, tk.Attempts+1, "broke <here> \x1b[31m", "w1"
			tk.NotBefore = t0.Add(time.Minute).In(time.FixedZone("x", 3600))
			tk.History = append(tk.History, state.Event{Clock: tx.Clock() + 1, At: t0, Op: "fail", From: state.Pending, To: state.Failed,
				Usage: &state.Usage{CostUSD: 0.25, InputTokens: 100, OutputTokens: 7, Turns: 2, SessionID: "s-" + id}})
			if err := tx.Put(tk); err != nil {
				return nil, err
			}
		}
		return &gitstore.Message{Subject: "fail", Op: "fail"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// want is the status document as encoding/json writes it, from every task
// read at once.
func want(t *testing.T, s *gitstore.Store) []byte {
	t.Helper()
	sn := read(t, s)
	tasks, err := sn.StateTasks()
	if err != nil {
		t.Fatal(err)
	}
	counts := words.Counts(tasks)
	done := counts[string(state.Done)]
	doc := Status{Feature: sn.Feature, Complete: done == len(tasks), Progress: progressOf(done, len(tasks)), Counts: counts,
		Tasks: []Task{}, Levels: levelsOf(sn), Workers: []Worker{}, Locks: []Lock{}}
	var spent state.Usage
	for _, tk := range tasks {
		doc.Tasks = append(doc.Tasks, TaskOf(tk, false))
		u := tk.Spent()
		spent.Add(&u)
	}
	doc.Spent = usageOf(&spent)
	var buf bytes.Buffer
	if err := WriteJSON(&buf, doc); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func read(t *testing.T, s *gitstore.Store) *view.Snapshot {
	t.Helper()
	tx, err := s.View("f")
	if err != nil {
		t.Fatal(err)
	}
	sn, err := view.Read(s, tx, t0)
	if err != nil {
		t.Fatal(err)
	}
	return sn
}

// streamed writes the status document of a fresh snapshot, and returns it
// with the number of tasks read from the state, not the rendered cache.
func streamed(t *testing.T, s *gitstore.Store) ([]byte, int) {
	t.Helper()
	var buf bytes.Buffer
	misses, err := writeStatusJSON(&buf, read(t, s))
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), misses
}

// TestStatusStreamed holds the streamed status document to encoding/json
// of the same state, whatever the rendered cache holds: nothing, this
// build's tasks, stale ones, another build's, garbage.
func TestStatusStreamed(t *testing.T) {
	s := newStore(t)
	ids := plan(t, s, 120)
	path := cachePath(s, "f")
	check := func(what string, wantMisses int) {
		t.Helper()
		got, misses := streamed(t, s)
		if w := want(t, s); !bytes.Equal(w, got) {
			t.Fatalf("%s: streamed document differs%s", what, firstDiff(w, got))
		}
		if misses != wantMisses {
			t.Fatalf("%s: %d tasks read from the state, want %d", what, misses, wantMisses)
		}
	}
	check("no cache", len(ids))
	check("cache of every task", 0)

	fail(t, s, ids[5], ids[90])
	check("two tasks changed", 2)
	before, _ := os.ReadFile(path)
	check("two tasks changed, again", 2)
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("the cache was rewritten for two misses")
	}

	fail(t, s, ids[10:10+rewriteAfter]...)
	check("many tasks changed", 2+rewriteAfter)
	check("after the rewrite", 0)

	if err := os.WriteFile(path, []byte(cacheHeader(buildKey.Get())+"T000\tnot a hash\t5\nxx"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("a broken cache", len(ids))
	check("the broken cache rewritten", 0)
	long := cacheHeader(buildKey.Get()) + ids[0] + "\t" + strings.Repeat("ab", 30) + "\t2\n{}\n"
	if err := os.WriteFile(path, []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	check("a cache of long hashes", len(ids))

	defer func(k *lazy.Value[string]) { buildKey = k }(buildKey)
	buildKey = &lazy.Value[string]{Build: func() string { return "another build" }}
	check("another build's cache", len(ids))
	check("this build's cache", 0)

	s.DropCache("f")
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a deleted feature's rendered tasks are left: %v", err)
	}
}

// TestStatusEmptyFeature: a plan of no task still prints [] for its tasks.
func TestStatusEmptyFeature(t *testing.T) {
	s := newStore(t)
	plan(t, s, 0)
	got, _ := streamed(t, s)
	if w := want(t, s); !bytes.Equal(w, got) {
		t.Fatalf("streamed document differs%s", firstDiff(w, got))
	}
}
