package hooks

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// buildZerg builds the git-zerg command, for tests that need the hooks'
// real checks.
func buildZerg(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds git-zerg")
	}
	bin := filepath.Join(t.TempDir(), "git-zerg")
	build := exec.Command("go", "build", "-o", bin, "../cmd/git-zerg")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runIn runs a command in dir with the test's clean environment and
// returns its stderr and whether it succeeded.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), env...)
	var e bytes.Buffer
	cmd.Stderr = &e
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return e.String(), err == nil
}

// With a relative core.hooksPath, hooks installed in the main checkout do
// not run in linked worktrees: install refuses and says how to share one
// directory; once it is absolute, a commit of a locked path in a linked
// worktree is refused.
func TestRelativeHooksPath(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	bin := buildZerg(t)
	ctx := context.Background()
	top := gitInit(t)
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, top, "worktree", "add", "-q", "-b", "feature", wt)
	git(t, top, "config", "core.hooksPath", ".githooks")
	main := &gitcmd.Runner{Dir: top}
	linked := &gitcmd.Runner{Dir: wt}

	for _, r := range []*gitcmd.Runner{main, linked} {
		w, err := warning(ctx, r)
		if err != nil || !strings.Contains(w, "core.hooksPath is relative (.githooks)") || strings.Contains(w, "\n") {
			t.Errorf("Warning in %s = %q, %v", r.Dir, w, err)
		}
	}
	dir, cs, err := installRepo(ctx, main, bin)
	var he *HooksPathError
	if !errors.As(err, &he) || !errors.Is(err, errRelativeHooksPath) || len(cs) != 0 {
		t.Fatalf("install under a relative core.hooksPath: %v %v", cs, err)
	}
	if _, err := os.Lstat(filepath.Join(top, ".githooks")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("refused install wrote %s: %v", dir, err)
	}
	if !strings.Contains(he.Hint(), "git config core.hooksPath '") || !strings.HasSuffix(he.Hint(), string(filepath.Separator)+".githooks'") {
		t.Errorf("hint %q", he.Hint())
	}

	// The hint's command, then install again.
	git(t, top, "config", "core.hooksPath", he.Dir)
	if _, _, err := installRepo(ctx, main, bin); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*gitcmd.Runner{main, linked} {
		if w, err := warning(ctx, r); w != "" || err != nil {
			t.Errorf("Warning in %s after install = %q, %v", r.Dir, w, err)
		}
	}
	if _, ok := runIn(t, top, []string{"ZERG_WORKER=alice"}, bin, "lock", "shared.txt"); !ok {
		t.Fatal("lock failed")
	}
	for _, d := range []string{top, wt} {
		if err := os.WriteFile(filepath.Join(d, "shared.txt"), []byte(d), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, d, "add", "shared.txt")
		stderr, ok := runIn(t, d, nil, "git", "commit", "-q", "-m", "shared")
		if ok || !strings.Contains(stderr, "shared.txt: locked by alice@") {
			t.Errorf("commit of a locked path in %s: ok=%v, stderr %q", d, ok, stderr)
		}
	}
}

// Setting core.hooksPath after install makes git look elsewhere: the hooks
// stop running, and Warning says so from every worktree.
func TestWarningHooksPathChangedAfterInstall(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	ctx := context.Background()
	top := gitInit(t)
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, top, "worktree", "add", "-q", "-b", "feature", wt)
	main := &gitcmd.Runner{Dir: top}
	linked := &gitcmd.Runner{Dir: wt}
	warnings := func(want string) {
		t.Helper()
		for _, r := range []*gitcmd.Runner{main, linked} {
			w, err := warning(ctx, r)
			if err != nil || strings.Contains(w, "\n") || (want == "") != (w == "") || !strings.Contains(w, want) {
				t.Errorf("Warning in %s = %q, %v; want %q", r.Dir, w, err, want)
			}
		}
	}

	warnings("git-zerg's pre-commit and pre-push hooks are not installed in ")
	dir, _, err := installRepo(ctx, linked, "/opt/zerg/bin/git-zerg")
	if err != nil {
		t.Fatal(err)
	}
	if loc, _ := Locate(ctx, main); dir != loc.Default || loc.Dir != dir {
		t.Errorf("installed in %s, git looks in %s", dir, loc.Dir)
	}
	warnings("")

	team := filepath.Join(t.TempDir(), "team-hooks")
	git(t, top, "config", "core.hooksPath", team)
	warnings("git-zerg's hooks are in " + dir + ", but core.hooksPath (" + team + ") has git run hooks from " + team + ": commits and pushes are not checked")

	git(t, top, "config", "core.hooksPath", "hooks")
	warnings("core.hooksPath is relative (hooks)")
	git(t, top, "config", "--unset", "core.hooksPath")
	warnings("")

	// Another tool's hook in place of ours.
	if err := os.Rename(filepath.Join(dir, "pre-push"), filepath.Join(dir, "pre-push.bak")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pre-push"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	warnings("pre-push in " + dir + " is not git-zerg's hook: pushes are not checked")
	os.Remove(filepath.Join(dir, "pre-push"))
	warnings("git-zerg's pre-push hook is not installed in " + dir + ", where git runs hooks: pushes are not checked")
}
