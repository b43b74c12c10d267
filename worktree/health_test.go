package worktree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// addWorker gives worker n a worktree at staging, with an uncommitted
// file in it.
func addWorker(t *testing.T, m *Manager, n int) *Worker {
	t.Helper()
	ctx := context.Background()
	staging, err := m.EnsureStaging(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	w, err := m.Add(ctx, n, staging)
	if err != nil {
		t.Fatal(err)
	}
	write(t, w.Dir, "work.txt", "uncommitted work\n")
	return w
}

func wantBroken(t *testing.T, m *Manager, w *Worker, detail string) {
	t.Helper()
	err := m.Check(context.Background(), *w)
	var we *Error
	if !errors.Is(err, errBroken) || !errors.As(err, &we) || !samePath(we.Dir, w.Dir) || !strings.Contains(err.Error(), detail) {
		t.Fatalf("Check = %v, want ErrBroken naming %s and saying %q", err, w.Dir, detail)
	}
}

// wantWhole: git works in the worktree again, on its own branch, with the
// uncommitted file still there.
func wantWhole(t *testing.T, m *Manager, w *Worker) {
	t.Helper()
	if err := m.Check(context.Background(), *w); err != nil {
		t.Fatalf("Check after repair: %v", err)
	}
	if got := git(t, w.Dir, "symbolic-ref", "HEAD"); got != "refs/heads/"+w.Branch {
		t.Fatalf("HEAD = %s, want %s", got, w.Branch)
	}
	if got := git(t, w.Dir, "status", "--porcelain"); got != "?? work.txt" {
		t.Fatalf("status = %q, want the uncommitted file alone", got)
	}
}

func TestCheckHealthy(t *testing.T) {
	_, m := newRepo(t)
	w := addWorker(t, m, 1)
	if err := m.Check(context.Background(), *w); err != nil {
		t.Fatalf("Check of a new worktree: %v", err)
	}
	if rep, err := m.Repair(context.Background(), *w); rep != nil || err != nil {
		t.Fatalf("Repair of a healthy worktree = %+v, %v; want nothing done", rep, err)
	}
}

// A .git file pointed at a directory that does not exist, or removed, or
// pointed at another worktree's registration, is written back; the other
// worktree is left alone (git worktree repair would rewrite its
// registration to name the broken one).
func TestRepairGitFile(t *testing.T) {
	top, m := newRepo(t)
	ctx := context.Background()
	w := addWorker(t, m, 1)
	other := addWorker(t, m, 2)
	otherAdmin, _ := readGitFile(filepath.Join(other.Dir, ".git"))
	cases := []struct {
		name, detail string
		breakIt      func()
	}{
		{"nowhere", "its .git file points to /nonexistent", func() { write(t, w.Dir, ".git", "gitdir: /nonexistent\n") }},
		{"gone", "its .git file is gone", func() { os.Remove(filepath.Join(w.Dir, ".git")) }},
		{"garbage", "names no git directory", func() { write(t, w.Dir, ".git", "not a git file\n") }},
		{"another", "does not name it back", func() { write(t, w.Dir, ".git", "gitdir: "+otherAdmin+"\n") }},
		{"link", "not a regular file", func() {
			os.Remove(filepath.Join(w.Dir, ".git"))
			if err := os.Symlink(filepath.Join(top, ".git"), filepath.Join(w.Dir, ".git")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.breakIt()
			wantBroken(t, m, w, c.detail)
			rep, err := m.Repair(ctx, *w)
			if err != nil || rep == nil || rep.Aside != "" || rep.Gone || !strings.Contains(rep.Problem, c.detail) {
				t.Fatalf("Repair = %+v, %v; want mended in place", rep, err)
			}
			wantWhole(t, m, w)
			if back := readLine(filepath.Join(otherAdmin, "gitdir")); !samePath(back, filepath.Join(other.Dir, ".git")) {
				t.Fatalf("the other worktree's registration now names %s", back)
			}
			wantWhole(t, m, other)
		})
	}
}

// A registration whose commondir a worker pointed at another repository
// is pointed back.
func TestRepairCommondir(t *testing.T) {
	_, m := newRepo(t)
	w := addWorker(t, m, 1)
	admin, _ := readGitFile(filepath.Join(w.Dir, ".git"))
	elsewhere := t.TempDir()
	git(t, elsewhere, "init", "-q")
	write(t, admin, "commondir", filepath.Join(elsewhere, ".git")+"\n")
	wantBroken(t, m, w, "commondir does not lead to")
	if rep, err := m.Repair(context.Background(), *w); err != nil || rep == nil || rep.Aside != "" {
		t.Fatalf("Repair = %+v, %v", rep, err)
	}
	wantWhole(t, m, w)
}

// A worktree made a repository of its own cannot be mended without losing
// that repository: it is moved aside whole, and the slot can be made
// again at its path.
func TestRepairMovesAside(t *testing.T) {
	_, m := newRepo(t)
	ctx := context.Background()
	w := addWorker(t, m, 1)
	os.Remove(filepath.Join(w.Dir, ".git"))
	git(t, w.Dir, "init", "-q")
	git(t, w.Dir, "add", "work.txt")
	git(t, w.Dir, "commit", "-q", "-m", "its own")
	wantBroken(t, m, w, "a repository of its own")
	rep, err := m.Repair(ctx, *w)
	if err != nil || rep == nil || rep.Aside != w.Dir+".broken" {
		t.Fatalf("Repair = %+v, %v; want it moved to %s.broken", rep, err, w.Dir)
	}
	if got := git(t, rep.Aside, "log", "--format=%s"); got != "its own" {
		t.Fatalf("moved-aside repository: log %q", got)
	}
	if ws, err := m.List(ctx); err != nil || len(ws) != 0 {
		t.Fatalf("List = %+v, %v; want the registration gone", ws, err)
	}
	w2, err := m.Add(ctx, 1, "HEAD")
	if err != nil || !samePath(w2.Dir, w.Dir) || m.Check(ctx, *w2) != nil {
		t.Fatalf("Add after moving aside = %+v, %v", w2, err)
	}
	// A second one goes beside the first, which is kept.
	os.Remove(filepath.Join(w2.Dir, ".git"))
	os.Mkdir(filepath.Join(w2.Dir, ".git"), 0o755)
	if rep, err := m.Repair(ctx, *w2); err != nil || rep == nil || rep.Aside != w.Dir+".broken-2" {
		t.Fatalf("second Repair = %+v, %v", rep, err)
	}
}

// A deleted worktree loses its registration; its branch, with what the
// worker committed, stays.
func TestRepairGone(t *testing.T) {
	_, m := newRepo(t)
	ctx := context.Background()
	w := addWorker(t, m, 1)
	c := commitFile(t, w.Dir, "work.txt", "committed\n")
	os.RemoveAll(w.Dir)
	wantBroken(t, m, w, "its directory is gone")
	rep, err := m.Repair(ctx, *w)
	if err != nil || rep == nil || !rep.Gone {
		t.Fatalf("Repair = %+v, %v; want Gone", rep, err)
	}
	if ws, err := m.List(ctx); err != nil || len(ws) != 0 {
		t.Fatalf("List = %+v, %v", ws, err)
	}
	if tip, err := m.BranchTip(ctx, 1); err != nil || tip != c {
		t.Fatalf("branch tip = %s, %v; want %s", tip, err, c)
	}
}

// Add mends what it finds broken, and says so; a worktree git no longer
// knows (its registration deleted) is moved aside instead of refused as
// someone else's directory.
func TestAddRepairs(t *testing.T) {
	_, m := newRepo(t)
	ctx := context.Background()
	w := addWorker(t, m, 1)
	os.Remove(filepath.Join(w.Dir, "work.txt"))
	write(t, w.Dir, ".git", "gitdir: /nonexistent\n")
	w2, err := m.Add(ctx, 1, "HEAD")
	if err != nil || w2.Repaired == nil || w2.Repaired.Aside != "" || m.Check(ctx, *w2) != nil {
		t.Fatalf("Add on a broken .git file = %+v, %v", w2, err)
	}

	admin, _ := readGitFile(filepath.Join(w.Dir, ".git"))
	os.RemoveAll(admin)
	w3, err := m.Add(ctx, 1, "HEAD")
	if err != nil || w3.Repaired == nil || w3.Repaired.Aside != w.Dir+".broken" || m.Check(ctx, *w3) != nil {
		t.Fatalf("Add on an orphaned worktree = %+v, %v", w3, err)
	}
	if _, err := os.Stat(filepath.Join(w.Dir+".broken", "a.txt")); err != nil {
		t.Fatalf("moved-aside files: %v", err)
	}

	// A directory that never was a worktree of this repository is still
	// refused: it may be someone's.
	other := filepath.Join(m.Root, "worker-2")
	write(t, other, "mine.txt", "not git-zerg's\n")
	if _, err := m.Add(ctx, 2, "HEAD"); !errors.Is(err, ErrOccupied) {
		t.Fatalf("Add over a stranger's directory = %v, want ErrOccupied", err)
	}
}

// MoveAside keeps everything, for a worktree in which git fails although
// it looks whole.
func TestMoveAside(t *testing.T) {
	_, m := newRepo(t)
	ctx := context.Background()
	w := addWorker(t, m, 1)
	admin, _ := readGitFile(filepath.Join(w.Dir, ".git"))
	write(t, admin, "index", "corrupt")
	if _, err := m.Dirty(ctx, w.Dir); err == nil {
		t.Fatal("git works with a corrupt index")
	}
	aside, err := m.MoveAside(ctx, *w)
	if err != nil || aside != w.Dir+".broken" {
		t.Fatalf("MoveAside = %s, %v", aside, err)
	}
	if b, err := os.ReadFile(filepath.Join(aside, "work.txt")); err != nil || string(b) != "uncommitted work\n" {
		t.Fatalf("moved-aside work.txt: %q, %v", b, err)
	}
	if w2, err := m.Add(ctx, 1, "HEAD"); err != nil || m.Check(ctx, *w2) != nil {
		t.Fatalf("Add after MoveAside = %+v, %v", w2, err)
	}
}
