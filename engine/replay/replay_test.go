package replay_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/engine/enginetest"
	"github.com/git-zerg/git-zerg/engine/replay"
	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/gitstore/storetest"
)

// A history of the engine's own transitions replays clean, every commit
// counted; a commit that sets a task's status by hand (failed to done, no
// verification, no work) is found, with its task, whether the replay
// starts at the plan or at the last commit trusted.
func TestHistoryFindsForgedTransition(t *testing.T) {
	g, _ := enginetest.New(t, enginetest.TwoTasks, nil)
	ctx, s := context.Background(), g.Store
	if _, _, err := g.Claim(engine.ClaimRequest{Worker: "w1", Task: "A"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := g.Fail(engine.Failure{Worker: "w1", Task: "A", Reason: "tests fail"}); err != nil {
		t.Fatal(err)
	}
	tip, err := s.ReadRef(gitstore.FeatureRef("f"))
	if err != nil {
		t.Fatal(err)
	}
	problems, commits, err := replay.History(ctx, s, "f", tip.String(), "")
	if err != nil || len(problems) != 0 || commits != 3 {
		t.Fatalf("the engine's own history: %d commits, problems %v, %v; want 3 and none", commits, problems, err)
	}

	c, err := s.ReadCommit(tip)
	if err != nil {
		t.Fatal(err)
	}
	blob, err := s.TaskAt(tip, "A")
	if err != nil {
		t.Fatal(err)
	}
	done := bytes.Replace(blob, []byte(`"status": "failed"`), []byte(`"status": "done"`), 1)
	if bytes.Equal(done, blob) {
		t.Fatalf("no failed status in A's blob:\n%s", blob)
	}
	forged := storetest.ForgeTask(t, s, c, tip, "A", done)

	for _, stop := range []string{"", tip.String()} {
		problems, _, err := replay.History(ctx, s, "f", forged.String(), stop)
		if err != nil {
			t.Fatal(err)
		}
		if !forgedA(problems, forged.String()) {
			t.Errorf("from %q: problems %v, want A's status moved without a transition, all in the forged commit", stop, problems)
		}
	}
	bad, err := replay.IllegalSince(ctx, s, "f", forged, tip)
	if err != nil || !slices.ContainsFunc(bad, func(p string) bool { return strings.Contains(p, " A: state changed without a transition") }) {
		t.Errorf("IllegalSince: %q, %v; want A's forged transition", bad, err)
	}
	if bad, err := replay.IllegalSince(ctx, s, "f", tip, plumbing.ZeroHash); err != nil || len(bad) != 0 {
		t.Errorf("IllegalSince of the engine's own history: %q, %v", bad, err)
	}
}

// forgedA says whether every problem is of the forged commit and one is
// A's status moved without a transition.
func forgedA(problems []gates.Problem, forged string) bool {
	found := false
	for _, p := range problems {
		if p.Commit != forged {
			return false
		}
		found = found || p.Task == "A" && strings.Contains(p.Msg, "status failed → done")
	}
	return found
}
