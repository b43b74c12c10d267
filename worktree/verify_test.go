package worktree

import (
	"context"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/gitcmd"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func gone(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there (%v)", p, err)
		}
	}
}

// verifyRepo is newRepo with a .worktreeinclude naming .env (present in
// the main work tree) and a setup that makes secrets/key and counts its
// runs.
func verifyRepo(t *testing.T) (top string, m *Manager, runs string) {
	top, m = newRepo(t)
	write(t, top, ".env", "from the main work tree\n")
	write(t, top, IncludeFile, ".env\n")
	runs = filepath.Join(t.TempDir(), "setup-runs")
	m.Setup = "mkdir -p secrets && echo made > secrets/key && echo run >> " + runs
	return top, m, runs
}

func setupRuns(t *testing.T, runs string) int {
	t.Helper()
	b, _ := os.ReadFile(runs)
	return strings.Count(string(b), "run\n")
}

// The checkout holds the commit, the included files and what setup made;
// on reuse, whatever else is there (ignored, untracked, a nested
// repository, a changed tracked file) is gone, what setup made stays, and
// the checkout moves to the next commit.
func TestVerifyCheckoutReuse(t *testing.T) {
	top, m, runs := verifyRepo(t)
	ctx := context.Background()
	c1 := git(t, top, "rev-parse", "HEAD")
	dir, err := m.VerifyCheckout(ctx, 1, c1)
	if err != nil {
		t.Fatal(err)
	}
	if !samePath(dir, filepath.Join(m.Root, "verify-1")) {
		t.Fatalf("dir = %s", dir)
	}
	if read(t, filepath.Join(dir, "a.txt")) != "a.txt\n" || read(t, filepath.Join(dir, ".env")) != "from the main work tree\n" ||
		read(t, filepath.Join(dir, "secrets", "key")) != "made\n" || setupRuns(t, runs) != 1 {
		t.Fatal("first checkout: not the commit, the included file and setup's output")
	}
	if got := git(t, dir, "rev-parse", "HEAD"); got != c1 {
		t.Fatalf("HEAD = %s, want %s", got, c1)
	}

	write(t, dir, "helper.local", "hidden by .gitignore\n")
	write(t, dir, "untracked.txt", "left by a verification\n")
	write(t, dir, ".env", "changed\n")
	write(t, dir, "b.txt", "changed\n")
	write(t, dir, "sub/x.txt", "x\n")
	git(t, filepath.Join(dir, "sub"), "init", "-q")
	c2 := commitFile(t, top, "e.txt", "e\n")
	if _, err := m.VerifyCheckout(ctx, 1, c2); err != nil {
		t.Fatal(err)
	}
	gone(t, filepath.Join(dir, "helper.local"), filepath.Join(dir, "untracked.txt"), filepath.Join(dir, "sub"))
	if read(t, filepath.Join(dir, "b.txt")) != "b.txt\n" || read(t, filepath.Join(dir, "e.txt")) != "e\n" ||
		read(t, filepath.Join(dir, ".env")) != "from the main work tree\n" {
		t.Fatal("reused checkout is not the new commit with the included file")
	}
	if read(t, filepath.Join(dir, "secrets", "key")) != "made\n" || setupRuns(t, runs) != 1 {
		t.Fatalf("setup's output not kept (setup ran %d times)", setupRuns(t, runs))
	}
	if git(t, dir, "status", "--porcelain") != "" {
		t.Fatal("reused checkout is not clean")
	}

	// A new Manager (a new rush) makes it afresh: what was done to it since
	// the last one is unknown.
	m2 := &Manager{Git: m.Git, Feature: m.Feature, Root: m.Root, Setup: m.Setup}
	if _, err := m2.VerifyCheckout(ctx, 1, c2); err != nil || setupRuns(t, runs) != 2 {
		t.Fatalf("new Manager: %v, setup ran %d times; want it made afresh", err, setupRuns(t, runs))
	}
	removed, err := m2.RemoveVerifyCheckouts(ctx)
	if err != nil || len(removed) != 1 || !samePath(removed[0], dir) {
		t.Fatalf("RemoveVerifyCheckouts = %v, %v", removed, err)
	}
	gone(t, dir)
	if n := strings.Count(git(t, top, "worktree", "list", "--porcelain"), "worktree "); n != 1 {
		t.Fatalf("%d worktrees left, want the main one", n)
	}
}

