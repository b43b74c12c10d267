package hooks

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
)

func openStore(t *testing.T, dir string) *gitstore.Store {
	t.Helper()
	s, err := gitstore.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fakeZerg is an executable standing in for git-zerg in a hook script.
func fakeZerg(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "git-zerg")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeHooks records that the hooks are wanted, uninstall that they are not;
// a repository without a record wants them when an older install left them
// in the default directory.
func TestInstallInRecordsWanted(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	ctx := context.Background()
	s := openStore(t, gitInit(t))
	if wanted(s) {
		t.Fatal("wanted before any install")
	}
	exe := fakeZerg(t)
	cs, err := InstallIn(ctx, s, exe)
	if err != nil || actions(cs) != "pre-commit:installed pre-push:installed" {
		t.Fatalf("InstallIn: %v, %v", actions(cs), err)
	}
	if !wanted(s) {
		t.Error("not wanted after install")
	}
	r, err := StatusIn(ctx, s)
	if err != nil || r.Dir != filepath.Join(s.CommonDir, "hooks") || len(r.Hooks) != 2 {
		t.Fatalf("StatusIn: %+v, %v", r, err)
	}
	for _, h := range r.Hooks {
		if h.State != Installed || h.Binary != exe || !h.BinaryFound || h.Summary() != "runs "+exe {
			t.Errorf("%s: %+v, %q", h.Name, h, h.Summary())
		}
	}
	if err := os.Remove(exe); err != nil {
		t.Fatal(err)
	}
	r, _ = StatusIn(ctx, s)
	if h := r.Hooks[0]; h.BinaryFound || !strings.Contains(h.Summary(), "from PATH") {
		t.Errorf("binary gone: %+v, %q", h, h.Summary())
	}

	cs, err = UninstallIn(ctx, s)
	if err != nil || actions(cs) != "pre-commit:removed pre-push:removed" {
		t.Fatalf("UninstallIn: %v, %v", actions(cs), err)
	}
	if wanted(s) {
		t.Error("wanted after uninstall")
	}

	// An install from before the record existed.
	if _, err := writeHooks(filepath.Join(s.CommonDir, "hooks"), exe); err != nil {
		t.Fatal(err)
	}
	os.Remove(recordPath(s))
	if !wanted(s) {
		t.Error("hooks of an older install: not wanted")
	}
}

// The warning is worked out only where the hooks are wanted.
func TestStartWarning(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	ctx := context.Background()
	top := gitInit(t)
	s := openStore(t, top)
	git(t, top, "config", "core.hooksPath", filepath.Join(t.TempDir(), "elsewhere"))
	if w := StartWarning(ctx, s)(); w != "" {
		t.Errorf("hooks never installed: %q", w)
	}
	if err := writeRecord(s, recordInstalled, filepath.Join(s.CommonDir, "hooks")); err != nil {
		t.Fatal(err)
	}
	if w := StartWarning(ctx, s)(); !strings.Contains(w, "run git zerg hooks install") {
		t.Errorf("hooks wanted, git looks elsewhere: %q", w)
	}
	if w := StartWarning(ctx, nil)(); w != "" {
		t.Errorf("no repository: %q", w)
	}
}

// A hook with nothing to check does not open the repository: git-zerg's
// own commits, and a repository without refs/zerg.
func TestRunSkips(t *testing.T) {
	top := gitInit(t)
	r := Run{Dir: top, Now: time.Now(), Open: func() (*gitstore.Store, error) {
		t.Fatal("the repository opened")
		return nil, nil
	}}
	t.Setenv(gitcmd.GuardEnv, "")
	os.Unsetenv(gitcmd.GuardEnv)
	if err := r.CheckCommit(context.Background()); err != nil {
		t.Errorf("no refs/zerg: %v", err)
	}
	if err := r.CheckPush(context.Background(), strings.NewReader("bad"), "origin", "", nil); err != nil {
		t.Errorf("no refs/zerg, push: %v", err)
	}
	git(t, top, "update-ref", "refs/zerg/locks", "HEAD")
	t.Setenv(gitcmd.GuardEnv, "1")
	if err := r.CheckCommit(context.Background()); err != nil {
		t.Errorf("git-zerg's own commit: %v", err)
	}
}

// Lines git does not send are an input error, told apart from a refusal.
func TestCheckPushInput(t *testing.T) {
	t.Setenv(gitcmd.GuardEnv, "")
	os.Unsetenv(gitcmd.GuardEnv)
	top := gitInit(t)
	git(t, top, "update-ref", "refs/zerg/locks", "HEAD")
	r := Run{Dir: top, Now: time.Now(), Open: func() (*gitstore.Store, error) { return openStore(t, top), nil }}
	err := r.CheckPush(context.Background(), strings.NewReader("refs/heads/main abc\n"), "origin", "", func() string { return "" })
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "bad input line") {
		t.Errorf("bad input: %v", err)
	}
}

func TestPaths(t *testing.T) {
	ps := []Problem{{Path: "a"}, {Path: "a", Commit: "c1"}, {Path: "b"}}
	if n := paths(ps); n != 2 {
		t.Errorf("paths = %d, want 2", n)
	}
}

func TestSummary(t *testing.T) {
	for _, c := range []struct {
		h    HookReport
		want string
	}{
		{HookReport{State: Installed, Binary: "/b/git-zerg", BinaryFound: true, Legacy: "/h/pre-commit.zerg-legacy"}, "runs /b/git-zerg, after pre-commit.zerg-legacy"},
		{HookReport{State: Other}, "not git-zerg's: its checks do not run (install keeps this hook and runs it first)"},
		{HookReport{State: Absent}, "git-zerg's checks do not run"},
		{HookReport{State: Absent, Legacy: "/h/pre-push.zerg-legacy"}, "git-zerg's checks do not run (pre-push.zerg-legacy is kept; install chains it again)"},
	} {
		if got := c.h.Summary(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.h, got, c.want)
		}
	}
}
