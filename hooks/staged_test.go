package hooks

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// stagedEnv clears what would point the code under test (or git) at
// another repository, for the test's duration.
func stagedEnv(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, v := range []string{"GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_COMMON_DIR",
		"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_REPLACE_REF_BASE", "GIT_CEILING_DIRECTORIES"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
}

// gitEnv runs git in dir with extra environment, stdin from in.
func gitEnv(t *testing.T, dir string, env []string, in string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), env...)
	cmd.Stdin = strings.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// gitStaged is the list the in-process one must equal.
func gitStaged(t *testing.T, dir string, env ...string) []string {
	t.Helper()
	out := gitEnv(t, dir, env, "", "diff-index", "--cached", "--name-only", "-z", "--no-renames", "HEAD", "--")
	var paths []string
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	return paths
}

// sameStaged checks that the in-process list of dir equals git's, without
// falling back; env is the environment both see (GIT_INDEX_FILE).
func sameStaged(t *testing.T, dir string, env ...string) []string {
	t.Helper()
	want := gitStaged(t, dir, env...)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	got, err := stagedInProcess(context.Background(), dir)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		os.Unsetenv(k)
	}
	if err != nil {
		t.Fatalf("in-process: %v (git lists %q)", err, want)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("in-process lists %q, git %q", got, want)
	}
	return got
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// stagedRepo is a repository with one commit of a small tree whose names
// sort differently as paths and as tree entries (dir-x, dir.txt, dir/).
func stagedRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main", ".")
	for _, f := range []string{"a.txt", "b.txt", "dir/c.txt", "dir/sub/d.txt", "dir/sub/e.txt",
		"other/f.txt", "x-y.txt", "dir-x/g.txt", "dir.txt", "dir0/h.txt", "exe.sh"} {
		writeFile(t, filepath.Join(dir, f), f+"\n")
	}
	if err := os.Chmod(filepath.Join(dir, "exe.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "files")
	return dir
}

func readIndex(t *testing.T, path string) *stagedIndex {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := parseIndex(b)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

// dropCacheTree rewrites dir's index with the same entries and no cache
// tree, as an index built entry by entry is.
func dropCacheTree(t *testing.T, dir string) {
	t.Helper()
	list := gitEnv(t, dir, nil, "", "ls-files", "-s", "-z")
	if err := os.Remove(filepath.Join(dir, ".git", "index")); err != nil {
		t.Fatal(err)
	}
	gitEnv(t, dir, nil, list, "update-index", "-z", "--index-info")
	if c := readIndex(t, filepath.Join(dir, ".git", "index")).cache; len(c) > 0 {
		t.Fatalf("cache tree still there: %v", c)
	}
}

func TestStagedInProcessMatchesGit(t *testing.T) {
	stagedEnv(t)
	cases := []struct {
		name string
		do   func(t *testing.T, dir string)
		// want is what git lists, to be sure the case stages what it says.
		want string
	}{
		{"nothing staged", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "a.txt"), "not staged\n")
		}, ""},
		{"modified", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "dir/sub/d.txt"), "changed\n")
			git(t, dir, "add", "dir/sub/d.txt")
		}, "dir/sub/d.txt"},
		{"added in a new directory", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "new/deep/n.txt"), "new\n")
			writeFile(t, filepath.Join(dir, "dir/sub/new.txt"), "new\n")
			git(t, dir, "add", "new", "dir/sub/new.txt")
		}, "dir/sub/new.txt new/deep/n.txt"},
		{"deleted", func(t *testing.T, dir string) {
			git(t, dir, "rm", "-q", "dir/c.txt", "x-y.txt")
		}, "dir/c.txt x-y.txt"},
		{"deleted directory", func(t *testing.T, dir string) {
			git(t, dir, "rm", "-q", "-r", "dir/sub")
		}, "dir/sub/d.txt dir/sub/e.txt"},
		{"mode change", func(t *testing.T, dir string) {
			os.Chmod(filepath.Join(dir, "a.txt"), 0o755)
			os.Chmod(filepath.Join(dir, "exe.sh"), 0o644)
			git(t, dir, "add", "a.txt", "exe.sh")
		}, "a.txt exe.sh"},
		{"rename", func(t *testing.T, dir string) {
			git(t, dir, "mv", "b.txt", "other/b2.txt")
		}, "b.txt other/b2.txt"},
		{"symlinks", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "link"))
			os.Symlink("b.txt", filepath.Join(dir, "link"))
			os.Remove(filepath.Join(dir, "x-y.txt"))
			os.Symlink("a.txt", filepath.Join(dir, "x-y.txt"))
			git(t, dir, "add", "link", "x-y.txt")
		}, "link x-y.txt"},
		{"file replaced by a directory", func(t *testing.T, dir string) {
			git(t, dir, "rm", "-q", "dir.txt")
			writeFile(t, filepath.Join(dir, "dir.txt/inner"), "inner\n")
			git(t, dir, "add", "dir.txt")
		}, "dir.txt dir.txt/inner"},
		{"directory replaced by a file", func(t *testing.T, dir string) {
			git(t, dir, "rm", "-q", "-r", "other")
			writeFile(t, filepath.Join(dir, "other"), "a file\n")
			git(t, dir, "add", "other")
		}, "other other/f.txt"},
		{"conflict", func(t *testing.T, dir string) {
			git(t, dir, "checkout", "-q", "-b", "side")
			writeFile(t, filepath.Join(dir, "dir/c.txt"), "side\n")
			writeFile(t, filepath.Join(dir, "other/f.txt"), "side only\n")
			writeFile(t, filepath.Join(dir, "both/added.txt"), "side\n")
			git(t, dir, "add", ".")
			git(t, dir, "commit", "-q", "-am", "side")
			git(t, dir, "checkout", "-q", "main")
			writeFile(t, filepath.Join(dir, "dir/c.txt"), "main\n")
			// Added on both sides: its first stage (2) is HEAD's blob.
			writeFile(t, filepath.Join(dir, "both/added.txt"), "main\n")
			git(t, dir, "add", ".")
			git(t, dir, "commit", "-q", "-am", "main")
			cmd := exec.Command("git", "merge", "-q", "side")
			cmd.Dir, cmd.Env = dir, cleanEnv()
			if out, err := cmd.CombinedOutput(); err == nil {
				t.Fatalf("the merge did not conflict: %s", out)
			}
			if gitEnv(t, dir, nil, "", "ls-files", "-u") == "" {
				t.Fatal("no unmerged entries")
			}
		}, "both/added.txt dir/c.txt other/f.txt"},
		{"resolved conflict", func(t *testing.T, dir string) {
			git(t, dir, "checkout", "-q", "-b", "side")
			writeFile(t, filepath.Join(dir, "dir/c.txt"), "side\n")
			git(t, dir, "commit", "-q", "-am", "side")
			git(t, dir, "checkout", "-q", "main")
			writeFile(t, filepath.Join(dir, "dir/c.txt"), "main\n")
			git(t, dir, "commit", "-q", "-am", "main")
			cmd := exec.Command("git", "merge", "-q", "side")
			cmd.Dir, cmd.Env = dir, cleanEnv()
			cmd.Run()
			git(t, dir, "add", "dir/c.txt")
			if b, _ := os.ReadFile(filepath.Join(dir, ".git", "index")); !bytes.Contains(b, []byte("REUC")) {
				t.Fatal("no resolve-undo extension")
			}
		}, "dir/c.txt"},
		{"optional extensions", func(t *testing.T, dir string) {
			cfg := []string{"-c", "core.untrackedCache=true", "-c", "index.recordEndOfIndexEntries=true",
				"-c", "index.recordOffsetTable=true", "-c", "index.threads=2"}
			writeFile(t, filepath.Join(dir, "dir0/h.txt"), "changed\n")
			git(t, dir, append(cfg, "add", "dir0/h.txt")...)
			git(t, dir, append(cfg, "status", "--porcelain")...)
			b, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
			for _, ext := range []string{"UNTR", "EOIE"} {
				if !bytes.Contains(b, []byte(ext)) {
					t.Fatalf("no %s extension", ext)
				}
			}
		}, "dir0/h.txt"},
		{"empty first commit", func(t *testing.T, dir string) {
			git(t, dir, "checkout", "-q", "--orphan", "fresh")
			git(t, dir, "rm", "-q", "-r", "--cached", ".")
			git(t, dir, "commit", "-q", "--allow-empty", "-m", "empty")
			// git knows the empty tree without reading it.
			os.Remove(filepath.Join(dir, ".git", "objects", "4b", "825dc642cb6eb9a060e54bf8d69288fbee4904"))
			git(t, dir, "add", "a.txt", "dir/sub")
		}, "a.txt dir/sub/d.txt dir/sub/e.txt"},
		{"intent to add", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "ita.txt"), "later\n")
			writeFile(t, filepath.Join(dir, "dir/sub/ita.txt"), "later\n")
			git(t, dir, "add", "-N", "ita.txt", "dir/sub/ita.txt")
		}, "dir/sub/ita.txt ita.txt"},
		{"index version 4", func(t *testing.T, dir string) {
			git(t, dir, "update-index", "--index-version", "4")
			writeFile(t, filepath.Join(dir, "dir/sub/d.txt"), "changed\n")
			git(t, dir, "rm", "-q", "dir-x/g.txt")
			writeFile(t, filepath.Join(dir, "dir/sub/deeper/x.txt"), "new\n")
			git(t, dir, "add", "dir")
			if b, _ := os.ReadFile(filepath.Join(dir, ".git", "index")); len(b) < 8 || b[7] != 4 {
				t.Fatal("not a version 4 index")
			}
		}, "dir-x/g.txt dir/sub/d.txt dir/sub/deeper/x.txt"},
		{"index version 4 with intent to add", func(t *testing.T, dir string) {
			git(t, dir, "update-index", "--index-version", "4")
			writeFile(t, filepath.Join(dir, "dir0/ita.txt"), "later\n")
			git(t, dir, "add", "-N", "dir0/ita.txt")
		}, "dir0/ita.txt"},
		{"no cache tree", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "dir/c.txt"), "changed\n")
			git(t, dir, "rm", "-q", "--cached", "other/f.txt")
			git(t, dir, "add", "dir/c.txt")
			dropCacheTree(t, dir)
		}, "dir/c.txt other/f.txt"},
		{"no cache tree, nothing staged", func(t *testing.T, dir string) {
			dropCacheTree(t, dir)
		}, ""},
		{"read-tree then changes", func(t *testing.T, dir string) {
			git(t, dir, "read-tree", "HEAD")
			writeFile(t, filepath.Join(dir, "dir/sub/e.txt"), "changed\n")
			git(t, dir, "add", "dir/sub/e.txt")
		}, "dir/sub/e.txt"},
		{"valid cache tree", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "dir/sub/e.txt"), "changed\n")
			git(t, dir, "add", "dir/sub/e.txt")
			git(t, dir, "write-tree")
			if n, ok := readIndex(t, filepath.Join(dir, ".git", "index")).cache[""]; !ok || n.count < 0 {
				t.Fatalf("no valid cache tree after write-tree: %+v", n)
			}
		}, "dir/sub/e.txt"},
		{"packed objects", func(t *testing.T, dir string) {
			git(t, dir, "gc", "-q")
			writeFile(t, filepath.Join(dir, "dir0/h.txt"), "changed\n")
			git(t, dir, "add", "dir0/h.txt")
			dropCacheTree(t, dir)
		}, "dir0/h.txt"},
		{"unchanged submodule", func(t *testing.T, dir string) {
			head := git(t, dir, "rev-parse", "HEAD")
			git(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+head+",mod")
			git(t, dir, "commit", "-q", "-m", "a gitlink")
			writeFile(t, filepath.Join(dir, "b.txt"), "changed\n")
			git(t, dir, "add", "b.txt")
			dropCacheTree(t, dir)
		}, "b.txt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := stagedRepo(t)
			c.do(t, dir)
			if got := strings.Join(gitStaged(t, dir), " "); got != c.want {
				t.Fatalf("git lists %q, the case means %q", got, c.want)
			}
			sameStaged(t, dir)
		})
	}
}

