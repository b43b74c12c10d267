package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// gitEnv isolates git from the host: no system or global config, a fixed
// author and committer.
func gitEnv(tb testing.TB) {
	tb.Setenv("HOME", tb.TempDir())
	tb.Setenv("XDG_CONFIG_HOME", "")
	tb.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	tb.Setenv("GIT_AUTHOR_NAME", "Test Author")
	tb.Setenv("GIT_AUTHOR_EMAIL", "author@example.com")
	tb.Setenv("GIT_COMMITTER_NAME", "Test Committer")
	tb.Setenv("GIT_COMMITTER_EMAIL", "committer@example.com")
}

func git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	out, err := (&gitcmd.Runner{Dir: dir}).Run(context.Background(), args...)
	if err != nil {
		tb.Fatal(err)
	}
	return strings.TrimRight(string(out), "\n")
}

func write(tb testing.TB, dir, name, content string) {
	tb.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func commitFile(tb testing.TB, dir, name, content string) string {
	tb.Helper()
	write(tb, dir, name, content)
	git(tb, dir, "add", "--", name)
	git(tb, dir, "commit", "-q", "-m", "change "+name)
	return git(tb, dir, "rev-parse", "HEAD")
}

// newRepo makes a repository with a few files on main and a Manager for
// feature "feat" whose worktrees go under the test's temp dir.
func newRepo(t *testing.T) (top string, m *Manager) {
	t.Helper()
	gitEnv(t)
	base := t.TempDir()
	top = filepath.Join(base, "repo")
	git(t, base, "init", "-q", "-b", "main", top)
	for _, f := range []string{"a.txt", "b.txt", "c.txt", "d.txt"} {
		write(t, top, f, f+"\n")
	}
	write(t, top, ".gitignore", ".env\nsecrets/\n*.local\n")
	git(t, top, "add", ".")
	git(t, top, "commit", "-q", "-m", "init")
	m = &Manager{Git: &gitcmd.Runner{Dir: top}, Feature: "feat", Root: defaultRoot(top, "feat")}
	return top, m
}

func TestNames(t *testing.T) {
	if got, want := defaultRoot("/src/app", "login"), "/src/.zerg-worktrees/app/login"; got != want {
		t.Errorf("DefaultRoot = %q, want %q", got, want)
	}
	if StagingBranch("f") != "zerg/f/staging" || workerBranch("f", 3) != "zerg/f/worker-3" {
		t.Error("branch names")
	}
	if f, n, ok := ParseWorkerBranch("refs/heads/zerg/a/b/worker-12"); !ok || f != "a/b" || n != 12 {
		t.Errorf("ParseWorkerBranch = %q %d %v", f, n, ok)
	}
	for _, b := range []string{"zerg/f/staging", "zerg/f/worker-", "zerg/f/worker-01", "zerg/worker-1", "main"} {
		if _, _, ok := ParseWorkerBranch(b); ok {
			t.Errorf("ParseWorkerBranch(%q) ok", b)
		}
	}
	if PortBase(0) != 20000 || PortBase(3)-PortBase(2) != portRange || PortBase(454)+portRange-1 > 65535 {
		t.Error("PortBase")
	}
}

func TestEnsureStaging(t *testing.T) {
	top, m := newRepo(t)
	ctx := context.Background()
	head := git(t, top, "rev-parse", "HEAD")
	c, err := m.EnsureStaging(ctx, "")
	if err != nil || c != head {
		t.Fatalf("EnsureStaging = %s, %v; want %s", c, err, head)
	}
	commitFile(t, top, "a.txt", "moved on\n")
	c, err = m.EnsureStaging(ctx, "HEAD")
	if err != nil || c != head {
		t.Fatalf("second EnsureStaging = %s, %v; want the existing %s", c, err, head)
	}
	if _, err := m.EnsureStaging(ctx, "nope"); err != nil {
		t.Fatalf("existing staging with a bad start: %v", err)
	}
	m2 := &Manager{Git: m.Git, Feature: "other"}
	if _, err := m2.EnsureStaging(ctx, "nope"); !errors.Is(err, ErrBadRevision) {
		t.Fatalf("bad start: %v, want ErrBadRevision", err)
	}
}

func TestAddReuseRemove(t *testing.T) {
	top, m := newRepo(t)
	ctx := context.Background()
	staging, err := m.EnsureStaging(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	w, err := m.Add(ctx, 1, staging)
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != "worker-1" || w.Branch != "zerg/feat/worker-1" || w.Dir != filepath.Join(m.Root, "worker-1") {
		t.Fatalf("worker = %+v", w)
	}
	if got := git(t, w.Dir, "symbolic-ref", "HEAD"); got != "refs/heads/zerg/feat/worker-1" {
		t.Fatalf("worktree HEAD = %s", got)
	}
	if got := git(t, w.Dir, "rev-parse", "HEAD"); got != staging {
		t.Fatalf("worktree at %s, want %s", got, staging)
	}

	// Another feature's worker is not listed.
	other := &Manager{Git: m.Git, Feature: "other", Root: defaultRoot(top, "other")}
	if _, err := other.Add(ctx, 1, staging); err != nil {
		t.Fatal(err)
	}
	ws, err := m.List(ctx)
	if err != nil || len(ws) != 1 || ws[0].N != 1 || !samePath(ws[0].Dir, w.Dir) || ws[0].Head != staging {
		t.Fatalf("List = %+v, %v", ws, err)
	}

	// The worker commits; the commit reaches staging; the next level
	// reuses the worktree at the new staging tip.
	c1 := commitFile(t, w.Dir, "a.txt", "worker 1\n")
	res, err := m.Merge(ctx, staging, []Pin{{Task: "T1", Commit: c1}})
	if err != nil || res.Conflict != nil {
		t.Fatalf("Merge = %+v, %v", res, err)
	}
	write(t, w.Dir, ".env", "ignored files do not count\n")
	w2, err := m.Add(ctx, 1, res.Tip)
	if err != nil {
		t.Fatalf("reuse: %v", err)
	}
	if !samePath(w2.Dir, w.Dir) || git(t, w.Dir, "rev-parse", "HEAD") != res.Tip {
		t.Fatalf("reused worktree not at staging tip")
	}

	// Uncommitted work: refused, and kept.
	write(t, w.Dir, "new.txt", "precious\n")
	_, err = m.Add(ctx, 1, res.Tip)
	var we *Error
	if !errors.Is(err, ErrDirty) || !errors.As(err, &we) || !samePath(we.Dir, w.Dir) || !slices.Contains(we.Paths, "new.txt") {
		t.Fatalf("Add on dirty worktree = %v, want ErrDirty naming it", err)
	}
	if err := m.Remove(ctx, *w, false); !errors.Is(err, ErrDirty) {
		t.Fatalf("Remove dirty = %v, want ErrDirty", err)
	}
	if b, err := os.ReadFile(filepath.Join(w.Dir, "new.txt")); err != nil || string(b) != "precious\n" {
		t.Fatal("uncommitted file lost")
	}

	// Committed but not in staging: refused, and kept.
	c2 := commitFile(t, w.Dir, "new.txt", "precious\n")
	_, err = m.Add(ctx, 1, res.Tip)
	if !errors.Is(err, ErrUnmerged) || !errors.As(err, &we) || we.Commits != 1 || !strings.Contains(err.Error(), "worker-1") {
		t.Fatalf("Add with unmerged commit = %v, want ErrUnmerged", err)
	}
	if err := m.Remove(ctx, *w, false); !errors.Is(err, ErrUnmerged) {
		t.Fatalf("Remove unmerged = %v, want ErrUnmerged", err)
	}
	if got := git(t, w.Dir, "rev-parse", "HEAD"); got != c2 {
		t.Fatalf("worker branch moved to %s", got)
	}

	// Merged: removed, branch and all.
	res, err = m.Merge(ctx, "", []Pin{{Task: "T2", Commit: c2}})
	if err != nil || res.Conflict != nil {
		t.Fatalf("Merge = %+v, %v", res, err)
	}
	if err := m.Remove(ctx, *w, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("worktree dir still there: %v", err)
	}
	if _, err := m.Git.Run(ctx, "rev-parse", "--verify", "-q", "refs/heads/zerg/feat/worker-1"); err == nil {
		t.Fatal("worker branch still there")
	}
	if ws, _ := m.List(ctx); len(ws) != 0 {
		t.Fatalf("List after Remove = %+v", ws)
	}
	if err := m.Remove(ctx, *w, false); err != nil {
		t.Fatalf("second Remove: %v", err)
	}

	// A branch with unmerged commits and no worktree is not reset by Add.
	wo, _ := other.List(ctx)
	oc := commitFile(t, wo[0].Dir, "b.txt", "other\n")
	if err := other.Remove(ctx, wo[0], false); !errors.Is(err, ErrUnmerged) {
		t.Fatalf("Remove without staging = %v, want ErrUnmerged", err)
	}
	git(t, top, "worktree", "remove", wo[0].Dir)
	if _, err := other.Add(ctx, 1, staging); !errors.Is(err, ErrUnmerged) {
		t.Fatalf("Add over unmerged branch = %v, want ErrUnmerged", err)
	}
	if got := git(t, top, "rev-parse", "zerg/other/worker-1"); got != oc {
		t.Fatal("unmerged branch was reset")
	}

	// force removes a dirty, unmerged worker.
	w3, err := m.Add(ctx, 3, res.Tip)
	if err != nil {
		t.Fatal(err)
	}
	commitFile(t, w3.Dir, "c.txt", "lost on purpose\n")
	write(t, w3.Dir, "d.txt", "dirty\n")
	if err := m.Remove(ctx, *w3, true); err != nil {
		t.Fatalf("forced Remove: %v", err)
	}
	if _, err := os.Stat(w3.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("forced Remove left the worktree")
	}
}

func TestAddPrunesAndRefusesOccupied(t *testing.T) {
	_, m := newRepo(t)
	ctx := context.Background()
	staging, _ := m.EnsureStaging(ctx, "")
	w, err := m.Add(ctx, 2, staging)
	if err != nil {
		t.Fatal(err)
	}
	// The worktree directory vanishes behind git's back: Add prunes and
	// recreates it.
	if err := os.RemoveAll(w.Dir); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Add(ctx, 2, staging); err != nil {
		t.Fatalf("Add after a stale worktree: %v", err)
	}
	// A non-empty directory that is not a worktree is not touched.
	occupiedDir := filepath.Join(m.Root, "worker-4")
	write(t, occupiedDir, "mine.txt", "x")
	if _, err := m.Add(ctx, 4, staging); !errors.Is(err, ErrOccupied) {
		t.Fatalf("Add into occupied dir = %v, want ErrOccupied", err)
	}
}

func TestWorktreeInclude(t *testing.T) {
	top, m := newRepo(t)
	ctx := context.Background()
	write(t, top, ".worktreeinclude", "# copied into each worker\n.env\nsecrets/\n*.local\n!skip.local\nuntracked.txt\n")
	write(t, top, ".env", "TOKEN=1\n")
	write(t, top, "secrets/deep/key", "k\n")
	write(t, top, "sub/app.local", "l\n")
	write(t, top, "skip.local", "negated\n")
	write(t, top, "untracked.txt", "not ignored, so not copied\n")
	write(t, top, "other.local.bak", "not matched\n")
	if err := os.Symlink(".env", filepath.Join(top, "link.local")); err != nil {
		t.Fatal(err)
	}
	m.Setup = `echo "$ZERG_PORT_BASE $ZERG_BRANCH" > setup.local`
	staging, _ := m.EnsureStaging(ctx, "")
	w, err := m.Add(ctx, 1, staging)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		".env":             "TOKEN=1\n",
		"secrets/deep/key": "k\n",
		"sub/app.local":    "l\n",
		"link.local":       "TOKEN=1\n",
		"setup.local":      "20100 zerg/feat/worker-1\n",
	} {
		b, err := os.ReadFile(filepath.Join(w.Dir, name))
		if err != nil || string(b) != want {
			t.Errorf("%s in worktree = %q, %v; want %q", name, b, err, want)
		}
	}
	if l, err := os.Readlink(filepath.Join(w.Dir, "link.local")); err != nil || l != ".env" {
		t.Errorf("symlink copied as %q, %v", l, err)
	}
	for _, name := range []string{"skip.local", "untracked.txt", "other.local.bak"} {
		if _, err := os.Lstat(filepath.Join(w.Dir, name)); err == nil {
			t.Errorf("%s copied", name)
		}
	}
	if dirty, err := m.Dirty(ctx, w.Dir); err != nil || dirty {
		t.Fatalf("copied files make the worktree dirty: %v %v", dirty, err)
	}

	// On reuse, a file the worktree already has is kept as it is.
	write(t, w.Dir, ".env", "TOKEN=worker\n")
	if _, err := m.Add(ctx, 1, staging); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(w.Dir, ".env")); string(b) != "TOKEN=worker\n" {
		t.Errorf(".env overwritten: %q", b)
	}

	// A failing setup command is handed back, with the worker.
	m.Setup = "echo boom >&2; exit 7"
	w2, err := m.Add(ctx, 2, staging)
	var se *SetupError
	if !errors.As(err, &se) || w2 == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("failing setup: %v, %+v", err, w2)
	}
}

