package worktree

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// newWorker makes a repository and worker 1's linked worktree at its
// staging tip, which it returns.
func newWorker(t *testing.T) (*Manager, *Worker, string) {
	t.Helper()
	_, m := newRepo(t)
	ctx := context.Background()
	start, err := m.EnsureStaging(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	w, err := m.Add(ctx, 1, start)
	if err != nil {
		t.Fatal(err)
	}
	return m, w, start
}

// noIdentity leaves git with no author or committer at all: no variable
// and no config (newRepo's HOME is empty), as on a fresh CI machine.
func noIdentity(t *testing.T) {
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"} {
		t.Setenv(k, "")
	}
}

// leaveWork leaves in the worktree what a worker may: a changed tracked
// file, a deleted one, new files in a new directory, and files its ignore
// rules hide.
func leaveWork(t *testing.T, dir string) {
	write(t, dir, "a.txt", "changed\n")
	if err := os.Remove(filepath.Join(dir, "b.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "new.txt", "new\n")
	write(t, dir, "pkg/deep.txt", "deep\n")
	write(t, dir, ".env", "SECRET=1\n")
	write(t, dir, "x.local", "scratch\n")
}

func committedFiles(t *testing.T, dir, commit string) []string {
	return strings.Split(git(t, dir, "ls-tree", "-r", "--name-only", commit), "\n")
}

func TestCommitLeftovers(t *testing.T) {
	m, w, start := newWorker(t)
	ctx := context.Background()
	noIdentity(t)
	leaveWork(t, w.Dir)
	msg := "T1: a title\n\nCommitted by git-zerg: worker-1 left these changes uncommitted."
	if err := m.CommitLeftovers(ctx, *w, msg); err != nil {
		t.Fatal(err)
	}
	head := git(t, w.Dir, "rev-parse", "HEAD")
	if head == start || git(t, w.Dir, "rev-parse", "HEAD^") != start {
		t.Fatalf("HEAD %s is not one commit on %s", head, start)
	}
	if got := git(t, w.Dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>"); got != "git-zerg <git-zerg@localhost>|git-zerg <git-zerg@localhost>" {
		t.Errorf("author|committer = %s", got)
	}
	if got := git(t, w.Dir, "log", "-1", "--format=%B"); got != msg {
		t.Errorf("message = %q, want %q", got, msg)
	}
	files := committedFiles(t, w.Dir, head)
	want := []string{".gitignore", "a.txt", "c.txt", "d.txt", "new.txt", "pkg/deep.txt"}
	if !slices.Equal(files, want) {
		t.Errorf("committed files = %v, want %v", files, want)
	}
	if got := git(t, w.Dir, "show", head+":a.txt"); got != "changed" {
		t.Errorf("a.txt committed as %q", got)
	}
	// Ignored files are neither committed nor touched.
	for _, f := range []string{".env", "x.local"} {
		if _, err := os.Stat(filepath.Join(w.Dir, f)); err != nil {
			t.Errorf("ignored %s: %v", f, err)
		}
	}

	// Nothing left to commit is no error, and no commit.
	if err := m.CommitLeftovers(ctx, *w, msg); err != nil {
		t.Fatalf("clean worktree: %v", err)
	}
	if got := git(t, w.Dir, "rev-parse", "HEAD"); got != head {
		t.Errorf("clean worktree: HEAD moved to %s", got)
	}
}

// An identity the environment sets is the one git-zerg's commits carry.
func TestCommitLeftoversKeepsIdentityOfEnvironment(t *testing.T) {
	m, w, _ := newWorker(t)
	ctx := context.Background()
	t.Setenv("GIT_COMMITTER_NAME", "") // only this one falls back
	write(t, w.Dir, "new.txt", "new\n")
	if err := m.CommitLeftovers(ctx, *w, "m"); err != nil {
		t.Fatal(err)
	}
	if got := git(t, w.Dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>"); got != "Test Author <author@example.com>|git-zerg <committer@example.com>" {
		t.Errorf("author|committer = %s", got)
	}
}

func TestCommitLeftoversFailsInBrokenIndex(t *testing.T) {
	m, w, _ := newWorker(t)
	write(t, w.Dir, "new.txt", "new\n")
	index := git(t, w.Dir, "rev-parse", "--git-path", "index")
	if !filepath.IsAbs(index) {
		index = filepath.Join(w.Dir, index)
	}
	if err := os.WriteFile(index, []byte("not an index"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.CommitLeftovers(context.Background(), *w, "m"); err == nil {
		t.Fatal("CommitLeftovers in a corrupt index: no error")
	}
}

func TestSaveLeftoversThenResetWorker(t *testing.T) {
	m, w, start := newWorker(t)
	ctx := context.Background()
	noIdentity(t)

	// A clean worktree: nothing committed, HEAD returned.
	head, err := m.SaveLeftovers(ctx, *w, "leftovers of worker-1, saved by git-zerg")
	if err != nil || head != start {
		t.Fatalf("clean: SaveLeftovers = %s, %v; want %s", head, err, start)
	}

	leaveWork(t, w.Dir)
	head, err = m.SaveLeftovers(ctx, *w, "leftovers of worker-1, saved by git-zerg")
	if err != nil {
		t.Fatal(err)
	}
	if got := git(t, w.Dir, "rev-parse", "HEAD"); got != head || head == start {
		t.Fatalf("SaveLeftovers = %s, HEAD %s, start %s", head, got, start)
	}
	if got := git(t, w.Dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%B"); got != "git-zerg <git-zerg@localhost>|git-zerg <git-zerg@localhost>|leftovers of worker-1, saved by git-zerg" {
		t.Errorf("commit = %q", got)
	}
	if files := committedFiles(t, w.Dir, head); !slices.Contains(files, "pkg/deep.txt") || slices.Contains(files, ".env") || slices.Contains(files, "b.txt") {
		t.Errorf("committed files = %v", files)
	}

	// The reset leaves the branch at start; what was saved is in head,
	// what came after (untracked) and what is ignored stay on disk.
	write(t, w.Dir, "later.txt", "later\n")
	if err := m.ResetWorker(ctx, *w, start); err != nil {
		t.Fatal(err)
	}
	if got := git(t, w.Dir, "rev-parse", "HEAD"); got != start {
		t.Errorf("after reset HEAD = %s, want %s", got, start)
	}
	if got := git(t, w.Dir, "show", head+":new.txt"); got != "new" {
		t.Errorf("saved new.txt = %q", got)
	}
	for _, f := range []string{"later.txt", ".env", "x.local"} {
		if _, err := os.Stat(filepath.Join(w.Dir, f)); err != nil {
			t.Errorf("after reset %s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(w.Dir, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("after reset new.txt (tracked only in the saved commit): %v", err)
	}
}

func TestResetForTask(t *testing.T) {
	m, w, start := newWorker(t)
	ctx := context.Background()
	leaveWork(t, w.Dir)
	if err := m.CommitLeftovers(ctx, *w, "m"); err != nil {
		t.Fatal(err)
	}
	write(t, w.Dir, "verify.log", "log\n")
	write(t, w.Dir, "tmp/scratch.txt", "s\n")
	write(t, w.Dir, "a.txt", "edited after\n")
	if err := m.ResetForTask(ctx, *w, start); err != nil {
		t.Fatal(err)
	}
	if got := git(t, w.Dir, "rev-parse", "HEAD"); got != start {
		t.Errorf("HEAD = %s, want %s", got, start)
	}
	if st := git(t, w.Dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("status after ResetForTask:\n%s", st)
	}
	// Ignored files (.worktreeinclude's secrets, build caches) stay.
	for _, f := range []string{".env", "x.local"} {
		if _, err := os.Stat(filepath.Join(w.Dir, f)); err != nil {
			t.Errorf("ignored %s: %v", f, err)
		}
	}
}
