package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine/trust"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/gitstore/storetest"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

// newFeature makes a repository with feature "f" of n independent tasks
// planned, and its engine.
func newFeature(tb testing.TB, n int) *Engine {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("no git")
	}
	dir := tb.TempDir()
	for _, kv := range []string{"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t",
		"GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"} {
		k, v, _ := strings.Cut(kv, "=")
		tb.Setenv(k, v)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main", dir}, {"-C", dir, "commit", "-q", "--allow-empty", "-m", "initial"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			tb.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	ctx := context.Background()
	s, err := gitstore.Open(ctx, dir)
	if err != nil {
		tb.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	var tasks []*state.Task
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("T%d", i+1)
		ids = append(ids, id)
		tasks = append(tasks, &state.Task{Spec: &levels.Task{ID: id, Title: "task " + id, Verification: levels.Verification{Command: "true"}},
			Level: 1, Status: state.Pending, History: []state.Event{{At: now, Op: "plan", To: state.Pending}}})
	}
	meta := &state.Feature{Format: state.Format, Name: "f", PlannedAt: now, Levels: [][]string{ids}}
	err = s.Create(ctx, "f", false, time.Now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		for _, t := range tasks {
			t.History[0].Clock = tx.Clock() + 1
		}
		if err := tx.Init(meta, tasks); err != nil {
			return nil, err
		}
		return &gitstore.Message{Subject: "plan f", Op: "plan"}, nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	if err := trust.Record(s, "f", tasks); err != nil { // planned here, as plan does
		tb.Fatal(err)
	}
	return &Engine{Ctx: ctx, Store: s, Config: config.Default(), Feature: "f"}
}

func (g *Engine) tip(tb testing.TB) plumbing.Hash {
	tb.Helper()
	h, err := g.Store.ReadRef(gitstore.FeatureRef(g.Feature))
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

func taskBlob(tb testing.TB, s *gitstore.Store, commit plumbing.Hash, id string) []byte {
	tb.Helper()
	b, err := s.TaskAt(commit, id)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// A tip moved by a plain update to a forged state is refused by every
// engine entry, and by transactions, whatever the reflog says of the
// update: a fetch's message, git-zerg's own (a worker can pass -m), or
// none. The forged commit even carries the seal of the commit it copies.
// A tip moved by the engine's own transitions is taken without a replay.
func TestCheckState(t *testing.T) {
	for _, how := range [][]string{{"-m", "fetch: fast-forward"}, {"-m", gitstore.ReflogMessage}, nil} {
		t.Run(fmt.Sprint(how), func(t *testing.T) { testCheckState(t, how) })
	}
}

func testCheckState(t *testing.T, reflog []string) {
	g := newFeature(t, 3)
	if _, _, err := g.Claim(ClaimRequest{Worker: "w1", Task: "T1"}); err != nil {
		t.Fatal(err)
	}
	if err := g.CheckState(); err != nil {
		t.Fatal(err)
	}
	// A feature not planned has no state to doubt.
	if err := (&Engine{Ctx: g.Ctx, Store: g.Store, Feature: "none"}).CheckState(); err != nil {
		t.Fatalf("unplanned: %v", err)
	}
	good := g.tip(t)
	if _, ok := writtenHere(g.Store, good, plumbing.ZeroHash); !ok {
		t.Error("the engine's own history is not recognized as written here")
	}

	// T2 marked done by hand on top.
	c, err := g.Store.ReadCommit(good)
	if err != nil {
		t.Fatal(err)
	}
	forged := storetest.ForgeTask(t, g.Store, c, good, "T2", bytes.Replace(taskBlob(t, g.Store, good, "T2"), []byte(`"status": "pending"`), []byte(`"status": "done"`), 1))
	args := append(append([]string{"-C", g.Store.Top, "update-ref"}, reflog...), gitstore.FeatureRef("f"), forged.String())
	if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, ok := writtenHere(g.Store, forged, good); ok {
		t.Error("a commit written with plain git is taken for the engine's own")
	}
	var ee *Error
	if err := g.CheckState(); !errors.As(err, &ee) || ee.Kind != Refused || !strings.Contains(err.Error(), "changed outside git-zerg") ||
		!strings.Contains(ee.Hint, good.String()) {
		t.Fatalf("CheckState = %v (%v)", err, ee)
	}
	if _, err := g.View(); !errors.As(err, &ee) || ee.Kind != Refused {
		t.Errorf("View = %v", err)
	}
	if _, _, err := g.Claim(ClaimRequest{Worker: "w3", Task: "T3"}); !errors.As(err, &ee) || ee.Kind != Refused {
		t.Errorf("Claim = %v", err)
	}
	if g.tip(t) != forged {
		t.Error("a transition was written on the forged state")
	}
	if trust.Checked(g.Store, "f") == forged {
		t.Error("the forged tip was taken for checked")
	}
	// Nor does writing the forged tip into the checked file, as a worker
	// could, make it checked.
	os.MkdirAll(filepath.Dir(g.Store.Layout().Checked("f")), 0o755)
	if err := os.WriteFile(g.Store.Layout().Checked("f"), []byte(forged.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := g.CheckState(); !errors.As(err, &ee) || ee.Kind != Refused {
		t.Errorf("CheckState with a hand-written checked file = %v", err)
	}
}

// The cost of the check on the path every transition takes: the tip moved
// by one of the engine's own commits since the last check.
func BenchmarkCheckStateMoved(b *testing.B) {
	g := newFeature(b, 200)
	for i := 1; i <= 20; i++ {
		if _, _, err := g.Claim(ClaimRequest{Worker: fmt.Sprint("w", i), Task: fmt.Sprint("T", i)}); err != nil {
			b.Fatal(err)
		}
	}
	tip := g.tip(b)
	c, _ := g.Store.ReadCommit(tip)
	if _, ok := writtenHere(g.Store, tip, c.ParentHashes[0]); !ok {
		b.Fatal("the engine's own commit is not recognized")
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := trust.WriteChecked(g.Store, "f", c.ParentHashes[0]); err != nil {
			b.Fatal(err)
		}
		if err := CheckStateAt(g.Context(), g.Store, "f", tip); err != nil {
			b.Fatal(err)
		}
	}
}

// The cost when the tip did not move.
func BenchmarkCheckStateSame(b *testing.B) {
	g := newFeature(b, 200)
	if _, _, err := g.Claim(ClaimRequest{Worker: "w1", Task: "T1"}); err != nil {
		b.Fatal(err)
	}
	tip := g.tip(b)
	if err := CheckStateAt(g.Context(), g.Store, "f", tip); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := CheckStateAt(g.Context(), g.Store, "f", tip); err != nil {
			b.Fatal(err)
		}
	}
}

// A long walk of the engine's own commits is taken whole.
func TestWrittenHereLongWalk(t *testing.T) {
	g := newFeature(t, 90)
	first := g.tip(t)
	for i := 1; i <= 85; i++ {
		if _, _, err := g.Claim(ClaimRequest{Worker: fmt.Sprint("w", i), Task: fmt.Sprint("T", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if n, ok := writtenHere(g.Store, g.tip(t), first); !ok || n != 85 {
		t.Errorf("writtenHere = %d, %v; want 85, true", n, ok)
	}
}
