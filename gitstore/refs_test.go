package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/state"
)

// zergRefKinds sets one ref of every kind git-zerg keeps and returns them
// with their values.
func zergRefKinds(t *testing.T, dir string, s *Store) map[string]plumbing.Hash {
	t.Helper()
	ctx := context.Background()
	plan(t, s, "f", tasks(2))
	now := time.Now()
	err := s.Update(ctx, "f", time.Now, func(tx *Tx) (*Message, error) {
		tk, err := tx.Task("T000")
		if err != nil {
			return nil, err
		}
		c := tk.Clone()
		c.Record(state.Event{Op: "claim", To: state.Claimed, Worker: "w"})
		c.Worker, c.Owner = "w", "w@h"
		tx.SetLocks([]state.Lock{{Path: "src/", Owner: "w@h", Feature: "f", Task: "T000", Created: now, Expires: now.Add(time.Hour)}})
		if err := tx.PutWorker(&state.Worker{Name: "w", Owner: "w@h", Task: "T000", Expires: now.Add(time.Hour)}); err != nil {
			return nil, err
		}
		return &Message{Subject: "claim", Op: "claim", Task: "T000"}, tx.Put(c)
	})
	if err != nil {
		t.Fatal(err)
	}
	head := git(t, dir, "rev-parse", "HEAD")
	tree := git(t, dir, "rev-parse", "HEAD^{tree}")
	remote := "refs/zerg-remotes/origin/" // where a sync fetches origin's state
	for _, name := range []string{
		"refs/zerg/work/f/T000",
		"refs/zerg/attempts/f/T000/1",
		"refs/zerg/attempts/f/w1/" + head[:12],
		"refs/zerg/gates/" + tree,
		"refs/zerg/gates-failed/" + tree,
	} {
		if err := s.SetRef(ctx, name, head); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "update-ref", remote+"features/f", git(t, dir, "rev-parse", FeatureRef("f")))
	git(t, dir, "update-ref", remote+"locks", git(t, dir, "rev-parse", LocksRef))
	want := map[string]plumbing.Hash{}
	for _, prefix := range []string{"refs/zerg/", "refs/zerg-remotes/"} {
		for _, line := range splitLines(git(t, dir, "for-each-ref", "--format=%(objectname) %(refname)", prefix)) {
			want[line[41:]] = plumbing.NewHash(line[:40])
		}
	}
	if len(want) != 9 {
		t.Fatalf("set up %d refs, want 9: %v", len(want), want)
	}
	return want
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

// TestLockFilesAreNotRefs holds a <ref>.lock file, as git does during every
// update (empty at first, then the new value) and a killed git leaves
// behind, beside a ref of every kind, loose and packed: no read fails, and
// no lock file is taken for a ref.
func TestLockFilesAreNotRefs(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	want := zergRefKinds(t, dir, s)
	var names []string
	for name := range want {
		names = append(names, name)
	}
	sort.Strings(names)
	head := git(t, dir, "rev-parse", "HEAD")
	for _, packed := range []bool{false, true} {
		if packed {
			git(t, dir, "pack-refs", "--all")
		}
		for _, content := range []string{"", head + "\n", "not a hash"} {
			var locks []string
			for _, name := range names {
				lock := filepath.Join(dir, ".git", filepath.FromSlash(name)) + ".lock"
				if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(lock, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
				locks = append(locks, lock)
			}
			fresh := openStore(t, dir)
			readEverything(t, fresh, want)
			for _, l := range locks {
				os.Remove(l)
			}
		}
	}
}

// readEverything runs every read of the store and checks it sees exactly
// the refs of want.
func readEverything(t *testing.T, s *Store, want map[string]plumbing.Hash) {
	t.Helper()
	features, err := s.Features()
	if err != nil || !reflect.DeepEqual(features, []string{"f"}) {
		t.Errorf("Features() = %v, %v; want [f]", features, err)
	}
	for name, h := range want {
		if got, err := s.ReadRef(name); err != nil || got != h {
			t.Errorf("ReadRef(%s) = %s, %v; want %s", name, got, err, h)
		}
		if got, err := s.ReadRef(name + ".lock"); err != nil || !got.IsZero() {
			t.Errorf("ReadRef(%s.lock) = %s, %v; want no ref", name, got, err)
		}
	}
	got := map[string]plumbing.Hash{}
	for _, prefix := range []string{"refs/zerg/", "refs/zerg-remotes/"} {
		refs, err := s.RefsUnder(prefix)
		if err != nil {
			t.Errorf("RefsUnder(%s): %v", prefix, err)
		}
		for k, v := range refs {
			got[k] = v
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RefsUnder lists %v, want %v", got, want)
	}
	tx, err := s.View("f")
	if err != nil {
		t.Fatalf("View: %v", err)
	}
	if all, err := tx.Tasks(); err != nil || len(all) != 2 {
		t.Errorf("Tasks() = %d tasks, %v", len(all), err)
	}
	if ws, err := tx.Workers(); err != nil || len(ws) != 1 {
		t.Errorf("Workers() = %v, %v", ws, err)
	}
	if locks, err := tx.Locks(); err != nil || len(locks) != 1 {
		t.Errorf("Locks() = %v, %v", locks, err)
	}
	if lv, err := s.View(""); err != nil {
		t.Errorf("View(\"\"): %v", err)
	} else if locks, err := lv.Locks(); err != nil || len(locks) != 1 {
		t.Errorf("Locks() of the locks view = %v, %v", locks, err)
	}
	// The snapshot of the first cache format goes when LocksAt writes its
	// own (here, with none yet).
	legacy := s.Layout().LocksTip() + ".json"
	os.MkdirAll(filepath.Dir(legacy), 0o755)
	os.Remove(s.Layout().LocksTip())
	os.WriteFile(legacy, []byte("{}"), 0o644)
	if locks, err := s.LocksAt(want[LocksRef]); err != nil || len(locks) != 1 {
		t.Errorf("LocksAt = %v, %v", locks, err)
	}
	if _, err := os.Stat(legacy); err == nil {
		t.Error("the first format's locks snapshot is left behind")
	}
	if log, err := s.Log("f", 0); err != nil || len(log) != 2 {
		t.Errorf("Log = %d entries, %v", len(log), err)
	}
	if b, err := s.TaskAt(want[FeatureRef("f")], "T000"); err != nil || b == nil {
		t.Errorf("TaskAt: %v", err)
	}
	for _, feature := range []string{"f", ""} {
		if rb, err := s.Rollbacks(feature); err != nil || len(rb) != 0 {
			t.Errorf("Rollbacks(%q) = %v, %v", feature, rb, err)
		}
	}
	remote := "refs/zerg-remotes/origin/" // where a sync fetches origin's state
	if res, err := s.MergeFeature(context.Background(), "f", want[FeatureRef("f")], want[remote+"features/f"]); err != nil || res.Kind != "up to date" {
		t.Errorf("MergeFeature = %v, %v", res.Kind, err)
	}
}
