package gitstore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/gitstore/codec"
	"github.com/git-zerg/git-zerg/state"
)

// TestReadPackedObjectsAndRefs: after git gc, objects come from a pack and
// refs from packed-refs; a loose ref shadows its packed value, as in git.
func TestReadPackedObjectsAndRefs(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	plan(t, s, "f", tasks(20))
	tip := git(t, dir, "rev-parse", FeatureRef("f"))
	git(t, dir, "gc", "-q", "--prune=now")
	if _, err := os.Stat(dir + "/.git/refs/zerg/features/f"); !os.IsNotExist(err) {
		t.Fatalf("the feature ref is still loose after gc (%v): the test reads nothing packed", err)
	}

	fresh := openStore(t, dir)
	got, err := fresh.ReadRef(FeatureRef("f"))
	if err != nil || got.String() != tip {
		t.Fatalf("packed ref: %s, %v; want %s", got, err, tip)
	}
	tx, err := fresh.View("f")
	if err != nil {
		t.Fatal(err)
	}
	all, err := tx.Tasks()
	if err != nil || len(all) != 20 {
		t.Fatalf("tasks from a pack: %d, %v", len(all), err)
	}

	// A new loose value wins over the packed one.
	if err := setStatus(fresh, "f", "T003", state.Done); err != nil {
		t.Fatal(err)
	}
	loose := git(t, dir, "rev-parse", FeatureRef("f"))
	if got, _ := fresh.ReadRef(FeatureRef("f")); got.String() != loose || loose == tip {
		t.Fatalf("loose ref %s read as %s (packed %s)", loose, got, tip)
	}
	// Missing refs and directories read as absent; symbolic refs are refused.
	for _, name := range []string{"refs/zerg/none", "refs/zerg/features", "refs/zerg/features/f/x"} {
		if h, err := fresh.ReadRef(name); err != nil || !h.IsZero() {
			t.Errorf("%s: %s, %v; want absent", name, h, err)
		}
	}
	git(t, dir, "symbolic-ref", "refs/zerg/sym", "refs/heads/main")
	if _, err := fresh.ReadRef("refs/zerg/sym"); err == nil || !strings.Contains(err.Error(), "symbolic") {
		t.Errorf("symbolic ref: %v", err)
	}
}

// TestMemoPerRepository: what one repository has must not pass for present
// in another, or an object would never be written there.
func TestMemoPerRepository(t *testing.T) {
	a, b := newRepo(t), newRepo(t)
	sa, sb := openStore(t, a), openStore(t, b)
	h, err := sa.writeBlob([]byte("only in a\n"))
	if err != nil {
		t.Fatal(err)
	}
	if sb.hasObject(h) {
		t.Fatal("b claims a's object")
	}
	if _, err := sb.writeBlob([]byte("only in a\n")); err != nil {
		t.Fatal(err)
	}
	git(t, b, "cat-file", "-e", h.String())
}

// TestMemoServesCopies: a caller changing the task it read (history
// included) must not change what the next transaction reads.
func TestMemoServesCopies(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	ts := tasks(5)
	for _, tk := range ts {
		tk.History = []state.Event{{Op: "plan", To: state.Pending}}
	}
	plan(t, s, "f", ts)
	read := func() *state.Task { return allTasks(t, s, "f")[0] }
	first := read()
	n := len(first.History)
	if n == 0 {
		t.Fatal("a planned task has no history")
	}
	first.Status = state.Blocked
	first.History[0].Op = "forged"
	first.History = append(first.History, state.Event{Op: "forged"})
	again := read()
	if again.Status != state.Pending || len(again.History) != n || again.History[0].Op == "forged" {
		t.Fatalf("a caller's change leaked into the memo: %+v", again)
	}
}

// TestMemoAfterCommit: the shard a transaction wrote is what the next one
// reads, without going back to git, and equal to what git holds.
func TestMemoAfterCommit(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	plan(t, s, "f", tasks(30))
	if err := setStatus(s, "f", "T007", state.Done); err != nil {
		t.Fatal(err)
	}
	warm := allTasks(t, s, "f")
	cold := openStore(t, dir)
	os.RemoveAll(filepath.Join(cold.Layout().Dir(), "cache"))
	fromGit := allTasks(t, cold, "f")
	for i := range warm {
		a, _ := codec.EncodeJSON(warm[i])
		b, _ := codec.EncodeJSON(fromGit[i])
		if !bytes.Equal(a, b) {
			t.Fatalf("task %s: memo has\n%s\ngit has\n%s", warm[i].ID(), a, b)
		}
	}
	if warm[7].Status != state.Done {
		t.Fatalf("T007 is %s", warm[7].Status)
	}
}

