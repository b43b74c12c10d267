package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/hooks"
	"github.com/git-zerg/git-zerg/worktree"
)

func TestGitVersion(t *testing.T) {
	for _, c := range []struct {
		v            string
		major, minor int
		ok           bool
	}{
		{"git version 2.39.5 (Apple Git-143)", 2, 39, true},
		{"git version 2.38.0", 2, 38, true},
		{"git version 3.0", 3, 0, true},
		{"git version 2", 0, 0, false},
		{"git version x.y", 0, 0, false},
		{"git", 0, 0, false},
	} {
		major, minor, ok := GitVersion(c.v)
		if ok != c.ok || ok && (major != c.major || minor != c.minor) {
			t.Errorf("GitVersion(%q) = %d.%d %v, want %d.%d %v", c.v, major, minor, ok, c.major, c.minor, c.ok)
		}
	}
}

func TestWriteConfig(t *testing.T) {
	top := t.TempDir()
	wrote, err := WriteConfig(top)
	if err != nil || !wrote {
		t.Fatalf("first: %v, %v", wrote, err)
	}
	name := filepath.Join(top, ".zerg", "config.toml")
	if b, err := os.ReadFile(name); err != nil || string(b) != config.Template {
		t.Fatalf("written: %v", err)
	}
	if err := os.WriteFile(name, []byte("# mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if wrote, err := WriteConfig(top); err != nil || wrote {
		t.Fatalf("again: %v, %v", wrote, err)
	}
	if b, _ := os.ReadFile(name); string(b) != "# mine\n" {
		t.Error("an existing configuration replaced")
	}
}

func TestCheckSetup(t *testing.T) {
	g, _ := newEngine(t, twoTasks, nil)
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	ctx := context.Background()
	v, err := CheckSetup(ctx, g.Store)
	if err != nil || !strings.HasPrefix(v, "git version ") {
		t.Fatalf("CheckSetup: %q, %v", v, err)
	}
	// A relative core.hooksPath (husky's) is no reason to refuse: the
	// install stands in for it.
	run(t, g.Store.Top, "git", "config", "core.hooksPath", ".husky/_")
	if _, err := CheckSetup(ctx, g.Store); err != nil {
		t.Errorf("relative core.hooksPath: %v", err)
	}
	bare := filepath.Join(t.TempDir(), "bare.git")
	run(t, g.Store.Top, "git", "init", "-q", "--bare", bare)
	s, err := gitstore.Open(ctx, bare)
	if err != nil {
		t.Fatal(err)
	}
	var ee *Error
	if _, err := CheckSetup(ctx, s); !errors.As(err, &ee) || ee.Kind != Usage {
		t.Errorf("bare repository: %v", err)
	}
}

// StageHead moves staging only forward, up to HEAD.
func TestStageHead(t *testing.T) {
	g, _ := newEngine(t, twoTasks, nil)
	top := g.Store.Top
	branch := worktree.StagingBranch(g.Feature)
	if err := g.StageHead(); err != nil {
		t.Fatal(err)
	}
	head := run(t, top, "git", "rev-parse", "HEAD")
	if got := run(t, top, "git", "rev-parse", branch); got != head {
		t.Fatalf("staging at %s, HEAD at %s", got, head)
	}
	run(t, top, "git", "commit", "-q", "--allow-empty", "-m", "two")
	if err := g.StageHead(); err != nil {
		t.Fatal(err)
	}
	if got, head := run(t, top, "git", "rev-parse", branch), run(t, top, "git", "rev-parse", "HEAD"); got != head {
		t.Fatalf("staging not fast-forwarded: %s, HEAD %s", got, head)
	}
	run(t, top, "git", "reset", "-q", "--hard", "HEAD^")
	var ee *Error
	if err := g.StageHead(); !errors.As(err, &ee) || ee.Kind != Refused || !strings.Contains(ee.Why, "HEAD lacks") {
		t.Fatalf("staging ahead of HEAD: %v", err)
	}
}

// The pre-push hook's gate set is the configuration's, and none when the
// repository or its configuration cannot be read.
func TestHookGateSet(t *testing.T) {
	g, _ := newEngine(t, twoTasks, nil)
	cfg, err := LoadConfig(g.Store)
	if err != nil {
		t.Fatal(err)
	}
	if got := HookGateSet(func() (*gitstore.Store, error) { return g.Store, nil })(); got != hooks.GateSet(cfg.Gates) {
		t.Errorf("gate set %q, want %q", got, hooks.GateSet(cfg.Gates))
	}
	if got := HookGateSet(func() (*gitstore.Store, error) { return nil, errors.New("no repo") })(); got != "" {
		t.Errorf("no repository: %q", got)
	}
}
