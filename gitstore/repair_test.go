package gitstore

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitstore/reflog"
	"github.com/git-zerg/git-zerg/state"
)

// claimTx is a claim as the CLI makes it: the task, the worker's lease and
// a lock on the task's path, in one transaction.
func claimTx(worker, id string, clock func() time.Time) func(tx *Tx) (*Message, error) {
	return func(tx *Tx) (*Message, error) {
		tk, err := tx.Task(id)
		if err != nil {
			return nil, err
		}
		if tk.Status != state.Pending {
			return nil, fmt.Errorf("%s is %s", id, tk.Status)
		}
		now := clock()
		owner := worker + "@h"
		c := tk.Clone()
		c.Record(state.Event{Clock: tx.Clock() + 1, At: now, Op: "claim", To: state.Claimed, Worker: worker})
		c.Worker, c.Owner = worker, owner
		locks, err := tx.Locks()
		if err != nil {
			return nil, err
		}
		tx.SetLocks(append(locks, state.Lock{Path: "src/" + id, Owner: owner, Feature: tx.Feature(), Task: id, Created: now, Expires: now.Add(time.Hour)}))
		if err := tx.PutWorker(&state.Worker{Name: worker, Owner: owner, Task: id, Since: now, Expires: now.Add(time.Hour)}); err != nil {
			return nil, err
		}
		return &Message{Subject: "claim " + id + " by " + worker, Op: "claim", Task: id, Worker: worker}, tx.Put(c)
	}
}

