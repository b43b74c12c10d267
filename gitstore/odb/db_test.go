package odb

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitcmd"
)

func newRepo(t *testing.T) string {
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

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// openDB opens the objects of the repository at dir as a process of its
// own would: with a memo of its own.
func openDB(t *testing.T, dir string) *DB {
	t.Helper()
	common := git(t, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	return New(common, &gitcmd.Runner{Dir: dir}, NewMemo())
}

func splitLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// TestKeptPackWrittenAgain: objects written as a kept pack whose .keep is
// there already (an attempt that failed after making it, or an update
// writing the same objects) are kept all the same. index-pack then makes no
// .keep and says "pack", which was taken for a failure.
func TestKeptPackWrittenAgain(t *testing.T) {
	db := openDB(t, newRepo(t))
	data := []byte("kept twice\n")
	objs := []Object{{Hash: plumbing.ComputeHash(plumbing.BlobObject, data), Type: plumbing.BlobObject, Data: data}}
	first, err := db.writePack(objs, true)
	if err != nil || first == "" {
		t.Fatalf("first: %q %v", first, err)
	}
	again, err := db.writePack(objs, true)
	if err != nil || again != first {
		t.Fatalf("again: %q %v, want %q", again, err, first)
	}
}