// A valid cache tree spares reading the trees of unchanged directories:
// with one of ten directories changed, only the top's tree and that
// directory's are read.
func TestStagedCacheTreeSkips(t *testing.T) {
	stagedEnv(t)
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main", ".")
	for d := 0; d < 10; d++ {
		for f := 0; f < 3; f++ {
			writeFile(t, filepath.Join(dir, fmt.Sprintf("d%d/f%d", d, f)), "x\n")
		}
	}
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "files")
	writeFile(t, filepath.Join(dir, "d3/f1"), "changed\n")
	git(t, dir, "add", "d3/f1")
	count := func() int {
		t.Helper()
		sameStaged(t, dir)
		idx := readIndex(t, filepath.Join(dir, ".git", "index"))
		d := &stagedDiff{s: openStore(t, dir), idx: idx}
		tree := git(t, dir, "rev-parse", "HEAD^{tree}")
		if err := d.dir("", plumbing.NewHash(tree), 0, len(idx.entries)); err != nil {
			t.Fatal(err)
		}
		if strings.Join(d.out, " ") != "d3/f1" {
			t.Fatalf("listed %q", d.out)
		}
		return d.reads
	}
	// git add invalidates the changed directory and the top only.
	if n := count(); n != 2 {
		t.Errorf("%d trees read with the cache tree, want 2", n)
	}
	dropCacheTree(t, dir)
	if n := count(); n != 11 {
		t.Errorf("%d trees read without a cache tree, want 11", n)
	}
}