// TestWriteCache: a long-lived store writes no cache file per transaction,
// and one on WriteCache that a fresh process then reads.
func TestWriteCache(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	s.Persistent = true
	plan(t, s, "f", tasks(10))
	if err := setStatus(s, "f", "T001", state.Done); err != nil {
		t.Fatal(err)
	}
	tx, _ := s.View("f")
	if _, err := tx.Tasks(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.cachePath("f")); !os.IsNotExist(err) {
		t.Fatalf("cache file written during the run: %v", err)
	}
	legacy := s.Layout().LegacyCaches("f")[0] // the first format's file
	os.MkdirAll(filepath.Dir(legacy), 0o755)
	if err := os.WriteFile(legacy, []byte("gob"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteCache("f"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(legacy); err == nil {
		t.Fatal("the first format's task cache file is left behind")
	}
	c := s.loadCache("f")
	tx, _ = s.View("f")
	if err := tx.loadTasksTree(); err != nil {
		t.Fatal(err)
	}
	if len(c.Shards) != len(tx.tasksTree) {
		t.Fatalf("cache has %d shards, the feature %d", len(c.Shards), len(tx.tasksTree))
	}
	for name, te := range tx.tasksTree {
		if c.Shards[name].Hash != te.Hash {
			t.Fatalf("shard %s cached at %s, is %s", name, c.Shards[name].Hash, te.Hash)
		}
	}
}

// TestLeaseCacheFile: a fresh process reading many leases keeps them in a
// cache file, which the next fresh process reads instead of the blobs.
func TestLeaseCacheFile(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	plan(t, s, "f", tasks(1))
	err := s.Update(context.Background(), "f", time.Now, func(tx *Tx) (*Message, error) {
		for i := 0; i < 3*rewriteAfter; i++ {
			if err := tx.PutWorker(&state.Worker{Name: fmt.Sprintf("w%d", i), Task: "T000"}); err != nil {
				return nil, err
			}
		}
		return &Message{Subject: "leases", Op: "test"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	read := func() map[string]*state.Worker { // as a fresh process
		fresh := openStore(t, dir)
		tx, err := fresh.View("f")
		if err != nil {
			t.Fatal(err)
		}
		ws, err := tx.Workers()
		if err != nil {
			t.Fatal(err)
		}
		return ws
	}
	// The cache file of the first format (JSON) goes when the new one is
	// written.
	legacy := s.Layout().LegacyCaches("f")[2]
	os.MkdirAll(filepath.Dir(legacy), 0o755)
	if err := os.WriteFile(legacy, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := len(read()); n != 3*rewriteAfter {
		t.Fatalf("%d leases", n)
	}
	if _, err := os.Stat(legacy); err == nil {
		t.Fatal("the first format's lease cache file is left behind")
	}
	b, err := os.ReadFile(s.Layout().WorkersCache("f"))
	if err != nil {
		t.Fatalf("no lease cache file: %v", err)
	}
	blobs, err := codec.Workers.DecodeBlobs(b)
	if err != nil || len(blobs) != 3*rewriteAfter {
		t.Fatalf("cache file holds %d leases (%v)", len(blobs), err)
	}
	// The next process is served from the file: what it says is what it
	// gets, so a planted value shows through.
	for h, w := range blobs {
		if w.Name == "w0" {
			w.Host = "from-the-cache"
			blobs[h] = w
		}
	}
	b, _ = codec.Workers.EncodeBlobs(blobs)
	os.WriteFile(s.Layout().WorkersCache("f"), b, 0o644)
	if got := read()["w0"].Host; got != "from-the-cache" {
		t.Fatalf("lease read from git, not from the cache file (host %q)", got)
	}
}

// allTasks reads every task of a feature.
func allTasks(t *testing.T, s *Store, feature string) []*state.Task {
	t.Helper()
	tx, err := s.View(feature)
	if err != nil {
		t.Fatal(err)
	}
	all, err := tx.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// TestLinkedWorktreeRefs: a store opened in a linked worktree reads the
// shared refs from the common git dir and the worktree's own refs from its
// git dir, as git does (go-git's common-dir layout).
func TestLinkedWorktreeRefs(t *testing.T) {
	dir := newRepo(t)
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, dir, "worktree", "add", "-q", "-b", "side", wt)
	head := git(t, dir, "rev-parse", "HEAD")
	git(t, wt, "update-ref", "refs/worktree/mine", head)

	s := openStore(t, wt)
	if s.GitDir == s.CommonDir {
		t.Fatalf("linked worktree opened with one git dir %s", s.GitDir)
	}
	for name, want := range map[string]string{"refs/heads/main": head, "refs/heads/side": head, "refs/worktree/mine": head} {
		if got, err := s.ReadRef(name); err != nil || got.String() != want {
			t.Errorf("from the worktree, %s = %s, %v; want %s", name, got, err, want)
		}
	}
	main := openStore(t, dir)
	if got, err := main.ReadRef("refs/worktree/mine"); err != nil || !got.IsZero() {
		t.Errorf("from the main checkout, the worktree's own ref reads %s, %v", got, err)
	}
}

// TestCacheDelta: after a transition, a fresh process rewrites only the
// small delta file, not the main cache; past deltaMax shards the delta is
// folded into the main file. Reads are right at every step.
func TestCacheDelta(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	plan(t, s, "f", tasks(1000))
	fresh := func(i int) *Store {
		f := openStore(t, dir)
		return f
	}
	allTasks(t, fresh(0), "f") // writes the main file
	main, err := os.Stat(s.cachePath("f"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		id := fmt.Sprintf("T%03d", i)
		if err := setStatus(fresh(100+i), "f", id, state.Done); err != nil {
			t.Fatal(err)
		}
		for _, tk := range allTasks(t, fresh(i), "f") {
			if tk.ID() == id && tk.Status != state.Done {
				t.Fatalf("%s read as %s after its change", id, tk.Status)
			}
		}
	}
	if now, _ := os.Stat(s.cachePath("f")); !now.ModTime().Equal(main.ModTime()) || now.Size() != main.Size() {
		t.Fatal("the main cache file was rewritten for a few changed shards")
	}
	d, ok := readTaskCache(s.deltaPath("f"))
	if !ok || len(d.Shards) == 0 || len(d.Shards) > 3 {
		t.Fatalf("delta file: %v, %d shards", ok, len(d.Shards))
	}
	// Many changed shards: folded into the main file, delta gone.
	err = s.Update(context.Background(), "f", time.Now, func(tx *Tx) (*Message, error) {
		for i := 100; i < 200; i++ {
			tk, err := tx.Task(fmt.Sprintf("T%03d", i))
			if err != nil {
				return nil, err
			}
			c := tk.Clone()
			c.Status = state.Blocked
			if err := tx.Put(c); err != nil {
				return nil, err
			}
		}
		return &Message{Subject: "many", Op: "test"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	blocked := 0
	for _, tk := range allTasks(t, fresh(9), "f") {
		if tk.Status == state.Blocked {
			blocked++
		}
	}
	if blocked != 100 {
		t.Fatalf("%d blocked, want 100", blocked)
	}
	if _, err := os.Stat(s.deltaPath("f")); !os.IsNotExist(err) {
		t.Fatalf("delta still there after folding: %v", err)
	}
	c, ok := readTaskCache(s.cachePath("f"))
	shards := len(strings.Split(git(t, dir, "ls-tree", FeatureRef("f")+":tasks"), "\n"))
	if !ok || len(c.Shards) != shards {
		t.Fatalf("main cache: %v, %d shards of %d", ok, len(c.Shards), shards)
	}
}

// TestMemoBounded: past its limits the memo starts over instead of
// growing, and reads stay right.
func TestMemoBounded(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	memoLimit, presentLimit := 4096, 16
	s.memo().objs.SetLimits(memoLimit, presentLimit)
	plan(t, s, "f", tasks(50))
	for i := 0; i < 10; i++ {
		if err := setStatus(s, "f", fmt.Sprintf("T%03d", i), state.Done); err != nil {
			t.Fatal(err)
		}
		done := 0
		for _, tk := range allTasks(t, s, "f") {
			if tk.Status == state.Done {
				done++
			}
		}
		if done != i+1 {
			t.Fatalf("after %d changes, %d done", i+1, done)
		}
		size, present := s.memo().objs.Usage()
		if size > memoLimit || present > presentLimit {
			t.Fatalf("memo holds %d bytes and %d hashes, limits %d and %d", size, present, memoLimit, presentLimit)
		}
	}
}
