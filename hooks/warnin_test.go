package hooks

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// warningIn says what warning says, whatever core.hooksPath is, from the
// main checkout and from a linked worktree.
func TestWarningInAgreesWithWarning(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	ctx := context.Background()
	top := gitInit(t)
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, top, "worktree", "add", "-q", "-b", "feature", wt)
	common := git(t, top, "rev-parse", "--path-format=absolute", "--git-common-dir")
	same := func(what string) {
		t.Helper()
		for _, dir := range []string{top, wt} {
			r := &gitcmd.Runner{Dir: dir}
			want, werr := warning(ctx, r)
			got, gerr := warningIn(ctx, r, common)
			if got != want || (werr == nil) != (gerr == nil) {
				t.Errorf("%s, in %s: WarningIn = %q, %v; Warning = %q, %v", what, dir, got, gerr, want, werr)
			}
		}
	}
	same("never installed")
	if _, _, err := installRepo(ctx, &gitcmd.Runner{Dir: top}, "/opt/zerg/bin/git-zerg"); err != nil {
		t.Fatal(err)
	}
	same("installed")
	team := filepath.Join(t.TempDir(), "team-hooks")
	git(t, top, "config", "core.hooksPath", team)
	same("absolute core.hooksPath set after install")
	if _, err := writeHooks(team, "/opt/zerg/bin/git-zerg"); err != nil {
		t.Fatal(err)
	}
	same("installed under the absolute core.hooksPath")
	git(t, top, "config", "core.hooksPath", team+"/")
	same("trailing slash")
	git(t, top, "config", "core.hooksPath", ".githooks")
	same("relative")
	home := t.TempDir()
	t.Setenv("HOME", home)
	if err := os.MkdirAll(filepath.Join(home, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, top, "config", "core.hooksPath", "~/hooks")
	same("under ~")
	git(t, top, "config", "--unset", "core.hooksPath")
	os.Remove(filepath.Join(common, "hooks", "pre-push"))
	same("pre-push removed")
}
