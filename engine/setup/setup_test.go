package setup

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/engine/enginetest"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/hooks"
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

func TestCheck(t *testing.T) {
	g, _ := enginetest.New(t, enginetest.TwoTasks, nil)
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	ctx := context.Background()
	v, err := Check(ctx, g.Store)
	if err != nil || !strings.HasPrefix(v, "git version ") {
		t.Fatalf("Check: %q, %v", v, err)
	}
	// A relative core.hooksPath (husky's) is no reason to refuse: the
	// install stands in for it.
	enginetest.Run(t, g.Store.Top, "git", "config", "core.hooksPath", ".husky/_")
	if _, err := Check(ctx, g.Store); err != nil {
		t.Errorf("relative core.hooksPath: %v", err)
	}
	bare := filepath.Join(t.TempDir(), "bare.git")
	enginetest.Run(t, g.Store.Top, "git", "init", "-q", "--bare", bare)
	s, err := gitstore.Open(ctx, bare)
	if err != nil {
		t.Fatal(err)
	}
	var ee *engine.Error
	if _, err := Check(ctx, s); !errors.As(err, &ee) || ee.Kind != engine.Usage {
		t.Errorf("bare repository: %v", err)
	}
}

// The pre-push hook's gate set is the configuration's, and none when the
// repository or its configuration cannot be read.
func TestHookGateSet(t *testing.T) {
	g, _ := enginetest.New(t, enginetest.TwoTasks, nil)
	cfg, err := engine.LoadConfig(g.Store)
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