// The index git commits is the one GIT_INDEX_FILE names, relative to the
// top of the work tree when relative: `git commit PATH` makes a temporary
// one from HEAD and PATH, while the real index holds other changes.
func TestStagedIndexFile(t *testing.T) {
	stagedEnv(t)
	dir := stagedRepo(t)
	writeFile(t, filepath.Join(dir, "a.txt"), "in the index only\n")
	git(t, dir, "add", "a.txt")
	writeFile(t, filepath.Join(dir, "dir/c.txt"), "committed by path\n")
	tmp := filepath.Join(dir, ".git", "next-index-test.lock")
	env := []string{"GIT_INDEX_FILE=" + tmp}
	gitEnv(t, dir, env, "", "read-tree", "HEAD")
	gitEnv(t, dir, env, "", "add", "dir/c.txt")
	if got := sameStaged(t, dir, env...); strings.Join(got, " ") != "dir/c.txt" {
		t.Fatalf("temporary index: %q", got)
	}
	if got := sameStaged(t, dir, "GIT_INDEX_FILE=.git/next-index-test.lock"); strings.Join(got, " ") != "dir/c.txt" {
		t.Fatalf("relative: %q", got)
	}
	if got := sameStaged(t, dir); strings.Join(got, " ") != "a.txt" {
		t.Fatalf("the index: %q", got)
	}
	t.Setenv("GIT_INDEX_FILE", ".git/next-index-test.lock")
	if _, err := stagedInProcess(context.Background(), filepath.Join(dir, "dir")); !errors.Is(err, errUnsure) {
		t.Fatalf("relative, below the top: %v", err)
	}
	os.Unsetenv("GIT_INDEX_FILE")
	// As git runs the hook of a plain commit.
	if got := sameStaged(t, dir, "GIT_INDEX_FILE=.git/index"); strings.Join(got, " ") != "a.txt" {
		t.Fatalf("the index named: %q", got)
	}
	// A missing index is an empty one to git: left to git.
	t.Setenv("GIT_INDEX_FILE", filepath.Join(dir, "missing"))
	if _, err := stagedInProcess(context.Background(), dir); !errors.Is(err, errUnsure) {
		t.Fatalf("missing index: %v", err)
	}
}

