package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/state"
)

// gitLoop runs a git command over and over in dir, as a user's (or git's
// own automatic) maintenance would beside git-zerg. The returned stop ends
// the loop once the command under way finishes (killing git gc would
// leave its children writing into the repository) and reports how many
// runs succeeded.
func gitLoop(t *testing.T, dir string, args ...string) (stop func() int) {
	t.Helper()
	var quit atomic.Bool
	done := make(chan int)
	go func() {
		n := 0
		for !quit.Load() {
			if exec.Command("git", append([]string{"-C", dir}, args...)...).Run() == nil {
				n++
			}
		}
		done <- n
	}()
	var once sync.Once
	var runs int
	stop = func() int {
		once.Do(func() {
			quit.Store(true)
			runs = <-done
		})
		return runs
	}
	t.Cleanup(func() { stop() })
	return stop
}

// ackedUpdate is one update a writer was told succeeded.
type ackedUpdate struct {
	task, mark string
}

// writeLoop makes n claim-like updates as one process would: each appends
// an event to the writer's own task and takes a new lock, both refs in one
// transaction. It returns the updates acknowledged and the errors.
func writeLoop(t *testing.T, dir string, w, n int) ([]ackedUpdate, []error) {
	s := openStore(t, dir)
	id := fmt.Sprintf("T%03d", w)
	var acked []ackedUpdate
	var errs []error
	for i := 0; i < n; i++ {
		mark := fmt.Sprintf("w%d-%d", w, i)
		err := s.Update(context.Background(), "f", time.Now, func(tx *Tx) (*Message, error) {
			tk, err := tx.Task(id)
			if err != nil {
				return nil, err
			}
			c := tk.Clone()
			c.Record(state.Event{Op: "test", To: state.Claimed, Reason: mark})
			locks, err := tx.Locks()
			if err != nil {
				return nil, err
			}
			now := time.Now()
			tx.SetLocks(append(locks, state.Lock{Path: mark, Owner: id, Created: now, Expires: now.Add(time.Hour)}))
			return &Message{Subject: "mark " + mark, Op: "test", Task: id}, tx.Put(c)
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", mark, err))
			continue
		}
		acked = append(acked, ackedUpdate{task: id, mark: mark})
		// Reads must survive maintenance as well as writes.
		if _, err := s.Features(); err != nil {
			errs = append(errs, fmt.Errorf("features after %s: %w", mark, err))
		}
	}
	return acked, errs
}

// lostUpdates lists the acknowledged updates the state lacks, read by a
// fresh store.
func lostUpdates(t *testing.T, dir string, acked []ackedUpdate) []string {
	t.Helper()
	s := openStore(t, dir)
	tx, err := s.View("f")
	if err != nil {
		t.Fatal(err)
	}
	locks, err := tx.Locks()
	if err != nil {
		t.Fatal(err)
	}
	locked := map[string]bool{}
	for _, l := range locks {
		locked[l.Path] = true
	}
	var lost []string
	for _, a := range acked {
		tk, err := tx.Task(a.task)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, ev := range tk.History {
			found = found || ev.Reason == a.mark
		}
		if !found {
			lost = append(lost, a.mark+" (task event)")
		}
		if !locked[a.mark] {
			lost = append(lost, a.mark+" (lock)")
		}
	}
	return lost
}

// TestAcknowledgedSurviveMaintenance runs writers, each its own store as
// separate processes are, beside loops of `git pack-refs --all`, `git gc`
// and `git repack -a -d`: every update acknowledged must be in the final
// state, and no read or write may fail because git moved refs or objects.
func TestAcknowledgedSurviveMaintenance(t *testing.T) {
	writers, updates := 6, 40
	if testing.Short() {
		writers, updates = 3, 12
	}
	dir := newRepo(t)
	plan(t, openStore(t, dir), "f", tasks(writers))
	loops := map[string]func() int{
		"pack-refs": gitLoop(t, dir, "pack-refs", "--all"),
		"gc":        gitLoop(t, dir, "gc", "--quiet"),
		"repack":    gitLoop(t, dir, "repack", "-a", "-d", "-q"),
	}
	var mu sync.Mutex
	var acked []ackedUpdate
	var errs []error
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			a, e := writeLoop(t, dir, w, updates)
			mu.Lock()
			acked, errs = append(acked, a...), append(errs, e...)
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	for name, stop := range loops {
		t.Logf("%s ran %d times", name, stop())
	}
	lost := lostUpdates(t, dir, acked)
	repairs := 0
	for _, ref := range []string{FeatureRef("f"), LocksRef} {
		repairs += len(splitLines(git(t, dir, "log", "--format=%s", "--grep=^repair", ref)))
	}
	t.Logf("%d updates acknowledged, %d lost, %d failed; %d undone updates merged back", len(acked), len(lost), len(errs), repairs)
	if len(errs) > 0 {
		t.Errorf("%d operations failed beside maintenance:\n%v", len(errs), errors.Join(errs...))
	}
	if len(lost) > 0 {
		// ZERG_LOST_DUMP=DIR keeps the repository for a look at its
		// reflogs: t.TempDir goes with the test.
		if d := os.Getenv("ZERG_LOST_DUMP"); d != "" {
			if err := exec.Command("cp", "-a", dir, d).Run(); err == nil {
				t.Logf("repository kept in %s", d)
			}
		}
		t.Errorf("%d acknowledged updates lost: %s", len(lost), strings.Join(lost, ", "))
	}
	// What fsck reports: nothing is left undone once the state was read.
	for _, feature := range []string{"f", ""} {
		if rbs, err := openStore(t, dir).Rollbacks(feature); err != nil || len(rbs) > 0 {
			t.Errorf("Rollbacks(%q) = %+v, %v", feature, rbs, err)
		}
	}
}

// TestReadsSurviveRepack reads the state over and over, each time as a new
// process would (nothing remembered) and as a long-lived one does, while
// git gc and git repack -a -d move every object into new packs and delete
// the old ones, and a writer keeps adding loose objects for them to move:
// no read may fail.
func TestReadsSurviveRepack(t *testing.T) {
	rounds := 150
	if testing.Short() {
		rounds = 30
	}
	dir := newRepo(t)
	plan(t, openStore(t, dir), "f", tasks(20))
	git(t, dir, "repack", "-a", "-d", "-q")
	stops := []func() int{gitLoop(t, dir, "repack", "-a", "-d", "-q"), gitLoop(t, dir, "gc", "--quiet")}
	writer := make(chan []error)
	go func() {
		_, errs := writeLoop(t, dir, 0, rounds/3)
		writer <- errs
	}()
	long := openStore(t, dir)
	var failures []error
	for i := 0; i < rounds; i++ {
		fresh := openStore(t, dir)
		for _, s := range []*Store{fresh, long} {
			tx, err := s.View("f")
			if err == nil {
				_, err = tx.Tasks()
			}
			if err == nil {
				_, err = s.Log("f", 0)
			}
			if err == nil {
				_, err = tx.Locks()
			}
			if err != nil {
				failures = append(failures, err)
			}
		}
	}
	failures = append(failures, <-writer...)
	for _, stop := range stops {
		stop()
	}
	if len(failures) > 0 {
		t.Errorf("%d of %d reads failed beside gc and repack:\n%v", len(failures), 2*rounds, errors.Join(failures...))
	}
}

// TestAcknowledgedSurvivePruneNow runs writers beside a loop of `git gc
// --prune=now`, which deletes every loose object no ref reaches when it
// looks, whatever its age: a transition's objects are written a moment
// before its ref moves, so a gc that listed the refs in between would
// delete them once the update is acknowledged. Every update acknowledged
// must be in the final state, and git fsck must find nothing missing.
func TestAcknowledgedSurvivePruneNow(t *testing.T) {
	writers, updates := 2, 12
	if testing.Short() {
		writers, updates = 2, 8
	}
	dir := newRepo(t)
	plan(t, openStore(t, dir), "f", tasks(writers))
	stop := gitLoop(t, dir, "gc", "--quiet", "--prune=now")
	var mu sync.Mutex
	var acked []ackedUpdate
	var errs []error
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			a, e := writeLoop(t, dir, w, updates)
			mu.Lock()
			acked, errs = append(acked, a...), append(errs, e...)
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	t.Logf("gc --prune=now ran %d times beside %d acknowledged updates", stop(), len(acked))
	if len(errs) > 0 {
		t.Errorf("%d operations failed beside gc --prune=now:\n%v", len(errs), errors.Join(errs...))
	}
	if out, err := exec.Command("git", "-C", dir, "fsck", "--no-progress", "--no-dangling").CombinedOutput(); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
	if lost := lostUpdates(t, dir, acked); len(lost) > 0 {
		t.Errorf("%d acknowledged updates lost: %s", len(lost), strings.Join(lost, ", "))
	}
}
