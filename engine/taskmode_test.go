package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/git-zerg/git-zerg/worktree"
)

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
