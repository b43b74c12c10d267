// Package storetest gives tests of the packages above gitstore a store in
// a fresh repository of their own.
package storetest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitobj"
	"github.com/git-zerg/git-zerg/gitstore"
)

// New makes a repository with one empty commit on main in a temporary
// directory, isolated from the user's and the system's git configuration,
// and opens its store.
func New(t *testing.T) *gitstore.Store {
	t.Helper()
	s, err := gitstore.Open(context.Background(), Repo(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Repo makes the repository New opens, and returns its directory.
func Repo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, args := range [][]string{{"init", "-q", "-b", "main", dir}, {"-C", dir, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "i"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// ForgeTask replaces the blob of task id in commit c's tree by data and
// commits that on parent with c's message, as a hand edit would (with git
// itself: a temporary index).
func ForgeTask(tb testing.TB, s *gitstore.Store, c *gitobj.Commit, parent plumbing.Hash, id string, data []byte) plumbing.Hash {
	tb.Helper()
	var path string
	if err := s.WalkFiles(c.TreeHash, func(p string, _ gitobj.TreeEntry) error {
		if strings.HasPrefix(p, "tasks/") && filepath.Base(p) == id {
			path = p
		}
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	if path == "" {
		tb.Fatalf("no task %s in %s", id, c.Hash)
	}
	index := filepath.Join(tb.TempDir(), "index")
	run := func(stdin []byte, args ...string) string {
		tb.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = s.Top
		cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+index)
		cmd.Stdin = bytes.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			tb.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	blob := run(data, "hash-object", "-w", "--stdin")
	run(nil, "read-tree", c.TreeHash.String())
	run(nil, "update-index", "--cacheinfo", "100644,"+blob+","+path)
	tree := run(nil, "write-tree")
	h, err := s.CommitTree(tree, []string{parent.String()}, c.Message, c.Author)
	if err != nil {
		tb.Fatal(err)
	}
	return plumbing.NewHash(h)
}