func TestDirty(t *testing.T) {
	top, m := newRepo(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		change func()
	}{
		{"modified", func() { write(t, top, "a.txt", "x\n") }},
		{"staged", func() { write(t, top, "e.txt", "x\n"); git(t, top, "add", "e.txt") }},
		{"renamed", func() { git(t, top, "mv", "a.txt", "z.txt") }},
		{"untracked", func() { write(t, top, "u.txt", "x\n") }},
	} {
		git(t, top, "reset", "-q", "--hard")
		git(t, top, "clean", "-q", "-fd")
		if dirty, err := m.Dirty(ctx, top); err != nil || dirty {
			t.Fatalf("%s: clean repo dirty=%v %v", tc.name, dirty, err)
		}
		tc.change()
		if dirty, err := m.Dirty(ctx, top); err != nil || !dirty {
			t.Errorf("%s: dirty=%v %v", tc.name, dirty, err)
		}
	}
}

// workers adds n workers, each committing a change to its own file.
func workers(t *testing.T, m *Manager, staging string, files ...string) []Pin {
	t.Helper()
	var pins []Pin
	for i, f := range files {
		w, err := m.Add(context.Background(), i+1, staging)
		if err != nil {
			t.Fatal(err)
		}
		c := commitFile(t, w.Dir, f, fmt.Sprintf("%s by worker %d\n", f, i+1))
		pins = append(pins, Pin{Task: fmt.Sprintf("T%d", i+1), Commit: c})
	}
	return pins
}

