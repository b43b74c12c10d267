// Package storetest gives tests of the packages above gitstore a store in
// a fresh repository of their own.
package storetest

import (
	"context"
	"os/exec"
	"testing"

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