// A tracked file replaced by one of the same size and modification time is
// still seen, even when the repository's config tells git to compare
// those alone (a worker can set that): the inode differs. (The change
// time, which no one can set, is compared too, but only to the second.)
func TestVerifyCheckoutStatTrick(t *testing.T) {
	top, m := newRepo(t)
	ctx := context.Background()
	c := git(t, top, "rev-parse", "HEAD")
	dir, err := m.VerifyCheckout(ctx, 1, c)
	if err != nil {
		t.Fatal(err)
	}
	// Take the file out of git's racy window (written in the same second
	// as the index, git would look at its content anyway), as the
	// Manager left it.
	past := time.Now().Add(-time.Hour)
	a := filepath.Join(dir, "a.txt")
	if err := os.Chtimes(a, past, past); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "update-index", "--refresh")
	_, admin := health(must(m.commonDir(ctx)), dir)
	m.checks[dir].index = digest(filepath.Join(admin, "index"))

	git(t, top, "config", "core.trustctime", "false")
	git(t, top, "config", "core.checkStat", "minimal")
	write(t, dir, "a.new", "A.TXT\n") // same size
	if err := os.Chtimes(filepath.Join(dir, "a.new"), past, past); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "a.new"), a); err != nil {
		t.Fatal(err)
	}
	if got := git(t, dir, "status", "--porcelain"); got != "" {
		t.Fatalf("git status = %q: the test's change must be one git misses by its config", got)
	}
	if _, err := m.VerifyCheckout(ctx, 1, c); err != nil {
		t.Fatal(err)
	}
	if got := read(t, a); got != "a.txt\n" {
		t.Fatalf("a.txt = %q: the change went unseen", got)
	}
}

// A post-checkout hook (a worker can set core.hooksPath) does not run in
// the verification checkout: it could rewrite a tracked file after git put
// it there.
func TestVerifyCheckoutNoHooks(t *testing.T) {
	top, m := newRepo(t)
	ctx := context.Background()
	hooks := t.TempDir()
	write(t, hooks, "post-checkout", "#!/bin/sh\necho hooked > a.txt\n")
	if err := os.Chmod(filepath.Join(hooks, "post-checkout"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, top, "config", "core.hooksPath", hooks)
	c1 := git(t, top, "rev-parse", "HEAD")
	dir, err := m.VerifyCheckout(ctx, 1, c1)
	if err != nil {
		t.Fatal(err)
	}
	c2 := commitFile(t, top, "e.txt", "e\n")
	if _, err := m.VerifyCheckout(ctx, 1, c2); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(dir, "a.txt")); got != "a.txt\n" {
		t.Fatalf("a.txt = %q: a hook ran", got)
	}
}

// A forged index makes the checkout afresh: one whose entry for a changed
// file names the commit's blob with the changed file's stat data would
// have git take the change for the commit's content.
func TestVerifyCheckoutForgedIndex(t *testing.T) {
	top, m, runs := verifyRepo(t)
	ctx := context.Background()
	c := git(t, top, "rev-parse", "HEAD")
	dir, err := m.VerifyCheckout(ctx, 1, c)
	if err != nil {
		t.Fatal(err)
	}
	a := filepath.Join(dir, "a.txt")
	write(t, dir, "a.txt", "forged\n")
	past := time.Now().Add(-time.Hour) // out of git's racy window
	if err := os.Chtimes(a, past, past); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "a.txt")
	forgeIndex(t, filepath.Join(git(t, dir, "rev-parse", "--absolute-git-dir"), "index"), "a.txt", git(t, top, "rev-parse", c+":a.txt"))
	if got := git(t, dir, "status", "--porcelain"); got != "" {
		t.Fatalf("git status = %q: the forged index must hide the change from git", got)
	}
	if _, err := m.VerifyCheckout(ctx, 1, c); err != nil {
		t.Fatal(err)
	}
	if got := read(t, a); got != "a.txt\n" || setupRuns(t, runs) != 2 {
		t.Fatalf("a.txt = %q, setup ran %d times; want it made afresh", got, setupRuns(t, runs))
	}
}

