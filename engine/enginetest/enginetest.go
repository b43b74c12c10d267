// Package enginetest gives the tests of the packages above engine (rush,
// epic) an engine on a planned feature in a fresh repository, with a clock
// the test moves by hand. engine's own tests keep theirs: they are inside
// the package, which this one imports.
package enginetest

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/engine/trust"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

// Clock is the engine's clock in a test: a fixed time, so that what the
// engine records does not depend on when the test runs (the engine never
// reads the wall clock for its rules).
type Clock struct {
	t time.Time
}

// Now is the clock's time.
func (c *Clock) Now() time.Time { return c.t }

// Run runs a command in dir, failing the test when it fails, and returns
// its output trimmed.
func Run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// New plans graph in a fresh repository, isolated from the user's git
// configuration, and returns an engine on it with a Clock (cfg nil: the
// default configuration).
func New(t *testing.T, graph string, cfg *config.Config) (*engine.Engine, *Clock) {
	t.Helper()
	dir := t.TempDir()
	for k, v := range map[string]string{"HOME": dir, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "Zerg Tester", "GIT_AUTHOR_EMAIL": "tester@example.com",
		"GIT_COMMITTER_NAME": "Zerg Tester", "GIT_COMMITTER_EMAIL": "tester@example.com"} {
		t.Setenv(k, v)
	}
	repo := filepath.Join(dir, "repo")
	Run(t, dir, "git", "init", "-q", "-b", "main", repo)
	Run(t, repo, "git", "commit", "-q", "--allow-empty", "-m", "initial")
	plan, problems := levels.Load([]byte(graph))
	if len(problems) > 0 {
		t.Fatalf("graph: %v", problems)
	}
	clock := &Clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
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
	return &engine.Engine{Ctx: context.Background(), Store: s, Config: cfg, Feature: feature, Now: clock.Now}, clock
}

// TwoTasks is a graph of two tasks, B depending on A, each creating a file.
const TwoTasks = `{"feature": "f", "tasks": [
 {"id": "A", "title": "a", "files": {"create": ["a.txt"]}, "verification": {"command": "test -f a.txt"}},
 {"id": "B", "title": "b", "dependencies": ["A"], "files": {"create": ["b.txt"]}, "verification": {"command": "test -f b.txt"}}
]}`

// WantKind fails the test unless err is an *engine.Error of kind whose
// message contains what.
func WantKind(t *testing.T, err error, kind engine.Kind, what string) {
	t.Helper()
	var ee *engine.Error
	if !errors.As(err, &ee) || ee.Kind != kind || !strings.Contains(ee.Error(), what) {
		t.Fatalf("got %v, want a kind %d error with %q", err, kind, what)
	}
}
