package gitstore

import (
	"context"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/state"
)

// TestLogFollowsMerges: transitions two clones made apart (a remote that
// lost its refs, each host re-creating them) meet in a sync merge; the
// log shows both lines, not the first parent's alone, each commit once,
// newest first.
func TestLogFollowsMerges(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	plan(t, s, "f", tasks(2))
	base, _ := s.ReadRef(FeatureRef("f"))
	set := func(id string) plumbing.Hash {
		if err := s.Update(context.Background(), "f", time.Now, func(tx *Tx) (*Message, error) { return putStatus(tx, id, state.Done) }); err != nil {
			t.Fatal(err)
		}
		h, _ := s.ReadRef(FeatureRef("f"))
		return h
	}
	theirs := set("T000")
	// The other line: from the plan again, as the other host had it.
	git(t, dir, "update-ref", FeatureRef("f"), base.String())
	ours := set("T001")
	res, err := s.MergeFeature(context.Background(), "f", ours, theirs)
	if err != nil {
		t.Fatal(err)
	}
	git(t, dir, "update-ref", FeatureRef("f"), res.Commit.String())

	entries, err := s.Log("f", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []plumbing.Hash
	seen := map[plumbing.Hash]int{}
	for _, e := range entries {
		got = append(got, e.Hash)
		seen[e.Hash]++
	}
	for name, h := range map[string]plumbing.Hash{"merge": res.Commit, "ours": ours, "theirs": theirs, "plan": base} {
		if seen[h] != 1 {
			t.Errorf("%s (%s) is in the log %d times, want once: %v", name, short(h), seen[h], got)
		}
	}
	if len(entries) != 4 || entries[0].Hash != res.Commit || entries[len(entries)-1].Hash != base {
		t.Errorf("log = %v, want the merge first and the plan last, 4 commits", got)
	}
	for i := 1; i < len(entries); i++ {
		if entries[i].When.After(entries[i-1].When) {
			t.Errorf("entry %d (%s) is newer than the one before it", i, short(entries[i].Hash))
		}
	}
	if limited, err := s.Log("f", 2); err != nil || len(limited) != 2 || limited[0].Hash != res.Commit {
		t.Errorf("Log(f, 2) = %v, %v: want the merge and one more", limited, err)
	}
}