// In a linked worktree the index and HEAD are the worktree's own, the
// objects (packed here) the repository's; git gives the hook GIT_DIR.
func TestStagedLinkedWorktree(t *testing.T) {
	stagedEnv(t)
	dir := stagedRepo(t)
	git(t, dir, "gc", "-q")
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, dir, "worktree", "add", "-q", "-b", "work", wt)
	writeFile(t, filepath.Join(dir, "a.txt"), "main checkout\n")
	git(t, dir, "add", "a.txt")
	writeFile(t, filepath.Join(wt, "dir/sub/d.txt"), "worktree\n")
	git(t, wt, "rm", "-q", "b.txt")
	git(t, wt, "add", "dir/sub/d.txt")
	if got := sameStaged(t, wt); strings.Join(got, " ") != "b.txt dir/sub/d.txt" {
		t.Fatalf("worktree: %q", got)
	}
	gitDir := filepath.Join(dir, ".git", "worktrees", "wt")
	t.Setenv("GIT_DIR", gitDir)
	dropRedundantGitDir(wt)
	if got := sameStaged(t, wt, "GIT_INDEX_FILE="+filepath.Join(gitDir, "index")); strings.Join(got, " ") != "b.txt dir/sub/d.txt" {
		t.Fatalf("worktree, as the hook runs: %q", got)
	}
	if got := sameStaged(t, dir); strings.Join(got, " ") != "a.txt" {
		t.Fatalf("main checkout: %q", got)
	}
}