func TestMergeLeavesCheckoutAlone(t *testing.T) {
	top, m := newRepo(t)
	ctx := context.Background()
	staging, _ := m.EnsureStaging(ctx, "")
	pins := workers(t, m, staging, "a.txt", "b.txt", "c.txt")

	// The user's checkout: an unstaged edit, a staged file, an untracked one.
	write(t, top, "d.txt", "user edit\n")
	write(t, top, "e.txt", "staged\n")
	git(t, top, "add", "e.txt")
	write(t, top, "f.txt", "untracked\n")
	look := func() []string {
		return []string{
			git(t, top, "status", "--porcelain"),
			git(t, top, "symbolic-ref", "HEAD"),
			git(t, top, "rev-parse", "HEAD"),
			git(t, top, "ls-files", "-s"),
			git(t, top, "diff"),
		}
	}
	before := look()

	t.Setenv("GIT_AUTHOR_NAME", "")
	t.Setenv("GIT_COMMITTER_NAME", "")
	t.Setenv("GIT_AUTHOR_EMAIL", "")
	t.Setenv("GIT_COMMITTER_EMAIL", "")
	res, err := m.Merge(ctx, staging, pins)
	if err != nil || res.Conflict != nil {
		t.Fatalf("Merge = %+v, %v", res, err)
	}
	if after := look(); !slices.Equal(before, after) {
		t.Fatalf("checkout changed:\nbefore %q\nafter  %q", before, after)
	}
	if !slices.Equal(res.Merged, []string{"T1", "T2", "T3"}) || res.Old != staging {
		t.Fatalf("result = %+v", res)
	}
	if got := git(t, top, "rev-parse", "zerg/feat/staging"); got != res.Tip {
		t.Fatalf("staging at %s, want %s", got, res.Tip)
	}
	if got := git(t, top, "rev-parse", res.Tip+"^{tree}"); got != res.Tree {
		t.Fatalf("Tree = %s, want %s", res.Tree, got)
	}
	for i, f := range []string{"a.txt", "b.txt", "c.txt"} {
		want := fmt.Sprintf("%s by worker %d", f, i+1)
		if got := git(t, top, "show", "zerg/feat/staging:"+f); got != want {
			t.Errorf("staging:%s = %q, want %q", f, got, want)
		}
	}
	if got := git(t, top, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%s|%P", "zerg/feat/staging"); !strings.HasPrefix(got,
		"git-zerg <git-zerg@localhost>|git-zerg <git-zerg@localhost>|merge T3 into staging|") {
		t.Fatalf("merge commit: %s", got)
	}
	if n := git(t, top, "rev-list", "--count", "--merges", staging+"..zerg/feat/staging"); n != "3" {
		t.Fatalf("%s merge commits, want 3", n)
	}

	// Merging the same pins again changes nothing.
	again, err := m.Merge(ctx, res.Tip, pins)
	if err != nil || again.Tip != res.Tip || len(again.Merged) != 0 || len(again.Skipped) != 3 || again.Tree != res.Tree {
		t.Fatalf("second Merge = %+v, %v", again, err)
	}
}

