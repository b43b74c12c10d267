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

// With a relative core.hooksPath (a team's versioned .githooks), git-zerg's
// own directory stands in for it in the worktree it is installed from and
// in each one given its setting: the team's hook still runs, first, from
// each worktree's own top, and git-zerg's check after it; the versioned
// directory is not written to. A worktree without the setting is warned.
func TestRelativeHooksPath(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	bin := buildZerg(t)
	ctx := context.Background()
	top := gitInit(t)
	team := "#!/bin/sh\necho \"team $(basename \"$PWD\")\" >> \"$TEAM_LOG\"\n"
	if err := os.MkdirAll(filepath.Join(top, ".githooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pre-commit", "commit-msg"} {
		if err := os.WriteFile(filepath.Join(top, ".githooks", name), []byte(team), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git(t, top, "add", ".githooks")
	git(t, top, "commit", "-q", "-m", "team hooks")
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, top, "worktree", "add", "-q", "-b", "feature", wt)
	git(t, top, "config", "core.hooksPath", ".githooks")
	main := &gitcmd.Runner{Dir: top}
	linked := &gitcmd.Runner{Dir: wt}
	teamLog := filepath.Join(t.TempDir(), "team.log")
	env := []string{"TEAM_LOG=" + teamLog}

	for _, r := range []*gitcmd.Runner{main, linked} {
		w, err := warning(ctx, r)
		if err != nil || !strings.Contains(w, "core.hooksPath is relative (.githooks)") || strings.Contains(w, "\n") {
			t.Errorf("Warning in %s = %q, %v", r.Dir, w, err)
		}
	}
	dir, cs, err := installRepo(ctx, main, bin)
	if err != nil || len(cs) != 2 || cs[0].Chains != ".githooks/pre-commit" {
		t.Fatalf("install under a relative core.hooksPath: %v %v", cs, err)
	}
	common := git(t, top, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if want := filepath.Join(common, "zerg", "githooks"); dir != want {
		t.Errorf("installed in %s, want %s", dir, want)
	}
	if st := git(t, top, "status", "--porcelain"); st != "" {
		t.Errorf("install changed the work tree:\n%s", st)
	}
	for name, want := range map[string]bool{"commit-msg": true, "post-checkout": false} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("forwarder %s: %v, want it %v", name, err, want)
		}
	}
	if w, err := warning(ctx, main); w != "" || err != nil {
		t.Errorf("Warning in the main checkout after install = %q, %v", w, err)
	}
	if w, _ := warning(ctx, linked); !strings.Contains(w, "does not stand in for it in this worktree; run git zerg hooks install") {
		t.Errorf("Warning in a linked worktree without the setting = %q", w)
	}
	if _, _, err := installRepo(ctx, linked, bin); err != nil {
		t.Fatal(err)
	}
	if w, err := warning(ctx, linked); w != "" || err != nil {
		t.Errorf("Warning in the linked worktree after its install = %q, %v", w, err)
	}
	// A hook manager setting core.hooksPath again changes the repository's
	// setting, which each worktree's own overrides.
	git(t, top, "config", "core.hooksPath", ".githooks")

	if _, ok := runIn(t, top, []string{"ZERG_WORKER=alice"}, bin, "lock", "shared.txt"); !ok {
		t.Fatal("lock failed")
	}
	for _, d := range []string{top, wt} {
		if err := os.WriteFile(filepath.Join(d, "shared.txt"), []byte(d), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, d, "add", "shared.txt")
		stderr, ok := runIn(t, d, env, "git", "commit", "-q", "-m", "shared")
		if ok || !strings.Contains(stderr, "shared.txt: locked by alice@") {
			t.Errorf("commit of a locked path in %s: ok=%v, stderr %q", d, ok, stderr)
		}
		git(t, d, "reset", "-q", "shared.txt")
		os.Remove(filepath.Join(d, "shared.txt"))
		if err := os.WriteFile(filepath.Join(d, "free.txt"), []byte(d), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, d, "add", "free.txt")
		if stderr, ok := runIn(t, d, env, "git", "commit", "-q", "-m", "free"); !ok {
			t.Errorf("commit of a free path in %s: %s", d, stderr)
		}
	}
	b, _ := os.ReadFile(teamLog)
	// Each commit ran the team's pre-commit (the refused ones too, first)
	// and, for the two that were made, its commit-msg, in its own worktree.
	want := strings.Repeat("team "+filepath.Base(top)+"\n", 3) + strings.Repeat("team wt\n", 3)
	if string(b) != want {
		t.Errorf("team hooks ran:\n%s\nwant\n%s", b, want)
	}

	// Uninstall takes the setting back from every worktree: git runs the
	// team's hooks alone again.
	if _, err := uninstallOwn(ctx, main, dir); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*gitcmd.Runner{main, linked} {
		loc, err := Locate(ctx, r)
		if err != nil || loc.Own || loc.HooksPath != ".githooks" {
			t.Errorf("after uninstall, in %s: %+v, %v", r.Dir, loc, err)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("git-zerg's hooks directory after uninstall: %v", err)
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

// A worktree git-zerg's directory stood in for goes back to where the
// repository's setting leads once that is no longer relative: installing
// again drops the worktree's own setting and installs there.
func TestOwnDirBackWhenNoLongerRelative(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	ctx := context.Background()
	top := gitInit(t)
	main := &gitcmd.Runner{Dir: top}
	git(t, top, "config", "core.hooksPath", ".githooks")
	own, _, err := installRepo(ctx, main, "/opt/zerg/bin/git-zerg")
	if err != nil {
		t.Fatal(err)
	}
	git(t, top, "config", "--unset", "core.hooksPath")
	if w, _ := warning(ctx, main); !strings.Contains(w, "stand in for core.hooksPath .githooks") {
		t.Errorf("warning once the setting is gone: %q", w)
	}
	dir, _, err := installRepo(ctx, main, "/opt/zerg/bin/git-zerg")
	if err != nil {
		t.Fatal(err)
	}
	loc, err := Locate(ctx, main)
	if err != nil || loc.Own || dir != loc.Default || loc.Dir != dir || dir == own {
		t.Errorf("installed in %s (own %s); now %+v, %v", dir, own, loc, err)
	}
	if w, err := warning(ctx, main); w != "" || err != nil {
		t.Errorf("warning after the install went back: %q, %v", w, err)
	}
}