// Where the in-process list cannot be sure, git is asked, and StartStaged
// still answers as git does.
func TestStagedFallsBackToGit(t *testing.T) {
	stagedEnv(t)
	cases := []struct {
		name string
		repo func(t *testing.T) string
		want string
		why  string // in the error
	}{
		// git writes the entries of a split index as replacements of its
		// shared index's, without names (TestParseIndexExtensions has an
		// index whose "link" extension is what stops the parse).
		{"split index", func(t *testing.T) string {
			dir := stagedRepo(t)
			git(t, dir, "update-index", "--split-index")
			writeFile(t, filepath.Join(dir, "dir/c.txt"), "changed\n")
			git(t, dir, "add", "dir/c.txt")
			return dir
		}, "dir/c.txt", `entry ""`},
		{"unborn HEAD", func(t *testing.T) string {
			dir := t.TempDir()
			git(t, dir, "init", "-q", "-b", "main", ".")
			writeFile(t, filepath.Join(dir, "first/file.txt"), "first\n")
			git(t, dir, "add", ".")
			return dir
		}, "first/file.txt", "unborn"},
		{"sparse index", func(t *testing.T) string {
			dir := stagedRepo(t)
			git(t, dir, "sparse-checkout", "set", "--cone", "--sparse-index", "dir")
			writeFile(t, filepath.Join(dir, "dir/c.txt"), "changed\n")
			git(t, dir, "add", "dir/c.txt")
			return dir
		}, "dir/c.txt", "mode 40000"},
		{"submodule changed", func(t *testing.T) string {
			dir := stagedRepo(t)
			head := git(t, dir, "rev-parse", "HEAD")
			git(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+head+",mod")
			return dir
		}, "mod", "submodule mod"},
		{"sha256", func(t *testing.T) string {
			dir := t.TempDir()
			git(t, dir, "init", "-q", "-b", "main", "--object-format=sha256", ".")
			writeFile(t, filepath.Join(dir, "a.txt"), "a\n")
			git(t, dir, "add", ".")
			git(t, dir, "commit", "-q", "-m", "a")
			writeFile(t, filepath.Join(dir, "a.txt"), "b\n")
			git(t, dir, "add", ".")
			return dir
		}, "a.txt", "objectformat"},
		{"replace refs", func(t *testing.T) string {
			dir := stagedRepo(t)
			head := git(t, dir, "rev-parse", "HEAD")
			git(t, dir, "commit", "-q", "--allow-empty", "-m", "second")
			git(t, dir, "replace", head, "HEAD")
			writeFile(t, filepath.Join(dir, "a.txt"), "changed\n")
			git(t, dir, "add", "a.txt")
			return dir
		}, "a.txt", "replace refs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := c.repo(t)
			_, err := stagedInProcess(context.Background(), dir)
			if !errors.Is(err, errUnsure) || !strings.Contains(err.Error(), c.why) {
				t.Fatalf("in-process: %v, want errUnsure for %s", err, c.why)
			}
			got, err := startStaged(context.Background(), dir)()
			if err != nil || strings.Join(got, " ") != c.want {
				t.Fatalf("StartStaged: %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// Trees written long ago may hold modes git no longer writes (100664);
// git reads them as 100644, and so must the comparison.
func TestStagedOldTreeMode(t *testing.T) {
	stagedEnv(t)
	dir := stagedRepo(t)
	blob := plumbing.NewHash(git(t, dir, "rev-parse", "HEAD:a.txt"))
	// git mktree writes 100644: the tree is written as bytes.
	raw := append([]byte("100664 a.txt\x00"), blob[:]...)
	tree := strings.TrimSpace(gitEnv(t, dir, nil, string(raw), "hash-object", "-t", "tree", "-w", "--literally", "--stdin"))
	if b := gitEnv(t, dir, nil, "", "cat-file", "tree", tree); !strings.HasPrefix(b, "100664 ") {
		t.Fatalf("tree %q", b)
	}
	commit := strings.TrimSpace(gitEnv(t, dir, nil, "", "commit-tree", "-m", "old", tree))
	git(t, dir, "reset", "-q", commit)
	dropCacheTree(t, dir)
	if got := sameStaged(t, dir); len(got) != 0 {
		t.Fatalf("listed %q", got)
	}
	git(t, dir, "update-index", "--chmod=+x", "a.txt")
	if got := sameStaged(t, dir); strings.Join(got, " ") != "a.txt" {
		t.Fatalf("listed %q", got)
	}
}

// The index reader agrees with go-git's decoder on every entry.
func TestParseIndexAgreesWithGoGit(t *testing.T) {
	stagedEnv(t)
	dir := stagedRepo(t)
	writeFile(t, filepath.Join(dir, "ita.txt"), "later\n")
	git(t, dir, "add", "-N", "ita.txt")
	// A path longer than the 12 bits of an entry's name length; no file
	// system would take it.
	long := "dir/" + strings.Repeat(strings.Repeat("l", 200)+"/", 25) + "file"
	blob := git(t, dir, "rev-parse", "HEAD:a.txt")
	git(t, dir, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+long)
	for _, v := range []string{"2", "3", "4"} {
		if v == "2" {
			// Version 2 cannot hold an intent-to-add entry.
			git(t, dir, "rm", "-q", "--cached", "ita.txt")
		}
		git(t, dir, "update-index", "--index-version", v)
		path := filepath.Join(dir, ".git", "index")
		ours := readIndex(t, path)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var theirs index.Index
		err = index.NewDecoder(f).Decode(&theirs)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(ours.entries) != len(theirs.Entries) {
			t.Fatalf("v%s: %d entries, go-git %d", v, len(ours.entries), len(theirs.Entries))
		}
		for i, e := range theirs.Entries {
			o := ours.entries[i]
			if o.path != e.Name || o.mode != e.Mode || o.hash != e.Hash || int(o.stage) != int(e.Stage) || o.ita != e.IntentToAdd {
				t.Errorf("v%s entry %d: %+v, go-git %s %o %s %d", v, i, o, e.Name, uint32(e.Mode), e.Hash, e.Stage)
			}
		}
		sameStaged(t, dir)
	}
}

// Random changes over a small tree, committed now and then, the index
// compared with git after each batch, with and without a cache tree and in
// both index formats.
func TestStagedRandom(t *testing.T) {
	stagedEnv(t)
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main", ".")
	rng := rand.New(rand.NewPCG(1, uint64(os.Getpid())))
	names := []string{"a", "b", "a-b", "a.b", "a/a", "a/b", "a/c/d", "a/c/e", "b/a", "b/b/b", "c", "c/d", "d/e/f/g"}
	writeFile(t, filepath.Join(dir, "seed"), "seed\n")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "seed")
	ops := 0
	for batch := 0; ops < 300; batch++ {
		for n := 1 + rng.IntN(5); n > 0; n-- {
			ops++
			name := names[rng.IntN(len(names))]
			path := filepath.Join(dir, name)
			switch rng.IntN(5) {
			case 0, 1: // write (or make a file of a directory)
				os.RemoveAll(path)
				// A file where a directory of the name's is fails: let the
				// index say what it says then.
				os.MkdirAll(filepath.Dir(path), 0o755)
				os.WriteFile(path, []byte(fmt.Sprint(rng.IntN(3), "\n")), 0o644)
			case 2:
				os.RemoveAll(path)
			case 3:
				os.Chmod(path, os.FileMode(0o644|rng.IntN(2)*0o111))
			case 4:
				os.Remove(path)
				os.MkdirAll(filepath.Dir(path), 0o755)
				os.Symlink(names[rng.IntN(len(names))], path)
			}
		}
		git(t, dir, "add", "-A")
		switch rng.IntN(8) {
		case 0:
			git(t, dir, "commit", "-q", "--allow-empty", "-m", fmt.Sprint("batch ", batch))
		case 1:
			git(t, dir, "write-tree")
		case 2:
			dropCacheTree(t, dir)
		case 3:
			git(t, dir, "update-index", "--index-version", fmt.Sprint(2+rng.IntN(3)))
		case 4:
			p := fmt.Sprintf("ita/%d/%s", batch, names[rng.IntN(len(names))])
			writeFile(t, filepath.Join(dir, p), "later\n")
			git(t, dir, "add", "-N", p)
		}
		sameStaged(t, dir)
	}
}

// An index extension git must understand (a lowercase signature: "link" of
// a split index, "sdir" of a sparse one) stops the parse; an optional one
// is skipped.
func TestParseIndexExtensions(t *testing.T) {
	file := func(exts ...string) []byte {
		b := []byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x00")
		for _, e := range exts {
			b = append(b, e...)
			b = binary.BigEndian.AppendUint32(b, 3)
			b = append(b, "abc"...)
		}
		sum := sha1.Sum(b)
		return append(b, sum[:]...)
	}
	for _, c := range []struct {
		exts []string
		why  string
	}{
		{nil, ""},
		{[]string{"UNTR", "ZZZZ"}, ""},
		{[]string{"UNTR", "link"}, `"link"`},
		{[]string{"sdir"}, `"sdir"`},
	} {
		idx, err := parseIndex(file(c.exts...))
		switch {
		case c.why == "" && (err != nil || len(idx.entries) != 0):
			t.Errorf("%q: %v", c.exts, err)
		case c.why != "" && (!errors.Is(err, errUnsure) || !strings.Contains(err.Error(), c.why)):
			t.Errorf("%q: %v, want errUnsure for %s", c.exts, err, c.why)
		}
	}
	b := file()
	b[len(b)-1] ^= 1
	if _, err := parseIndex(b); !errors.Is(err, errUnsure) {
		t.Errorf("bad checksum: %v", err)
	}
}

// The index a real `git commit` gives its pre-commit hook, kept by a hook
// that then refuses the commit: a temporary one for `git commit PATH`,
// index.lock for `git commit -a`.
func TestStagedIndexOfRealCommits(t *testing.T) {
	stagedEnv(t)
	dir := stagedRepo(t)
	out := t.TempDir()
	hook := "#!/bin/sh\ncp \"$GIT_INDEX_FILE\" \"$OUT/index\"\nprintf %s \"$GIT_INDEX_FILE\" >\"$OUT/name\"\n" +
		"git diff-index --cached --name-only -z --no-renames HEAD -- >\"$OUT/list\"\nexit 1\n"
	writeFile(t, filepath.Join(dir, ".git", "hooks", "pre-commit"), hook)
	if err := os.Chmod(filepath.Join(dir, ".git", "hooks", "pre-commit"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "a.txt"), "staged, not in the commit\n")
	git(t, dir, "add", "a.txt")
	writeFile(t, filepath.Join(dir, "dir/c.txt"), "committed by path\n")
	writeFile(t, filepath.Join(dir, "dir/sub/d.txt"), "committed by -a\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"dir/c.txt"}, "dir/c.txt"},
		{[]string{"-a"}, "a.txt dir/c.txt dir/sub/d.txt"},
		{nil, "a.txt"},
	} {
		cmd := exec.Command("git", append([]string{"commit", "-q", "-m", "refused"}, c.args...)...)
		cmd.Dir, cmd.Env = dir, append(cleanEnv(), "OUT="+out)
		if b, err := cmd.CombinedOutput(); err == nil {
			t.Fatalf("the hook did not refuse: %s", b)
		}
		name, _ := os.ReadFile(filepath.Join(out, "name"))
		list, _ := os.ReadFile(filepath.Join(out, "list"))
		want := strings.Split(strings.TrimSuffix(string(list), "\x00"), "\x00")
		slices.Sort(want)
		if strings.Join(want, " ") != c.want {
			t.Fatalf("git commit %q: the hook's git lists %q", c.args, want)
		}
		t.Setenv("GIT_INDEX_FILE", filepath.Join(out, "index"))
		got, err := stagedInProcess(context.Background(), dir)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("git commit %q (index %s): %q, %v; the hook's git lists %q", c.args, name, got, err, want)
		}
	}
}

// An intent-to-add entry where HEAD has the empty blob is not listed by
// git, yet the commit leaves it out of its tree and so deletes the file:
// the in-process list has it.
func TestStagedIntentToAddOverEmptyBlob(t *testing.T) {
	stagedEnv(t)
	dir := stagedRepo(t)
	writeFile(t, filepath.Join(dir, "dir/empty"), "")
	git(t, dir, "add", "dir/empty")
	git(t, dir, "commit", "-q", "-m", "an empty file")
	git(t, dir, "rm", "-q", "--cached", "dir/empty")
	git(t, dir, "add", "-N", "dir/empty")
	if got := gitStaged(t, dir); len(got) != 0 {
		t.Skipf("this git lists %q", got)
	}
	tree := git(t, dir, "write-tree")
	if strings.Contains(git(t, dir, "ls-tree", "-r", "--name-only", tree), "dir/empty") {
		t.Fatal("the tree to commit keeps dir/empty")
	}
	got, err := stagedInProcess(context.Background(), dir)
	if err != nil || strings.Join(got, " ") != "dir/empty" {
		t.Fatalf("in-process: %q, %v", got, err)
	}
}

func TestEmptyTreeIsGitsEmptyTree(t *testing.T) {
	if want := plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904"); emptyTree != want {
		t.Fatalf("emptyTree = %s, want %s", emptyTree, want)
	}
}
