package engine

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine/trust"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

// fakeClock is a clock the test moves by hand: the engine never reads the
// wall clock for its rules.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// newEngine plans graph in a fresh repository and returns an engine on it
// with a fake clock.
func newEngine(t *testing.T, graph string, cfg *config.Config) (*Engine, *fakeClock) {
	t.Helper()
	dir := t.TempDir()
	for k, v := range map[string]string{"HOME": dir, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "Zerg Tester", "GIT_AUTHOR_EMAIL": "tester@example.com",
		"GIT_COMMITTER_NAME": "Zerg Tester", "GIT_COMMITTER_EMAIL": "tester@example.com"} {
		t.Setenv(k, v)
	}
	repo := filepath.Join(dir, "repo")
	run(t, dir, "git", "init", "-q", "-b", "main", repo)
	run(t, repo, "git", "commit", "-q", "--allow-empty", "-m", "initial")
	plan, problems := levels.Load([]byte(graph))
	if len(problems) > 0 {
		t.Fatalf("graph: %v", problems)
	}
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s, err := gitstore.Open(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	feature := plan.Graph.Feature
	var tasks []*state.Task
	for _, sp := range plan.Graph.Tasks {
		tasks = append(tasks, &state.Task{Spec: sp, Level: plan.Level[sp.ID], Implied: plan.Implied[sp.ID],
			Dependents: plan.Dependents[sp.ID], Status: state.Pending,
			History: []state.Event{{At: clock.Now(), Op: "plan", To: state.Pending, Clock: 1}}})
	}
	err = s.Create(context.Background(), feature, false, clock.Now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		meta := &state.Feature{Format: state.Format, Name: feature, PlannedAt: clock.Now(), Levels: plan.Levels}
		return &gitstore.Message{Subject: "plan " + feature, Op: "plan"}, tx.Init(meta, tasks)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := trust.Record(s, feature, tasks); err != nil {
		t.Fatal(err)
	}
	if cfg == nil {
		cfg = config.Default()
	}
	return &Engine{Ctx: context.Background(), Store: s, Config: cfg, Feature: feature, Now: clock.Now}, clock
}

const twoTasks = `{"feature": "f", "tasks": [
 {"id": "A", "title": "a", "files": {"create": ["a.txt"]}, "verification": {"command": "test -f a.txt"}},
 {"id": "B", "title": "b", "dependencies": ["A"], "files": {"create": ["b.txt"]}, "verification": {"command": "test -f b.txt"}}
]}`

// A claim, its lease running out on the fake clock, and the claim lost:
// all in-process, no time passing.
func TestClaimLeaseOnFakeClock(t *testing.T) {
	g, clock := newEngine(t, twoTasks, nil)
	got, why, err := g.Claim(ClaimRequest{Worker: "w1"})
	if err != nil || got == nil || got.ID() != "A" {
		t.Fatalf("claim: %v %q %v", got, why, err)
	}
	if _, why, _ := g.Claim(ClaimRequest{Worker: "w2"}); why == "" {
		t.Fatal("B claimed before A is done")
	}
	clock.Add(time.Hour)
	if _, err := g.Heartbeat("w1"); err != nil {
		t.Fatalf("heartbeat within the lease: %v", err)
	}
	clock.Add(3 * time.Hour) // past the renewed 2h lease
	_, err = g.Heartbeat("w1")
	var ee *Error
	if !errors.As(err, &ee) || ee.Kind != Refused || !strings.Contains(ee.Why, "expired") {
		t.Fatalf("heartbeat after the lease: %v", err)
	}
	a, err := g.Task("A")
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != state.Pending || a.Attempts != 1 || a.Reason != "lease of w1 expired" {
		t.Fatalf("A after expiry: %s, %d attempts, %q", a.Status, a.Attempts, a.Reason)
	}
	// The backoff after the expiry is on the same clock.
	if _, why, _ := g.Claim(ClaimRequest{Worker: "w2"}); !strings.Contains(why, "backs off until") {
		t.Fatalf("claim during the backoff: %q", why)
	}
	clock.Add(time.Hour)
	if got, _, err := g.Claim(ClaimRequest{Worker: "w2"}); err != nil || got == nil || got.Attempts != 2 {
		t.Fatalf("claim after the backoff: %v %v", got, err)
	}
}

// A claim restricted by Only takes the ready task Rank puts first, where
// the policy's own order would take another; Only still bounds it.
func TestClaimRank(t *testing.T) {
	g, _ := newEngine(t, `{"feature": "f", "tasks": [
 {"id": "A", "title": "a", "verification": {"command": "true"}},
 {"id": "B", "title": "b", "verification": {"command": "true"}},
 {"id": "C", "title": "c", "verification": {"command": "true"}}
]}`, nil)
	all := func(*state.Task) bool { return true }
	rank := map[string]float64{"A": 1, "B": 3, "C": 2}
	byRank := func(t *state.Task) float64 { return rank[t.ID()] }
	got, why, err := g.Claim(ClaimRequest{Worker: "w1", Only: all, Rank: byRank})
	if err != nil || got == nil || got.ID() != "B" {
		t.Fatalf("ranked claim = %v %q %v, want B", got, why, err)
	}
	notC := func(t *state.Task) bool { return t.ID() != "C" }
	got, why, err = g.Claim(ClaimRequest{Worker: "w2", Only: notC, Rank: byRank})
	if err != nil || got == nil || got.ID() != "A" {
		t.Fatalf("ranked claim without C = %v %q %v, want A", got, why, err)
	}
	got, why, err = g.Claim(ClaimRequest{Worker: "w3", Only: all})
	if err != nil || got == nil || got.ID() != "C" {
		t.Fatalf("unranked claim = %v %q %v, want C", got, why, err)
	}
}