// rollBack puts refs back to the given values without a reflog entry,
// as a concurrent `git pack-refs` does.
func rollBack(t *testing.T, dir string, to map[string]string) {
	t.Helper()
	for ref, h := range to {
		if err := os.WriteFile(filepath.Join(dir, ".git", filepath.FromSlash(ref)), []byte(h+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// doubleClaim plays the race git pack-refs causes: w2 reads the state and
// decides to claim T000; meanwhile w1 claims T000 (acknowledged), and
// pack-refs puts both refs back, so w2's compare-and-swap succeeds on top
// of the undone state. It returns w1's lost feature commit.
func doubleClaim(t *testing.T, dir string) (lost plumbing.Hash) {
	t.Helper()
	ctx := context.Background()
	plan(t, openStore(t, dir), "f", tasks(2))
	before := map[string]string{FeatureRef("f"): git(t, dir, "rev-parse", FeatureRef("f"))}
	w1 := openStore(t, dir)
	w2 := openStore(t, dir)
	t0 := time.Now()
	raced := false
	w2.beforeCommit = func() {
		if raced {
			return
		}
		raced = true
		before[LocksRef] = zeroOr(git(t, dir, "for-each-ref", "--format=%(objectname)", LocksRef))
		if err := w1.Update(ctx, "f", time.Now, claimTx("w1", "T000", func() time.Time { return t0 })); err != nil {
			t.Fatal(err)
		}
		lost = plumbing.NewHash(git(t, dir, "rev-parse", FeatureRef("f")))
		rollBack(t, dir, map[string]string{FeatureRef("f"): before[FeatureRef("f")]})
		if before[LocksRef] != "" {
			rollBack(t, dir, map[string]string{LocksRef: before[LocksRef]})
		} else {
			os.Remove(filepath.Join(dir, ".git", filepath.FromSlash(LocksRef)))
		}
	}
	if err := w2.Update(ctx, "f", time.Now, claimTx("w2", "T000", func() time.Time { return t0.Add(time.Millisecond) })); err != nil {
		t.Fatal(err)
	}
	if !raced {
		t.Fatal("the race was not played")
	}
	return lost
}

func zeroOr(s string) string { return strings.TrimSpace(s) }

// TestRollbackBuiltOnIsMergedBack: an acknowledged claim undone by git and
// then built on by another writer (the ref's last reflog entry is the
// other writer's, so looking at it alone finds nothing) is reported by
// Rollbacks, then merged back by the next read: the task and its path end
// with one holder, the same whichever order the two claims are merged in.
func TestRollbackBuiltOnIsMergedBack(t *testing.T) {
	dir := newRepo(t)
	lost := doubleClaim(t, dir)
	r := openStore(t, dir)

	rbs, err := r.Rollbacks("f")
	if err != nil {
		t.Fatal(err)
	}
	if len(rbs) != 1 || rbs[0].Commit != lost || rbs[0].Subject != "claim T000 by w1" || rbs[0].Ref != FeatureRef("f") {
		t.Fatalf("Rollbacks(f) = %+v, want w1's claim %s", rbs, lost)
	}
	// The locks ref was created by w1's claim, then removed: no reflog
	// of it outlives the ref. It is w2's now.
	if _, err := r.Rollbacks(""); err != nil {
		t.Fatal(err)
	}
	w2tip := plumbing.NewHash(git(t, dir, "rev-parse", FeatureRef("f")))

	tx, err := r.View("f")
	if err != nil {
		t.Fatal(err)
	}
	if rbs, err := r.Rollbacks("f"); err != nil || len(rbs) != 0 {
		t.Fatalf("after the read, Rollbacks(f) = %+v, %v; want none", rbs, err)
	}
	tk, err := tx.Task("T000")
	if err != nil {
		t.Fatal(err)
	}
	if tk.Status != state.Claimed {
		t.Fatalf("T000 is %s", tk.Status)
	}
	conflicts := 0
	for _, ev := range tk.History {
		if ev.Op == state.OpConflict {
			conflicts++
		}
	}
	if conflicts != 1 {
		t.Errorf("T000 records %d conflicts, want 1: %+v", conflicts, tk.History)
	}
	ws, err := tx.Workers()
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 1 || ws[tk.Worker] == nil {
		t.Errorf("leases %v: want only the winner %s's", ws, tk.Worker)
	}
	// Whichever side a machine calls its own, the merge is the same.
	for _, order := range [][2]plumbing.Hash{{w2tip, lost}, {lost, w2tip}} {
		res, err := r.MergeFeature(context.Background(), "f", order[0], order[1])
		if err != nil {
			t.Fatal(err)
		}
		if got, want := git(t, dir, "rev-parse", res.Commit.String()+"^{tree}"), git(t, dir, "rev-parse", FeatureRef("f")+"^{tree}"); got != want {
			t.Errorf("merge %s into %s gives tree %s, the repair %s", short(order[1]), short(order[0]), got, want)
		}
	}
	// The loser's next check finds its claim lost; its lock is gone.
	locks, err := tx.Locks()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range locks {
		if l.Path == "src/T000" && l.Owner != tk.Owner {
			t.Errorf("src/T000 locked by %s, but T000 is held by %s", l.Owner, tk.Owner)
		}
	}
}

// TestRollbackOfBothRefsMergedBack: pack-refs undid both refs of w1's
// claim; the lock w2 then took is on the same path. After the repair the
// path and the task have the same single holder.
func TestRollbackOfBothRefsMergedBack(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	// A first lock so that the locks ref exists, and its reflog records
	// w1's claim.
	now := time.Now()
	if err := s.Update(context.Background(), "", time.Now, func(tx *Tx) (*Message, error) {
		tx.SetLocks([]state.Lock{{Path: "docs/", Owner: "me@h", Created: now, Expires: now.Add(time.Hour)}})
		return &Message{Subject: "lock docs/", Op: "lock"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	doubleClaim(t, dir)
	r := openStore(t, dir)
	rbs, err := r.Rollbacks("")
	if err != nil || len(rbs) != 1 {
		t.Fatalf("Rollbacks(\"\") = %+v, %v; want w1's claim in the locks", rbs, err)
	}
	tx, err := r.View("f")
	if err != nil {
		t.Fatal(err)
	}
	tk, _ := tx.Task("T000")
	locks, err := tx.Locks()
	if err != nil {
		t.Fatal(err)
	}
	holders := map[string]string{}
	for _, l := range locks {
		holders[l.Path] = l.Owner
	}
	if holders["src/T000"] != tk.Owner || holders["docs/"] != "me@h" || len(holders) != 2 {
		t.Errorf("locks %v; want src/T000 held by T000's holder %s, and docs/", holders, tk.Owner)
	}
	for _, feature := range []string{"f", ""} {
		if rbs, err := r.Rollbacks(feature); err != nil || len(rbs) != 0 {
			t.Errorf("after the repair, Rollbacks(%q) = %+v, %v", feature, rbs, err)
		}
	}
}

// TestRollbackBelowCheckpoint: the reflog was checked up to a point (the
// checkpoint file written); then the ref goes back to a value older than
// the checkpoint, and a writer builds on it. The updates before the
// checkpoint are found missing all the same.
func TestRollbackBelowCheckpoint(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	plan(t, s, "f", tasks(2*reflog.CheckpointEvery))
	old := git(t, dir, "rev-parse", FeatureRef("f"))
	for i := 0; i < 2*reflog.CheckpointEvery; i++ {
		if err := setStatus(s, "f", fmt.Sprintf("T%03d", i), state.Done); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(s.Layout().ReflogChecked(FeatureRef("f"))); err != nil {
		t.Fatalf("no checkpoint written: %v", err)
	}
	rollBack(t, dir, map[string]string{FeatureRef("f"): old})
	// Another writer builds on the undone state before anyone looks (here
	// with git: a commit of the same state), so the ref's last reflog
	// entry is the ref's value; then a fresh process (the checkpoint
	// file, not this process's memory) makes a transition.
	built := git(t, dir, "-c", "user.name=t", "-c", "user.email=t@e", "commit-tree", old+"^{tree}", "-p", old, "-m", "state again\n\nZerg-Op: test")
	git(t, dir, "update-ref", FeatureRef("f"), built, old)
	fresh := openStore(t, dir)
	if err := setStatus(fresh, "f", "T000", state.Blocked); err != nil {
		t.Fatal(err)
	}
	for i, tk := range allTasks(t, fresh, "f") {
		want := state.Done
		if i == 0 {
			want = state.Blocked
		}
		if tk.Status != want {
			t.Errorf("%s is %s, want %s", tk.ID(), tk.Status, want)
		}
	}
}

// TestCheckpointSurvivesReflogRewrite: git gc expires old reflog entries
// by rewriting the file; the check then finds its place by the line, or
// reads the whole reflog, and still finds an undone update.
func TestCheckpointSurvivesReflogRewrite(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	plan(t, s, "f", tasks(2*reflog.CheckpointEvery))
	for i := 0; i < reflog.CheckpointEvery; i++ {
		if err := setStatus(s, "f", fmt.Sprintf("T%03d", i), state.Done); err != nil {
			t.Fatal(err)
		}
	}
	for _, rewrite := range []func(lines []string) []string{
		func(l []string) []string { return l[2:] },        // old entries expired
		func(l []string) []string { return l[len(l)-1:] }, // all but the last
	} {
		before := git(t, dir, "rev-parse", FeatureRef("f"))
		if err := setStatus(s, "f", "T010", state.Failed); err != nil {
			t.Fatal(err)
		}
		log := filepath.Join(dir, ".git", "logs", filepath.FromSlash(FeatureRef("f")))
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		lines := rewrite(strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n"))
		if err := os.WriteFile(log+".new", []byte(strings.Join(lines, "")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(log+".new", log); err != nil {
			t.Fatal(err)
		}
		rollBack(t, dir, map[string]string{FeatureRef("f"): before})
		if err := setStatus(s, "f", "T011", state.Blocked); err != nil {
			t.Fatal(err)
		}
		tx, err := s.View("f")
		if err != nil {
			t.Fatal(err)
		}
		if tk, _ := tx.Task("T010"); tk.Status != state.Failed {
			t.Fatalf("T010 is %s: the undone update was lost", tk.Status)
		}
		// Undo the marks for the next round.
		if err := setStatus(s, "f", "T010", state.Pending); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLoggedMoveStands: a move the reflog records (git update-ref by
// hand, rewinding the state) was made on purpose: it is neither merged
// back nor reported as undone.
func TestLoggedMoveStands(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	plan(t, s, "f", tasks(2))
	if err := setStatus(s, "f", "T000", state.Done); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "update-ref", FeatureRef("f"), FeatureRef("f")+"~1")
	if rbs, err := s.Rollbacks("f"); err != nil || len(rbs) != 0 {
		t.Errorf("Rollbacks(f) = %+v, %v; want none", rbs, err)
	}
	if err := setStatus(s, "f", "T001", state.Done); err != nil {
		t.Fatal(err)
	}
	if tk := allTasks(t, s, "f")[0]; tk.Status != state.Pending {
		t.Errorf("T000 is %s: the rewind by hand was undone", tk.Status)
	}
}

// TestReadRepairsPastLockedRef: a read that finds an acknowledged update
// undone, while the ref is locked (the pack-refs or writer that undid it
// still at work), tries the repair again instead of showing a state
// without the update.
func TestReadRepairsPastLockedRef(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	plan(t, s, "f", tasks(2))
	before := git(t, dir, "rev-parse", FeatureRef("f"))
	if err := setStatus(s, "f", "T000", state.Done); err != nil {
		t.Fatal(err)
	}
	rollBack(t, dir, map[string]string{FeatureRef("f"): before})
	lock := filepath.Join(dir, ".git", filepath.FromSlash(FeatureRef("f"))+".lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waits := 0
	defer func(w func(time.Duration)) { healWait = w }(healWait)
	healWait = func(time.Duration) {
		waits++
		os.Remove(lock) // the other process is done with the ref
	}
	fresh := openStore(t, dir)
	tx, err := fresh.View("f")
	if err != nil {
		t.Fatal(err)
	}
	tk, err := tx.Task("T000")
	if err != nil {
		t.Fatal(err)
	}
	if tk.Status != state.Done {
		t.Errorf("T000 reads %s after the repair, want done", tk.Status)
	}
	if waits == 0 {
		t.Error("the first repair succeeded on a locked ref: the test does not test the retry")
	}
}

// TestTripleClaimAllRecorded: three writers claim T000 from the same
// state while git undoes each update in turn (each read before the others
// wrote); after the repair the task has one holder and the history holds
// every acknowledged claim: the winner's, and the two others as conflicts.
func TestTripleClaimAllRecorded(t *testing.T) {
	dir := newRepo(t)
	ctx := context.Background()
	plan(t, openStore(t, dir), "f", tasks(2))
	x := git(t, dir, "rev-parse", FeatureRef("f"))
	undo := func() {
		rollBack(t, dir, map[string]string{FeatureRef("f"): x})
		os.Remove(filepath.Join(dir, ".git", filepath.FromSlash(LocksRef)))
	}
	ws := make([]*Store, 3)
	for i := range ws {
		ws[i] = openStore(t, dir)
	}
	t0 := time.Now()
	claim := func(i int) error {
		return ws[i].Update(ctx, "f", time.Now, claimTx(fmt.Sprintf("w%d", i+1), "T000", func() time.Time { return t0.Add(time.Duration(i) * time.Millisecond) }))
	}
	// w3 reads; before it writes, w2 reads; before w2 writes, w1 claims
	// and git undoes it; then w2's claim lands and is undone; then w3's.
	played := 0
	ws[1].beforeCommit = func() {
		if played == 1 {
			played++
			if err := claim(0); err != nil {
				t.Fatal(err)
			}
			undo()
		}
	}
	ws[2].beforeCommit = func() {
		if played == 0 {
			played++
			if err := claim(1); err != nil {
				t.Fatal(err)
			}
			undo()
		}
	}
	if err := claim(2); err != nil {
		t.Fatal(err)
	}
	if played != 2 {
		t.Fatalf("the race was played %d times of 2", played)
	}
	r := openStore(t, dir)
	tx, err := r.View("f")
	if err != nil {
		t.Fatal(err)
	}
	tk, err := tx.Task("T000")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, ev := range tk.History {
		switch ev.Op {
		case "claim":
			seen[ev.Worker] = true
		case state.OpConflict:
			for _, w := range []string{"w1", "w2", "w3"} {
				if strings.Contains(ev.Reason, "claim by "+w) && !strings.Contains(ev.Reason, "concurrent claim by "+w+" ") {
					seen[w] = true
				}
			}
		}
	}
	for _, w := range []string{"w1", "w2", "w3"} {
		if !seen[w] {
			t.Errorf("the claim by %s is not in the history: %+v", w, tk.History)
		}
	}
}

// TestLacksUpdatesAsksGitWhenUnsure: a writer must not build on a state
// that lacks an update the reflog records, even when this process cannot
// read that update's commit for a moment (git repack -a -d replacing the
// packs under it): built on, the writer's own last update would later be
// merged back as a lost conflict. The commit here is visible to git alone,
// through an object directory only its environment names.
func TestLacksUpdatesAsksGitWhenUnsure(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	plan(t, s, "f", tasks(1))
	ref := FeatureRef("f")
	tip := git(t, dir, "rev-parse", ref)
	elsewhere := filepath.Join(t.TempDir(), "objects")
	gitWith := func(env []string, args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	env := []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_OBJECT_DIRECTORY=" + elsewhere, "GIT_ALTERNATE_OBJECT_DIRECTORIES=" + filepath.Join(dir, ".git", "objects")}
	os.MkdirAll(elsewhere, 0o755)
	undone := gitWith(env, "commit-tree", "-p", tip, "-m", "an update git undid", tip+"^{tree}")
	// The reflog records the update; the ref is back at tip.
	line := fmt.Sprintf("%s %s A U Thor <a@example.com> 1700000000 +0000\tgit-zerg: update\n", tip, undone)
	f, err := os.OpenFile(filepath.Join(dir, ".git", "logs", filepath.FromSlash(ref)), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(line)
	f.Close()

	t.Setenv("GIT_ALTERNATE_OBJECT_DIRECTORIES", elsewhere)
	fresh := openStore(t, dir)
	if _, err := fresh.readCommit(plumbing.NewHash(undone)); err == nil {
		t.Fatal("the process reads the commit itself: the test shows nothing")
	}
	tx, err := fresh.begin("f")
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.lacksUpdates(context.Background(), tx); err == nil {
		t.Error("lacksUpdates = nil for a tip without the update the reflog records, unreadable in process for a moment")
	}
	// A commit git no longer has either (pruned long ago) is not waited for.
	os.RemoveAll(elsewhere)
	if err := openStore(t, dir).lacksUpdates(context.Background(), tx); err != nil {
		t.Errorf("lacksUpdates = %v for an update whose commit is gone", err)
	}
}

// TestWriterWaitsForEveryUndoneUpdate: after git undid w1's claim and w2
// built on the undone state, the reflog's last entry is w2's and the tip
// holds it: a writer that looked at that entry alone (as it did) built on
// a state without w1's claim whenever its own repair lost the race, and
// the merge-back then counted w1's claim a lost conflict. The check a
// writer makes before building looks at every entry since its checkpoint.
func TestWriterWaitsForEveryUndoneUpdate(t *testing.T) {
	dir := newRepo(t)
	lost := doubleClaim(t, dir)
	r := openStore(t, dir)
	tx, err := r.begin("f")
	if err != nil {
		t.Fatal(err)
	}
	err = r.lacksUpdates(context.Background(), tx)
	if err == nil || !strings.Contains(err.Error(), short(lost)) {
		t.Fatalf("lacksUpdates = %v, want w1's undone claim %s named", err, short(lost))
	}
	// Once repaired, the state read holds it and the writer may build.
	if err := r.repairAll(context.Background(), "f"); err != nil {
		t.Fatal(err)
	}
	if tx, err = r.begin("f"); err != nil {
		t.Fatal(err)
	}
	if err := r.lacksUpdates(context.Background(), tx); err != nil {
		t.Errorf("after the repair, lacksUpdates = %v", err)
	}
}
