package gitstore

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/git-zerg/git-zerg/gitstore/odb"
)

// TestPlanWritesOnePack: a plan's many objects go to one pack, which git
// reads as its own (fsck) and a fresh process reads back, but for the four
// the next transaction reads first (commit, root tree, clock, meta), kept
// loose; a transition after it writes loose objects as before.
func TestPlanWritesOnePack(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	before, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "??", "*"))
	plan(t, s, "f", tasks(3*odb.PackAbove))
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("%d packs after the plan, want 1", len(packs))
	}
	loose, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "??", "*"))
	if len(loose) != len(before)+4 {
		t.Fatalf("%d loose objects beside the pack, %d before the plan, want 4 more", len(loose), len(before))
	}
	tip := git(t, dir, "rev-parse", FeatureRef("f"))
	for _, rev := range []string{tip, tip + "^{tree}", tip + ":clock", tip + ":feature.json"} {
		h := git(t, dir, "rev-parse", rev)
		if _, err := os.Stat(filepath.Join(dir, ".git", "objects", h[:2], h[2:])); err != nil {
			t.Errorf("%s is not loose: %v", rev, err)
		}
	}
	git(t, dir, "fsck", "--strict", "--no-progress", "--no-dangling")

	fresh := openStore(t, dir)
	tx, err := fresh.View("f")
	if err != nil {
		t.Fatal(err)
	}
	all, err := tx.Tasks()
	if err != nil || len(all) != 3*odb.PackAbove {
		t.Fatalf("read back %d tasks, %v", len(all), err)
	}
	if err := setStatus(fresh, "f", "T001", "claimed"); err != nil {
		t.Fatal(err)
	}
	if after, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "??", "*")); len(after) == len(loose) {
		t.Fatal("a transition wrote no loose object")
	}
	if _, err := os.Stat(packs[0]); err != nil {
		t.Fatal(err)
	}
	if kept, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.keep")); len(kept) > 0 {
		t.Errorf("packs left kept after the plan: %v", kept)
	}
	git(t, dir, "fsck", "--strict", "--no-progress", "--no-dangling")
}

// A `git repack -a -d` between a plan's pack and its ref update packs what
// refs reach and deletes the packs it read: the plan's pack must be kept
// from it until the ref is there, or the plan points at nothing.
func TestPlanPackKeptUntilRefUpdated(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	repacked := 0
	s.afterObjects = func() {
		git(t, dir, "repack", "-a", "-d", "-q")
		repacked++
	}
	plan(t, s, "f", tasks(2*odb.PackAbove))
	if repacked != 1 {
		t.Fatalf("repacked %d times", repacked)
	}
	git(t, dir, "fsck", "--strict", "--no-progress", "--no-dangling")
	if kept, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.keep")); len(kept) > 0 {
		t.Errorf("packs left kept: %v", kept)
	}
	fresh := openStore(t, dir)
	tx, err := fresh.View("f")
	if err != nil {
		t.Fatal(err)
	}
	if all, err := tx.Tasks(); err != nil || len(all) != 2*odb.PackAbove {
		t.Fatalf("read back %d tasks, %v", len(all), err)
	}
}
