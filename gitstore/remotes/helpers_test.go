package remotes

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/gitstore/storetest"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/state/statetest"
)

// newRepo makes a repository with one empty commit on main, isolated from
// the user's and the system's git configuration.
func newRepo(t *testing.T) string { return storetest.Repo(t) }

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// openStore opens dir as a process of its own would: with a Repo of its
// own.
func openStore(t *testing.T, dir string) *gitstore.Store {
	t.Helper()
	s, err := gitstore.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// arbiterPair makes two clones a and b of one bare remote, each with a
// store whose arbiter is that remote, with no incoming check yet.
func arbiterPair(t *testing.T) (a, b, remote string, sa, sb *gitstore.Store) {
	a = newRepo(t)
	remote = filepath.Join(t.TempDir(), "remote.git")
	git(t, a, "init", "-q", "--bare", remote)
	b = filepath.Join(t.TempDir(), "b")
	git(t, a, "clone", "-q", remote, b)
	sa, sb = openStore(t, a), openStore(t, b)
	SetArbiter(sa, remote, nil)
	SetArbiter(sb, remote, nil)
	return a, b, remote, sa, sb
}

// acceptAll is an incoming check that lets everything in.
func acceptAll(context.Context, *gitstore.Store, string, plumbing.Hash, plumbing.Hash) error {
	return nil
}

func tasks(n int) []*state.Task { return statetest.Pending(n) }

func plan(t *testing.T, s *gitstore.Store, feature string, ts []*state.Task) {
	t.Helper()
	var ids []string
	for _, tk := range ts {
		ids = append(ids, tk.ID())
	}
	err := s.Create(context.Background(), feature, false, time.Now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		return &gitstore.Message{Subject: "plan", Op: "plan"}, tx.Init(&state.Feature{Name: feature, Levels: [][]string{ids}}, ts)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func setStatus(s *gitstore.Store, feature, id string, st state.Status) error {
	return s.Update(context.Background(), feature, time.Now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		return putStatus(tx, id, st)
	})
}

// putStatus records task id moving to st within tx.
func putStatus(tx *gitstore.Tx, id string, st state.Status) (*gitstore.Message, error) {
	tk, err := tx.Task(id)
	if err != nil {
		return nil, err
	}
	c := tk.Clone()
	c.Record(state.Event{Op: "test", To: st})
	return &gitstore.Message{Subject: "set " + id, Op: "test", Task: id}, tx.Put(c)
}
