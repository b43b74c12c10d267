package gitcmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// clearGitEnv keeps the environment of an outer git (a hook running the
// tests) from changing what Discover sees.
func clearGitEnv(t *testing.T) {
	for _, v := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
}

// Discover agrees with `git rev-parse` wherever it answers, and leaves to
// git what it cannot be sure of.
func TestDiscover(t *testing.T) {
	clearGitEnv(t)
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	top := filepath.Join(tmp, "repo")
	gitIn(t, tmp, "init", "-q", "-b", "main", top)
	gitIn(t, top, "commit", "-q", "--allow-empty", "-m", "one")
	sub := filepath.Join(top, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(tmp, "wt")
	gitIn(t, top, "worktree", "add", "-q", "-b", "w", wt)
	bare := filepath.Join(tmp, "bare.git")
	gitIn(t, tmp, "init", "-q", "--bare", bare)

	for _, dir := range []string{top, sub, wt} {
		got, ok := Discover(dir)
		if !ok {
			t.Fatalf("Discover(%s): not found", dir)
		}
		lines := strings.Split(gitIn(t, dir, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir", "--git-common-dir"), "\n")
		want := Repo{Top: lines[0], GitDir: lines[1], CommonDir: lines[2]}
		if got != want {
			t.Errorf("Discover(%s) = %+v, git says %+v", dir, got, want)
		}
	}
	for _, dir := range []string{bare, filepath.Join(top, ".git"), tmp} {
		if r, ok := Discover(dir); ok {
			t.Errorf("Discover(%s) = %+v, want it left to git", dir, r)
		}
	}

	// git sets GIT_DIR for a hook in a linked worktree: the same answer.
	t.Setenv("GIT_DIR", filepath.Join(top, ".git", "worktrees", "wt"))
	if r, ok := Discover(wt); !ok || r.Top != wt || !GitDirRedundant(wt) {
		t.Errorf("GIT_DIR naming the worktree's own git dir: %+v, %v", r, ok)
	}
	// GIT_DIR leading elsewhere, or no walk up with it set.
	if r, ok := Discover(top); ok || GitDirRedundant(top) {
		t.Errorf("GIT_DIR naming another git dir: %+v, want it left to git", r)
	}
	t.Setenv("GIT_DIR", ".git")
	if _, ok := Discover(top); !ok {
		t.Error("a relative GIT_DIR naming top/.git: not found")
	}
	if r, ok := Discover(sub); ok {
		t.Errorf("GIT_DIR set below the top: %+v, want it left to git", r)
	}
	os.Unsetenv("GIT_DIR")

	t.Setenv("GIT_WORK_TREE", top)
	if r, ok := Discover(top); ok {
		t.Errorf("GIT_WORK_TREE set: %+v, want it left to git", r)
	}
	os.Unsetenv("GIT_WORK_TREE")

	// A ceiling may stop the walk up, never the look at dir itself.
	t.Setenv("GIT_CEILING_DIRECTORIES", tmp)
	if _, ok := Discover(top); !ok {
		t.Error("GIT_CEILING_DIRECTORIES set: the top itself not found")
	}
	if r, ok := Discover(sub); ok {
		t.Errorf("GIT_CEILING_DIRECTORIES set, walking up: %+v, want it left to git", r)
	}
}
