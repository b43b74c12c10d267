package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/worktree"
)

// ownedEscape answers as worktree.FindOwnedEscape does, with or without
// links on disk below the owned directories, tracked or not.
func TestOwnedEscapeAgrees(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	base := t.TempDir()
	root, outside := filepath.Join(base, "repo"), filepath.Join(base, "outside")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	for _, d := range []string{"src/a/deep", "lib/b", "inner", "gen", outside} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for f, to := range map[string]string{
		"src/a/deep/out": outside,       // tracked, leads out
		"lib/b/in":       "../../inner", // tracked, stays inside
		"gen/cache":      outside,       // a setup's link: not tracked
		"top":            "src",         // tracked, inside
	} {
		if err := os.Symlink(to, filepath.Join(root, f)); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "src/a/x.go"), []byte("package a\n"), 0o644)
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("/gen/cache\n"), 0o644)
	run("init", "-q", "-b", "main", ".")
	run("add", "-A")
	run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "tree")

	git := &gitcmd.Runner{Dir: root}
	escapes := 0
	for _, owned := range [][]string{
		{"src/a/x.go"}, {"src/"}, {"src/a/"}, {"src/**/*.go"}, {"lib/"}, {"lib/b/in/z"}, {"gen/"},
		{"gen/cache/z"}, {"**"}, {"inner/", "lib/"}, {"missing/"}, {"top/a/deep/"}, {"src/a/deep/out"},
	} {
		want, werr := worktree.FindOwnedEscape(context.Background(), git, root, owned)
		got, gerr := OwnedEscape(context.Background(), git, root, owned)
		if (werr == nil) != (gerr == nil) || (want == nil) != (got == nil) || want != nil && *want != *got {
			t.Errorf("%q: ownedEscape = %+v, %v; FindOwnedEscape = %+v, %v", owned, got, gerr, want, werr)
		}
		if got != nil {
			escapes++
		}
	}
	if escapes < 5 {
		t.Errorf("%d of the cases lead out; the tree is not what the test means", escapes)
	}
}

// A directory owner without links below it needs no git process; one with
// a link (or the whole tree) does.
func TestLinksBelow(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "plain/sub"), 0o755)
	os.MkdirAll(filepath.Join(root, "linked"), 0o755)
	os.Symlink("..", filepath.Join(root, "linked/up"))
	for owned, want := range map[string]bool{
		"plain/": false, "plain/**/*.go": false, "missing/": false, "file.txt": false,
		"linked/": true, "linked/*.go": true, "**": true, "*.go": true,
	} {
		if got := linksBelow(root, []string{owned}); got != want {
			t.Errorf("linksBelow(%q) = %v, want %v", owned, got, want)
		}
	}
}
