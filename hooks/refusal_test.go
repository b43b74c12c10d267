package hooks_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/hooks"
)

// A commit of a path another owner locked is refused, with the sentence
// the command prints; pushing its commit is refused too.
func TestRunRefuses(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for k, v := range map[string]string{"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
		"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com"} {
		t.Setenv(k, v)
	}
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", gitcmd.GuardEnv} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	top := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", top}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	git("commit", "-q", "--allow-empty", "-m", "one")
	ctx := context.Background()
	s, err := gitstore.Open(ctx, top)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	g := &engine.Engine{Ctx: ctx, Store: s, Now: func() time.Time { return now }}
	if _, err := g.Lock([]string{"a.txt"}, "bob", "mine", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(top, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "a.txt")
	r := hooks.Run{Dir: top, Now: now, Open: func() (*gitstore.Store, error) { return s, nil },
		Owner: func() string { return "alice" }, WorkerOwner: func(w string) string { return w + "@here" }}
	var ref *hooks.Refusal
	if err := r.CheckCommit(ctx); !errors.As(err, &ref) || ref.Error() != "commit refused (1 staged path is not yours to commit)" ||
		len(ref.Problems) != 1 || ref.Problems[0].Path != "a.txt" {
		t.Fatalf("commit of a locked path: %v", err)
	}
	r.Owner = func() string { return "bob" }
	if err := r.CheckCommit(ctx); err != nil {
		t.Fatalf("the lock holder's commit: %v", err)
	}

	git("commit", "-q", "-m", "a")
	r.Owner = func() string { return "alice" }
	head := git("rev-parse", "HEAD")
	in := "refs/heads/main " + head + " refs/heads/main " + strings.Repeat("0", 40) + "\n"
	err = r.CheckPush(ctx, strings.NewReader(in), "origin", "", func() string { return "" })
	if !errors.As(err, &ref) || ref.What != "push to origin refused" || ref.Why != "1 problem" {
		t.Fatalf("push of a locked path: %v", err)
	}
}