// forgeIndex puts blob as the object of path's entry in a version 2 index,
// its stat data left as it is, and seals the index again.
func forgeIndex(t *testing.T, index, path, blob string) {
	t.Helper()
	b := []byte(read(t, index))
	raw, err := hex.DecodeString(blob)
	if err != nil || string(b[:4]) != "DIRC" || binary.BigEndian.Uint32(b[4:8]) != 2 {
		t.Fatalf("not a version 2 index, or a bad blob id (%v)", err)
	}
	off := 12
	for range binary.BigEndian.Uint32(b[8:12]) {
		nameLen := int(binary.BigEndian.Uint16(b[off+60:off+62]) & 0xfff)
		if string(b[off+62:off+62+nameLen]) == path {
			copy(b[off+40:off+60], raw)
			sum := sha1.Sum(b[:len(b)-sha1.Size])
			copy(b[len(b)-sha1.Size:], sum[:])
			if err := os.WriteFile(index, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		off += (62 + nameLen + 8) &^ 7
	}
	t.Fatalf("no entry for %s in %s", path, index)
}

// A checkout someone deleted, or replaced by a link, is made again; a
// stranger's directory at its path is refused.
func TestVerifyCheckoutBroken(t *testing.T) {
	top, m := newRepo(t)
	ctx := context.Background()
	c := git(t, top, "rev-parse", "HEAD")
	dir, err := m.VerifyCheckout(ctx, 1, c)
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(dir)
	if _, err := m.VerifyCheckout(ctx, 1, c); err != nil || read(t, filepath.Join(dir, "a.txt")) != "a.txt\n" {
		t.Fatalf("after rm -rf: %v", err)
	}
	target := t.TempDir()
	write(t, target, "keep.txt", "not to be removed\n")
	os.RemoveAll(dir)
	if err := os.Symlink(target, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := m.VerifyCheckout(ctx, 1, c); err != nil {
		t.Fatalf("over a link: %v", err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || read(t, filepath.Join(target, "keep.txt")) != "not to be removed\n" {
		t.Fatal("the link was followed")
	}
	os.RemoveAll(dir)
	git(t, top, "worktree", "prune")
	write(t, dir, "mine.txt", "a stranger's\n")
	m2 := &Manager{Git: m.Git, Feature: m.Feature, Root: m.Root}
	if _, err := m2.VerifyCheckout(ctx, 1, c); !errors.Is(err, ErrOccupied) {
		t.Fatalf("over a stranger's directory: %v, want ErrOccupied", err)
	}
}

// A commit that cannot be checked out is the commit's fault.
func TestVerifyCheckoutBadCommit(t *testing.T) {
	top, m := newRepo(t)
	ctx := context.Background()
	blob := git(t, top, "rev-parse", "HEAD:a.txt")
	tree := runIn(t, top, "100644 blob "+blob+"\t.GIT\n", "mktree")
	bad := git(t, top, "commit-tree", "-m", "bad", tree)
	_, err := m.VerifyCheckout(ctx, 1, bad)
	var ce *CheckoutError
	if !errors.As(err, &ce) || ce.Commit != bad || !strings.Contains(err.Error(), "cannot be checked out") {
		t.Fatalf("VerifyCheckout of a bad commit = %v, want a *CheckoutError", err)
	}
}

// TempCheckout checks out the commit where the user's checkout is not, and
// leaves nothing behind.
func TestTempCheckout(t *testing.T) {
	top, m, runs := verifyRepo(t)
	ctx := context.Background()
	write(t, top, "a.txt", "uncommitted in the user's checkout\n")
	write(t, top, "helper.local", "ignored in the user's checkout\n")
	dir, done, err := m.TempCheckout(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(dir, "a.txt")) != "a.txt\n" || read(t, filepath.Join(dir, ".env")) != "from the main work tree\n" ||
		read(t, filepath.Join(dir, "secrets", "key")) != "made\n" || setupRuns(t, runs) != 1 {
		t.Fatal("temporary checkout: not the commit, the included file and setup's output")
	}
	gone(t, filepath.Join(dir, "helper.local"))
	done()
	gone(t, dir)
	if n := strings.Count(git(t, top, "worktree", "list", "--porcelain"), "worktree "); n != 1 {
		t.Fatalf("%d worktrees left, want the main one", n)
	}
	if read(t, filepath.Join(top, "a.txt")) != "uncommitted in the user's checkout\n" {
		t.Fatal("the user's checkout changed")
	}
}

func TestEscapePattern(t *testing.T) {
	for in, want := range map[string]string{
		"node_modules/": "node_modules/",
		"a*b?[c]":       `a\*b\?\[c]`,
		"!x":            `\!x`,
		"#x":            `\#x`,
		`back\slash`:    `back\\slash`,
		"trailing  ":    `trailing\ \ `,
	} {
		if got := escapePattern(in); got != want {
			t.Errorf("escapePattern(%q) = %q, want %q", in, got, want)
		}
	}
	// What setup made under a name full of pattern characters is kept,
	// and nothing else matches it.
	top, m := newRepo(t)
	m.Setup = "mkdir -p '[x]*.local' && touch '[x]*.local/kept' && touch x.local"
	ctx := context.Background()
	dir, err := m.VerifyCheckout(ctx, 1, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "xy.local/other", "not setup's\n")
	if _, err := m.VerifyCheckout(ctx, 1, git(t, top, "rev-parse", "HEAD")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "[x]*.local", "kept")); err != nil {
		t.Fatalf("setup's output not kept: %v", err)
	}
	gone(t, filepath.Join(dir, "xy.local"))
}

// runIn runs git in dir with stdin.
func runIn(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	out, err := (&gitcmd.Runner{Dir: dir}).RunWith(context.Background(), gitcmd.Call{Stdin: strings.NewReader(stdin)}, args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimRight(string(out), "\n")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// BenchmarkVerifyCheckout: what a verification checkout costs an attempt,
// in a repository of 3,000 files: "reuse" moves the slot's checkout to a
// commit one file away (every attempt after a rush's first), "fresh" makes
// it anew (a rush's first attempt on the slot).
func BenchmarkVerifyCheckout(b *testing.B) {
	gitEnv(b)
	ctx := context.Background()
	base := b.TempDir()
	top := filepath.Join(base, "repo")
	git(b, base, "init", "-q", "-b", "main", top)
	var s strings.Builder
	s.WriteString("commit refs/heads/main\ncommitter A <a@example.com> 1700000000 +0000\ndata 4\ninit\n")
	for i := range 3000 {
		content := fmt.Sprintf("file %d\n", i)
		fmt.Fprintf(&s, "M 100644 inline d%02d/f%04d.txt\ndata %d\n%s\n", i%60, i, len(content), content)
	}
	s.WriteString("commit refs/heads/main\ncommitter A <a@example.com> 1700000100 +0000\ndata 4\nnext\nM 100644 inline d00/f0000.txt\ndata 8\nchanged\n\n")
	r := &gitcmd.Runner{Dir: top}
	if _, err := r.RunWith(ctx, gitcmd.Call{Stdin: strings.NewReader(s.String())}, "fast-import", "--quiet"); err != nil {
		b.Fatal(err)
	}
	commits := []string{git(b, top, "rev-parse", "main~1"), git(b, top, "rev-parse", "main")}
	b.Run("reuse", func(b *testing.B) {
		m := &Manager{Git: r, Feature: "bench"}
		if _, err := m.VerifyCheckout(ctx, 1, commits[0]); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := m.VerifyCheckout(ctx, 1, commits[(i+1)%2]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fresh", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			m := &Manager{Git: r, Feature: "bench"}
			if _, err := m.VerifyCheckout(ctx, 1, commits[i%2]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
