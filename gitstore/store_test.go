package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/state/statetest"
)

func newRepo(t *testing.T) string { return newRepoB(t) }

func newRepoB(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if tt, ok := t.(*testing.T); ok {
		tt.Setenv("HOME", dir)
	}
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, args := range [][]string{{"init", "-q", "-b", "main", dir}, {"-C", dir, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "i"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// openStore opens dir as a process of its own would: with a Repo of its
// own.
func openStore(t *testing.T, dir string) *Store { return openStoreB(t, dir) }

// openIn opens another store of s's Repo, as another goroutine of s's
// process would.
func openIn(t *testing.T, s *Store, dir string) *Store {
	t.Helper()
	o, err := s.Repo().Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func openStoreB(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func tasks(n int) []*state.Task { return statetest.Pending(n) }

func plan(t *testing.T, s *Store, feature string, ts []*state.Task) { planB(t, s, feature, ts) }

func planB(t testing.TB, s *Store, feature string, ts []*state.Task) {
	t.Helper()
	var ids []string
	for _, tk := range ts {
		ids = append(ids, tk.ID())
	}
	err := s.Create(context.Background(), feature, false, time.Now, func(tx *Tx) (*Message, error) {
		return &Message{Subject: "plan", Op: "plan"}, tx.Init(&state.Feature{Name: feature, Levels: [][]string{ids}}, ts)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func setStatus(s *Store, feature, id string, st state.Status) error {
	return s.Update(context.Background(), feature, time.Now, func(tx *Tx) (*Message, error) {
		return putStatus(tx, id, st)
	})
}

// putStatus records task id moving to st within tx.
func putStatus(tx *Tx, id string, st state.Status) (*Message, error) {
	tk, err := tx.Task(id)
	if err != nil {
		return nil, err
	}
	c := tk.Clone()
	c.Record(state.Event{Op: "test", To: st})
	return &Message{Subject: "set " + id, Op: "test", Task: id}, tx.Put(c)
}

func TestCreateViewUpdate(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	plan(t, s, "f", tasks(300))

	err := s.Create(context.Background(), "f", false, time.Now, func(tx *Tx) (*Message, error) {
		return &Message{Subject: "again"}, tx.Init(&state.Feature{Name: "f"}, tasks(1))
	})
	if !errors.Is(err, ErrExists) {
		t.Fatalf("second Create: %v, want ErrExists", err)
	}
	if err := setStatus(s, "f", "T007", state.Claimed); err != nil {
		t.Fatal(err)
	}
	tx, err := s.View("f")
	if err != nil {
		t.Fatal(err)
	}
	all, err := tx.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 300 {
		t.Fatalf("%d tasks, want 300", len(all))
	}
	for _, tk := range all {
		want := state.Pending
		if tk.ID() == "T007" {
			want = state.Claimed
		}
		if tk.Status != want {
			t.Errorf("%s is %s, want %s", tk.ID(), tk.Status, want)
		}
	}
	if tx.Clock() != 2 {
		t.Errorf("clock %d, want 2", tx.Clock())
	}
	// The audit log: one commit per transition, trailers readable.
	log, err := s.Log("f", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || log[0].Message.Task != "T007" || log[0].Message.Clock != 2 || log[1].Message.Op != "plan" {
		t.Fatalf("log = %+v", log)
	}
	// A transition rewrites one shard: the other shard trees are shared.
	diff := git(t, dir, "diff-tree", "-r", "--name-only", log[1].Hash.String(), log[0].Hash.String())
	if got := strings.Fields(diff); len(got) != 2 { // clock and the task blob
		t.Errorf("transition changed %v, want clock and one task", got)
	}
	if _, err := s.View("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("View(nope) = %v, want ErrNotFound", err)
	}
	git(t, dir, "fsck", "--strict", "--no-progress")
}

// TestCacheNeverStale reads through the cache after changes made by another
// Store (another process): the changed shard must be read again.
func TestCacheNeverStale(t *testing.T) {
	dir := newRepo(t)
	a, b := openStore(t, dir), openStore(t, dir) // two processes: no memo shared
	plan(t, a, "f", tasks(50))
	for i, st := range []state.Status{state.Claimed, state.Done, state.Failed} {
		// a full read fills the cache...
		tx, _ := a.View("f")
		if _, err := tx.Tasks(); err != nil {
			t.Fatal(err)
		}
		// ...another writer changes one task...
		if err := setStatus(b, "f", "T010", st); err != nil {
			t.Fatal(err)
		}
		// ...and the next full read sees it.
		tx, _ = a.View("f")
		all, err := tx.Tasks()
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range all {
			if tk.ID() == "T010" && tk.Status != st {
				t.Fatalf("round %d: T010 is %s, want %s", i, tk.Status, st)
			}
		}
	}
	// A corrupt cache file is only a slower read.
	if err := os.WriteFile(a.cachePath("f"), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	tx, _ := a.View("f")
	if all, err := tx.Tasks(); err != nil || len(all) != 50 {
		t.Fatalf("after corrupt cache: %d tasks, %v", len(all), err)
	}
}

// TestConcurrentUpdates has goroutines race on one feature, each with its
// own Store: as separate processes would (a memo each, compare-and-swap
// between them), and as a rush's goroutines do (one memo, reading while
// others commit; run with -race). Every update must land, every read be
// whole.
func TestConcurrentUpdates(t *testing.T) {
	for _, processes := range []bool{true, false} {
		dir := newRepo(t)
		shared := openStore(t, dir)
		plan(t, shared, "f", tasks(40))
		var wg sync.WaitGroup
		errs := make(chan error, 80)
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				s := openStore(t, dir) // a process of its own
				if !processes {
					s = openIn(t, shared, dir)
				}
				for i := g; i < 40; i += 4 {
					errs <- setStatus(s, "f", fmt.Sprintf("T%03d", i), state.Done)
					tx, err := s.View("f")
					if err == nil {
						var all []*state.Task
						if all, err = tx.Tasks(); err == nil && len(all) != 40 {
							err = fmt.Errorf("read %d tasks", len(all))
						}
					}
					errs <- err
				}
			}(g)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("processes=%v: %v", processes, err)
			}
		}
		fresh := openStore(t, dir)
		for _, tk := range allTasks(t, fresh, "f") {
			if tk.Status != state.Done {
				t.Errorf("processes=%v: %s is %s: an update was lost", processes, tk.ID(), tk.Status)
			}
		}
		if n := git(t, dir, "rev-list", "--count", FeatureRef("f")); n != "41" {
			t.Errorf("processes=%v: %s commits, want 41", processes, n)
		}
	}
}

// TestLostRaceRetries moves the ref between a transaction's read and its
// compare-and-swap: the transaction must run again on the new state.
func TestLostRaceRetries(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	plan(t, s, "f", tasks(3))
	other := openStore(t, dir)
	runs := 0
	s.beforeCommit = func() {
		if runs == 1 {
			if err := setStatus(other, "f", "T001", state.Blocked); err != nil {
				t.Error(err)
			}
		}
	}
	err := s.Update(context.Background(), "f", time.Now, func(tx *Tx) (*Message, error) {
		runs++
		tk, err := tx.Task("T002")
		if err != nil {
			return nil, err
		}
		c := tk.Clone()
		c.Record(state.Event{Op: "test", To: state.Done})
		return &Message{Subject: "x"}, tx.Put(c)
	})
	if err != nil {
		t.Fatal(err)
	}
	if runs != 2 {
		t.Errorf("fn ran %d times, want 2", runs)
	}
	tx, _ := s.View("f")
	t1, _ := tx.Task("T001")
	t2, _ := tx.Task("T002")
	if t1.Status != state.Blocked || t2.Status != state.Done {
		t.Errorf("T001 %s, T002 %s: one of the racing updates was lost", t1.Status, t2.Status)
	}
}

// TestLocksMoveWithFeature updates a feature and the locks ref in one
// transaction, and checks that a decision based on the locks is refused
// when the locks moved meanwhile.
func TestLocksMoveWithFeature(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	plan(t, s, "f", tasks(2))
	now := time.Now()
	err := s.Update(context.Background(), "f", time.Now, func(tx *Tx) (*Message, error) {
		tx.SetLocks([]state.Lock{{Path: "src/", Owner: "w@h", Created: now, Expires: now.Add(time.Hour)}})
		tk, _ := tx.Task("T000")
		c := tk.Clone()
		c.Record(state.Event{Op: "claim", To: state.Claimed})
		return &Message{Subject: "claim"}, tx.Put(c)
	})
	if err != nil {
		t.Fatal(err)
	}
	tx, _ := s.View("")
	locks, _ := tx.Locks()
	if len(locks) != 1 || locks[0].Path != "src/" {
		t.Fatalf("locks = %+v", locks)
	}
	// Read the locks, then have someone else lock meanwhile: the commit
	// must be retried, and the retry sees the new lock.
	other := openStore(t, dir)
	seen := []int{}
	s.beforeCommit = func() {
		if len(seen) == 1 {
			other.Update(context.Background(), "", time.Now, func(tx *Tx) (*Message, error) {
				ls, _ := tx.Locks()
				tx.SetLocks(append(ls, state.Lock{Path: "docs/", Owner: "u@h", Created: now, Expires: now.Add(time.Hour)}))
				return &Message{Subject: "lock docs/"}, nil
			})
		}
	}
	err = s.Update(context.Background(), "f", time.Now, func(tx *Tx) (*Message, error) {
		ls, err := tx.Locks()
		if err != nil {
			return nil, err
		}
		seen = append(seen, len(ls))
		tk, _ := tx.Task("T001")
		c := tk.Clone()
		c.Record(state.Event{Op: "claim", To: state.Claimed})
		return &Message{Subject: "claim"}, tx.Put(c)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[1] != 2 {
		t.Errorf("lock counts seen by the attempts: %v, want [1 2]", seen)
	}
}

func TestOpenLinkedWorktree(t *testing.T) {
	dir := newRepo(t)
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, dir, "worktree", "add", "-q", "-b", "w1", wt)
	s := openStore(t, filepath.Join(wt))
	main := openStore(t, dir)
	if s.CommonDir != main.CommonDir || s.GitDir == main.GitDir || s.Top != wt {
		t.Fatalf("worktree store: top %s git %s common %s; main common %s", s.Top, s.GitDir, s.CommonDir, main.CommonDir)
	}
	plan(t, main, "f", tasks(1))
	if _, err := s.View("f"); err != nil {
		t.Fatalf("feature planned in the main checkout is not visible from the worktree: %v", err)
	}
	if _, err := Open(context.Background(), t.TempDir()); !errors.Is(err, ErrNotRepo) {
		t.Errorf("Open outside a repository: %v, want ErrNotRepo", err)
	}
}

func TestAncestryAndChangedPaths(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	commit := func(files map[string]string, rm ...string) string {
		for name, content := range files {
			p := filepath.Join(dir, name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(content), 0o644)
		}
		for _, name := range rm {
			git(t, dir, "rm", "-q", name)
		}
		git(t, dir, "add", "-A")
		git(t, dir, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "c")
		return git(t, dir, "rev-parse", "HEAD")
	}
	base := commit(map[string]string{"a.txt": "1", "d/b.txt": "2", "keep": "k"})
	mid := commit(map[string]string{"a.txt": "changed", "d/new name.txt": "3"})
	git(t, dir, "mv", "d/b.txt", "d/c.txt")
	tip := commit(nil, "keep")
	h := plumbing.NewHash
	ctx := context.Background()
	for _, tc := range []struct {
		a, b string
		want bool
	}{{base, tip, true}, {mid, tip, true}, {tip, base, false}, {tip, tip, true}} {
		if got, err := s.IsAncestor(ctx, h(tc.a), h(tc.b)); err != nil || got != tc.want {
			t.Errorf("IsAncestor(%.7s, %.7s) = %v, %v; want %v", tc.a, tc.b, got, err, tc.want)
		}
	}
	got, err := s.ChangedPaths(h(base), h(tip))
	if err != nil {
		t.Fatal(err)
	}
	want := git(t, dir, "diff", "--name-only", "--no-renames", base, tip)
	if strings.Join(got, "\n") != want {
		t.Errorf("ChangedPaths = %q, git says %q", got, want)
	}
}

// TestPersistentUpdates runs transactions through one long-lived
// `git update-ref --stdin`, including a lost race, which ends that process
// and must start a new one.
func TestPersistentUpdates(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	s.Persistent = true
	plan(t, s, "f", tasks(5))
	other := openStore(t, dir)
	raced := false
	s.beforeCommit = func() {
		if !raced {
			raced = true
			if err := setStatus(other, "f", "T004", state.Blocked); err != nil {
				t.Error(err)
			}
		}
	}
	for i := 0; i < 4; i++ {
		if err := setStatus(s, "f", fmt.Sprintf("T%03d", i), state.Done); err != nil {
			t.Fatal(err)
		}
	}
	tx, _ := s.View("f")
	all, _ := tx.Tasks()
	for _, tk := range all {
		want := state.Done
		if tk.ID() == "T004" {
			want = state.Blocked
		}
		if tk.Status != want {
			t.Errorf("%s is %s, want %s", tk.ID(), tk.Status, want)
		}
	}
	if n := git(t, dir, "rev-list", "--count", FeatureRef("f")); n != "6" {
		t.Errorf("%s commits, want 6", n)
	}

	// Close ends the update-ref process (nothing outlives the command);
	// a later update starts another.
	cmd := s.refs.PipeProcess()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Exited() {
		t.Fatal("git update-ref --stdin still running after Close")
	}
	if err := setStatus(s, "f", "T000", state.Pending); err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// TestMergeDisjoint checks the in-process level merge against git's own
// 3-way merge on the same work, and its refusals.
func TestMergeDisjoint(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	write := func(files map[string]string) {
		for name, content := range files {
			p := filepath.Join(dir, name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(content), 0o644)
		}
	}
	commitAll := func(msg string) string {
		git(t, dir, "add", "-A")
		git(t, dir, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", msg)
		return git(t, dir, "rev-parse", "HEAD")
	}
	write(map[string]string{"a.txt": "a", "src/x/y.go": "y", "src/z.go": "z", "gone/only.txt": "g"})
	base := commitAll("base")
	git(t, dir, "branch", "staging", base)
	var pins []Pin
	for i, change := range []func(){
		func() { write(map[string]string{"src/x/y.go": "y2", "new/dir/n.txt": "n"}) },
		func() { git(t, dir, "rm", "-q", "-r", "gone") },
		func() { write(map[string]string{"a.txt": "a2"}); os.Chmod(filepath.Join(dir, "a.txt"), 0o755) },
	} {
		git(t, dir, "checkout", "-q", "--detach", base)
		change()
		pins = append(pins, Pin{Task: fmt.Sprint("T", i), Commit: commitAll(fmt.Sprint("T", i)), Base: base})
	}
	// What git's merge makes of the same work, one pin after the other.
	cur := base
	for _, p := range pins {
		tree := strings.Fields(git(t, dir, "merge-tree", "--write-tree", cur, p.Commit))[0]
		cur = git(t, dir, "-c", "user.name=t", "-c", "user.email=t@e", "commit-tree", tree, "-p", cur, "-p", p.Commit, "-m", "m")
	}
	want := git(t, dir, "rev-parse", cur+"^{tree}")
	sig := Signature("git-zerg", "z@e", time.Now())
	tip, tree, err := s.MergeDisjoint(context.Background(), "refs/heads/staging", base, pins, sig)
	if err != nil {
		t.Fatal(err)
	}
	if tree != want {
		t.Errorf("tree %s, git's merge gives %s:\n%s", tree, want, git(t, dir, "diff", "--stat", want, tree))
	}
	if got := git(t, dir, "rev-parse", "staging"); got != tip {
		t.Errorf("staging at %s, want %s", got, tip)
	}
	if n := git(t, dir, "rev-list", "--count", "--merges", base+".."+tip); n != "3" {
		t.Errorf("%s merge commits, want one per task", n)
	}
	git(t, dir, "fsck", "--strict", "--no-progress")

	// Two pins changing one path, or work based elsewhere: left to git.
	git(t, dir, "checkout", "-q", "--detach", tip)
	write(map[string]string{"src/z.go": "one"})
	p1 := Pin{Task: "P1", Commit: commitAll("p1"), Base: tip}
	git(t, dir, "checkout", "-q", "--detach", tip)
	write(map[string]string{"src/z.go": "two"})
	p2 := Pin{Task: "P2", Commit: commitAll("p2"), Base: tip}
	if _, _, err := s.MergeDisjoint(context.Background(), "refs/heads/staging", tip, []Pin{p1, p2}, sig); !errors.Is(err, ErrNotDisjoint) {
		t.Errorf("overlapping pins: %v, want ErrNotDisjoint", err)
	}
	p1.Base = base
	if _, _, err := s.MergeDisjoint(context.Background(), "refs/heads/staging", tip, []Pin{p1}, sig); !errors.Is(err, ErrNotDisjoint) {
		t.Errorf("pin based elsewhere: %v, want ErrNotDisjoint", err)
	}
	if got := git(t, dir, "rev-parse", "staging"); got != tip {
		t.Errorf("a refused merge moved staging")
	}
}

// TestRepairUndoneUpdate puts the state ref back to an older commit
// without a reflog entry, as a concurrent `git pack-refs` can (see
// repair.go): the next transaction moves it forward again before it reads,
// so the undone update is kept.
func TestRepairUndoneUpdate(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	plan(t, s, "f", tasks(3))
	planned := git(t, dir, "rev-parse", FeatureRef("f"))
	if err := setStatus(s, "f", "T000", state.Claimed); err != nil {
		t.Fatal(err)
	}
	claimed := git(t, dir, "rev-parse", FeatureRef("f"))
	// Undone behind our back, as pack-refs does it: the ref's value changes
	// without a reflog entry (a move made with git itself is logged, and
	// respected).
	if err := os.WriteFile(filepath.Join(dir, ".git", filepath.FromSlash(FeatureRef("f"))), []byte(planned+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := setStatus(openStore(t, dir), "f", "T001", state.Done); err != nil {
		t.Fatal(err)
	}
	tx, _ := s.View("f")
	t0, _ := tx.Task("T000")
	t1, _ := tx.Task("T001")
	if t0.Status != state.Claimed || t1.Status != state.Done {
		t.Errorf("T000 %s, T001 %s: the undone update was lost", t0.Status, t1.Status)
	}
	if parent := git(t, dir, "rev-parse", FeatureRef("f")+"^"); parent != claimed {
		t.Errorf("the new transition builds on %s, want the restored %s", parent, claimed)
	}
}

// TestRealFailureNotRetried: only a lost compare-and-swap or a held lock is
// worth another try; anything else git refuses comes back at once, not as
// "state kept changing" after the whole retry budget.
func TestRealFailureNotRetried(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	plan(t, s, "f", tasks(1))
	head := git(t, dir, "rev-parse", "HEAD")
	err := s.Update(context.Background(), "f", time.Now, func(tx *Tx) (*Message, error) {
		tk, _ := tx.Task("T000")
		c := tk.Clone()
		c.Record(state.Event{Op: "test", To: state.Done})
		tx.SetRef("refs/zerg/bad..name", head) // git refuses this ref name
		return &Message{Subject: "x"}, tx.Put(c)
	})
	if err == nil || errors.Is(err, ErrContention) {
		t.Fatalf("Update = %v, want git's refusal", err)
	}
	tx, _ := s.View("f")
	if tk, _ := tx.Task("T000"); tk.Status != state.Pending {
		t.Errorf("T000 is %s: the refused transaction was written", tk.Status)
	}
}

// TestStaleLockRemoved: a ref lock left by a killed process (SIGKILL in the
// middle of a transaction) blocks updates only until it is old enough to
// be taken for stale; a fresh one is respected.
func TestStaleLockRemoved(t *testing.T) {
	for _, persistent := range []bool{false, true} {
		dir := newRepo(t)
		s := openStore(t, dir)
		s.Persistent = persistent
		plan(t, s, "f", tasks(2))
		lock := filepath.Join(dir, ".git", "refs", "zerg", "features", "f.lock")

		// Fresh: someone is in the middle of an update. Respected.
		if err := os.WriteFile(lock, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		s.Retry = 300 * time.Millisecond
		if err := setStatus(s, "f", "T000", state.Done); !errors.Is(err, ErrContention) {
			t.Fatalf("persistent=%v: update through a fresh lock: %v", persistent, err)
		}
		if _, err := os.Stat(lock); err != nil {
			t.Fatalf("persistent=%v: a fresh lock was removed", persistent)
		}

		// Stale: removed, and the update goes through.
		old := time.Now().Add(-time.Minute)
		os.Chtimes(lock, old, old)
		s.Retry = 30 * time.Second
		if err := setStatus(s, "f", "T000", state.Done); err != nil {
			t.Fatalf("persistent=%v: update after a stale lock: %v", persistent, err)
		}
		if _, err := os.Stat(lock); !os.IsNotExist(err) {
			t.Fatalf("persistent=%v: stale lock still there", persistent)
		}
		s.Close()
	}
}

// emptyCommit commits nothing on dir's HEAD and returns the commit.
func emptyCommit(t *testing.T, dir, msg string) string {
	t.Helper()
	git(t, dir, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", msg)
	return git(t, dir, "rev-parse", "HEAD")
}

// TestInHistory: which of several commits a tip's history holds, asked in
// one git process; a commit the repository lacks is in none.
func TestInHistory(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	commit := func(msg string) string { return emptyCommit(t, dir, msg) }
	root := git(t, dir, "rev-parse", "HEAD")
	c1 := commit("one")
	git(t, dir, "checkout", "-q", "-b", "side", root)
	side := commit("side")
	git(t, dir, "checkout", "-q", "main")
	c2 := commit("two")
	missing := strings.Repeat("ab", 20)
	got, err := s.InHistory(context.Background(), c2, []string{root, c1, c2, side, missing})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{root: true, c1: true, c2: true, side: false}
	if len(got) != len(want) {
		t.Fatalf("InHistory = %v, want %v", got, want)
	}
	for c, in := range want {
		if got[c] != in {
			t.Errorf("%s in history: %v, want %v", c, got[c], in)
		}
	}
}

// TestBetweenAgreesWithGit: the in-process walk of a line of commits gives
// what git rev-list --topo-order --reverse gives, and histories with
// merges (which it leaves to git) do too; so does the merge of two tips a
// few commits apart, which skips git merge-base.
func TestBetweenAgreesWithGit(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	commit := func(msg string) string { return emptyCommit(t, dir, msg) }
	c1, c2, c3 := commit("1"), commit("2"), commit("3")
	git(t, dir, "checkout", "-q", "-b", "side", c1)
	s1 := commit("s1")
	git(t, dir, "checkout", "-q", "-")
	git(t, dir, "-c", "user.name=t", "-c", "user.email=t@e", "merge", "-q", "--no-ff", "-m", "m", "side")
	m := git(t, dir, "rev-parse", "HEAD")
	c4 := commit("4")
	ctx := context.Background()
	for _, tc := range [][2]string{{c3, c1}, {c3, c3}, {c2, c1}, {c4, c1}, {c4, c3}, {c4, s1}, {m, c3}, {c3, ""}, {c1, c3}} {
		got, err := s.Between(ctx, tc[0], tc[1])
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"rev-list", "--topo-order", "--reverse", tc[0]}
		if tc[1] != "" {
			args = append(args, "^"+tc[1])
		}
		if want := git(t, dir, args...); strings.Join(got, "\n") != want {
			t.Errorf("Between(%.7s, %.7s) = %q, git says %q", tc[0], tc[1], got, want)
		}
	}
	h := plumbing.NewHash
	for _, tc := range []struct{ local, remote, base string }{{c1, c3, c1}, {c3, c1, c1}, {c3, s1, c1}, {m, c3, c3}} {
		_, base, _, _, err := s.trivialMerge(ctx, h(tc.local), h(tc.remote))
		if err != nil || base != h(tc.base) {
			t.Errorf("merge base of %.7s and %.7s = %s, %v; want %.7s", tc.local, tc.remote, base, err, tc.base)
		}
	}
}
