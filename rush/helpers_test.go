package rush

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

// The helpers of the engine's tests, for the rush's.

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
func newEngine(t *testing.T, graph string, cfg *config.Config) (*engine.Engine, *fakeClock) {
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
	if err := engine.Trust(s, feature, tasks); err != nil {
		t.Fatal(err)
	}
	if cfg == nil {
		cfg = config.Default()
	}
	return &engine.Engine{Ctx: context.Background(), Store: s, Config: cfg, Feature: feature, Now: clock.Now}, clock
}

const twoTasks = `{"feature": "f", "tasks": [
 {"id": "A", "title": "a", "files": {"create": ["a.txt"]}, "verification": {"command": "test -f a.txt"}},
 {"id": "B", "title": "b", "dependencies": ["A"], "files": {"create": ["b.txt"]}, "verification": {"command": "test -f b.txt"}}
]}`