func TestMergeConflict(t *testing.T) {
	top, m := newRepo(t)
	ctx := context.Background()
	staging, _ := m.EnsureStaging(ctx, "")
	pins := workers(t, m, staging, "b.txt", "a.txt", "a.txt")
	res, err := m.Merge(ctx, staging, pins)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Conflict
	if c == nil || c.Task != "T3" || !slices.Equal(c.Files, []string{"a.txt"}) || c.Commit != pins[2].Commit {
		t.Fatalf("conflict = %+v", c)
	}
	if res.Tip != staging || len(res.Merged) != 0 {
		t.Fatalf("result after conflict = %+v", res)
	}
	if got := git(t, top, "rev-parse", "zerg/feat/staging"); got != staging {
		t.Fatal("staging moved despite the conflict")
	}
	var asErr error = c
	if !strings.Contains(asErr.Error(), "a.txt") {
		t.Fatal(asErr)
	}
}

func TestMergeStagingMoved(t *testing.T) {
	top, m := newRepo(t)
	ctx := context.Background()
	staging, _ := m.EnsureStaging(ctx, "")
	pins := workers(t, m, staging, "a.txt", "b.txt")
	// Someone else moves staging after this level started from it.
	git(t, top, "update-ref", "refs/heads/zerg/feat/staging", pins[0].Commit)
	res, err := m.Merge(ctx, staging, pins)
	if !errors.Is(err, ErrStagingMoved) {
		t.Fatalf("Merge = %+v, %v; want ErrStagingMoved", res, err)
	}
	if got := git(t, top, "rev-parse", "zerg/feat/staging"); got != pins[0].Commit {
		t.Fatal("staging overwritten")
	}
	// Staging moves while the merge runs: the compare-and-swap is lost.
	moved := git(t, top, "rev-parse", "zerg/feat/staging")
	beforeCAS = func() { git(t, top, "update-ref", "refs/heads/zerg/feat/staging", pins[1].Commit) }
	defer func() { beforeCAS = nil }()
	res, err = m.Merge(ctx, moved, pins[1:])
	if !errors.Is(err, ErrStagingMoved) || res.Tip != moved || len(res.Merged) != 0 {
		t.Fatalf("Merge racing a move = %+v, %v; want ErrStagingMoved", res, err)
	}
	if got := git(t, top, "rev-parse", "zerg/feat/staging"); got != pins[1].Commit {
		t.Fatal("the other writer's staging was overwritten")
	}
	beforeCAS = nil

	if _, err := m.Merge(ctx, "", nil); err != nil {
		t.Fatal(err)
	}
	other := &Manager{Git: m.Git, Feature: "none"}
	if _, err := other.Merge(ctx, "", pins); !errors.Is(err, ErrNoStaging) {
		t.Fatalf("Merge without staging = %v", err)
	}
	if _, err := m.Merge(ctx, "", []Pin{{Task: "T9", Commit: "nope"}}); !errors.Is(err, ErrBadRevision) {
		t.Fatalf("Merge of a bad pin = %v", err)
	}
}

func TestAddParallel(t *testing.T) {
	_, m := newRepo(t)
	ctx := context.Background()
	staging, _ := m.EnsureStaging(ctx, "")
	errs := make(chan error, 6)
	for n := 1; n <= 6; n++ {
		go func() { _, err := m.Add(ctx, n, staging); errs <- err }()
	}
	for range 6 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if ws, err := m.List(ctx); err != nil || len(ws) != 6 {
		t.Fatalf("List = %+v, %v", ws, err)
	}
}

func TestMergeRefusesCheckedOutStaging(t *testing.T) {
	top, m := newRepo(t)
	ctx := context.Background()
	staging, _ := m.EnsureStaging(ctx, "")
	pins := workers(t, m, staging, "a.txt")
	git(t, top, "checkout", "-q", "zerg/feat/staging")
	if _, err := m.Merge(ctx, staging, pins); !errors.Is(err, ErrCheckedOut) {
		t.Fatalf("Merge = %v, want ErrCheckedOut", err)
	}
}

func TestStagingWorktree(t *testing.T) {
	_, m := newRepo(t)
	ctx := context.Background()
	if _, err := m.StagingWorktree(ctx); !errors.Is(err, ErrNoStaging) {
		t.Fatalf("without staging: %v", err)
	}
	staging, _ := m.EnsureStaging(ctx, "")
	dir, err := m.StagingWorktree(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := git(t, dir, "rev-parse", "HEAD"); got != staging {
		t.Fatalf("staging worktree at %s", got)
	}
	if _, err := (&gitcmd.Runner{Dir: dir}).Run(ctx, "symbolic-ref", "-q", "HEAD"); err == nil {
		t.Fatal("staging worktree is not detached")
	}
	res, err := m.Merge(ctx, staging, workers(t, m, staging, "a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "coverage.out", "left by a gate\n")
	dir2, err := m.StagingWorktree(ctx)
	if err != nil || dir2 != dir || git(t, dir, "rev-parse", "HEAD") != res.Tip {
		t.Fatalf("update: %s %v", dir2, err)
	}
	write(t, dir, "a.txt", "a gate edited a source\n")
	if _, err := m.StagingWorktree(ctx); !errors.Is(err, ErrDirty) {
		t.Fatalf("dirty staging worktree: %v", err)
	}
	if ws, _ := m.List(ctx); len(ws) != 1 {
		t.Fatalf("List includes the staging worktree: %+v", ws)
	}
}

// BenchmarkLevelMerge merges 8 worker branches, each changing 5 files of a
// 10,000-file repository, into staging: one Merge per iteration.
func BenchmarkLevelMerge(b *testing.B) {
	gitEnv(b)
	ctx := context.Background()
	top := filepath.Join(b.TempDir(), "big")
	git(b, filepath.Dir(top), "init", "-q", "-b", "main", top)

	const files, nworkers, perWorker = 10000, 8, 5
	path := func(i int) string { return fmt.Sprintf("d%02d/f%04d.txt", i%100, i) }
	var s strings.Builder
	data := func(content string) { fmt.Fprintf(&s, "data %d\n%s\n", len(content), content) }
	s.WriteString("commit refs/heads/main\nmark :1\ncommitter A <a@example.com> 1700000000 +0000\n")
	data("base")
	for i := range files {
		fmt.Fprintf(&s, "M 100644 inline %s\n", path(i))
		data(fmt.Sprintf("file %d\nline two\n", i))
	}
	for w := range nworkers {
		fmt.Fprintf(&s, "commit refs/heads/w%d\ncommitter A <a@example.com> 1700000100 +0000\n", w)
		data(fmt.Sprintf("worker %d", w))
		s.WriteString("from :1\n")
		for k := range perWorker {
			i := (w*perWorker + k) * 211 % files // distinct files, spread out
			fmt.Fprintf(&s, "M 100644 inline %s\n", path(i))
			data(fmt.Sprintf("file %d changed by worker %d\nline two\n", i, w))
		}
	}
	r := &gitcmd.Runner{Dir: top}
	if _, err := r.RunWith(ctx, gitcmd.Call{Stdin: strings.NewReader(s.String())}, "fast-import", "--quiet"); err != nil {
		b.Fatal(err)
	}
	m := &Manager{Git: r, Feature: "bench"}
	base, err := m.EnsureStaging(ctx, "main")
	if err != nil {
		b.Fatal(err)
	}
	var pins []Pin
	for w := range nworkers {
		pins = append(pins, Pin{Task: fmt.Sprintf("T%d", w), Commit: git(b, top, "rev-parse", fmt.Sprintf("w%d", w))})
	}
	if n := git(b, top, "ls-tree", "-r", "--name-only", "main"); strings.Count(n, "\n")+1 != files {
		b.Fatal("repository does not have 10,000 files")
	}

	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		git(b, top, "update-ref", "refs/heads/zerg/bench/staging", base)
		b.StartTimer()
		res, err := m.Merge(ctx, base, pins)
		if err != nil || res.Conflict != nil || len(res.Merged) != nworkers {
			b.Fatalf("Merge = %+v, %v", res, err)
		}
	}
}

// TestInterruptedAdd: a `git worktree add` killed half-way leaves a
// worktree locked "initializing" (and perhaps without a valid HEAD). Add
// rebuilds it and Remove removes it; git alone refuses both.
func TestInterruptedAdd(t *testing.T) {
	top, m := newRepo(t)
	ctx := context.Background()
	staging, _ := m.EnsureStaging(ctx, "")
	half := func(n int) string {
		dir := filepath.Join(m.Root, fmt.Sprintf("worker-%d", n))
		git(t, top, "worktree", "add", "-q", "--lock", "--reason", "initializing", "-B", workerBranch(m.Feature, n), dir, staging)
		// What a kill before the checkout finished leaves: files missing.
		os.Remove(filepath.Join(dir, "a.txt"))
		return dir
	}
	dir := half(1)
	ws, err := m.List(ctx)
	if err != nil || len(ws) != 1 || !ws[0].Interrupted {
		t.Fatalf("List: %+v, %v; want worker-1 interrupted", ws, err)
	}
	w, err := m.Add(ctx, 1, staging)
	if err != nil {
		t.Fatalf("Add over an interrupted add: %v", err)
	}
	if w.Dir != dir {
		t.Fatalf("rebuilt at %s, want %s", w.Dir, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); err != nil {
		t.Fatal("the rebuilt worktree lacks a checked-out file")
	}
	if ws, _ := m.List(ctx); ws[0].Interrupted {
		t.Fatal("still locked after the rebuild")
	}

	half(2)
	if err := m.Remove(ctx, Worker{N: 2}, false); err != nil {
		t.Fatalf("Remove of an interrupted add: %v", err)
	}
	if ws, _ := m.List(ctx); len(ws) != 1 {
		t.Fatalf("%d worktrees left, want 1", len(ws))
	}

	// Killed before git wrote the worktree's .git file: git refuses to
	// remove it even with a double force ("validation failed").
	for _, broken := range []func(dir string){
		func(dir string) { os.Remove(filepath.Join(dir, ".git")) },
		func(dir string) { os.WriteFile(filepath.Join(dir, ".git"), nil, 0o644) },
	} {
		dir := half(3)
		broken(dir)
		if w, err := m.Add(ctx, 3, staging); err != nil || w.Dir != dir {
			t.Fatalf("Add over an add killed before its .git file: %+v, %v", w, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "a.txt")); err != nil {
			t.Fatal("the rebuilt worktree lacks a checked-out file")
		}
		if err := m.Remove(ctx, Worker{N: 3}, false); err != nil {
			t.Fatal(err)
		}
		half(4)
		broken(filepath.Join(m.Root, "worker-4"))
		if err := m.Remove(ctx, Worker{N: 4}, false); err != nil {
			t.Fatalf("Remove of an add killed before its .git file: %v", err)
		}
		if ws, _ := m.List(ctx); len(ws) != 1 {
			t.Fatalf("%d worktrees left, want 1", len(ws))
		}
	}
}

// A worker branch's lock file that a git killed with its rush left
// behind does not stop the next rush from making the worktree, or from
// moving a worktree that exists to its new start; any other lock still
// does.
func TestStaleBranchLock(t *testing.T) {
	top, m := newRepo(t)
	start := git(t, top, "rev-parse", "HEAD")
	if _, err := m.EnsureStaging(context.Background(), start); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(top, ".git", "refs", "heads", "zerg", m.Feature, "worker-1.lock")
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := m.Add(context.Background(), 1, start)
	if err != nil {
		t.Fatalf("add with a stale branch lock: %v", err)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Fatalf("the stale lock is still there: %v", err)
	}
	next := commitFile(t, top, "more.txt", "more")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Add(context.Background(), 1, next); err != nil {
		t.Fatalf("reuse with a stale branch lock: %v", err)
	}
	if got := git(t, w.Dir, "rev-parse", "HEAD"); got != next {
		t.Fatalf("worker at %s, want %s", got, next)
	}
	if m.dropStaleBranchLock(errors.New("fatal: Unable to create '"+filepath.Join(top, ".git", "refs", "heads", "main.lock")+"': File exists."), "refs/heads/zerg/"+m.Feature+"/worker-1") {
		t.Fatal("dropped the lock of another ref")
	}
}

// TestDropStaleLocks: the index lock a killed git left in a worker's
// worktree is removed and git works there again; a lock taken after the
// caller began (a person's git in that worktree) is kept.
func TestDropStaleLocks(t *testing.T) {
	_, m := newRepo(t)
	ctx := context.Background()
	if _, err := m.EnsureStaging(ctx, "HEAD"); err != nil {
		t.Fatal(err)
	}
	w, err := m.Add(ctx, 1, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	lock := git(t, w.Dir, "rev-parse", "--path-format=absolute", "--git-path", "index.lock")
	write(t, w.Dir, "new.txt", "x\n")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (&gitcmd.Runner{Dir: w.Dir}).Run(ctx, "add", "-A"); err == nil {
		t.Fatal("git add with a lock in place succeeded; the test sets up nothing")
	}
	old := time.Now().Add(-time.Hour)
	if got := m.DropStaleLocks(*w, old); len(got) != 0 {
		t.Fatalf("a lock newer than the start was removed: %v", got)
	}
	if got := m.DropStaleLocks(*w, time.Now().Add(time.Hour)); len(got) != 1 || got[0] != lock {
		t.Fatalf("DropStaleLocks = %v, want [%s]", got, lock)
	}
	git(t, w.Dir, "add", "-A")
}
