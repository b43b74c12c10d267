package refs

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitcmd"
)

func newRepo(t *testing.T) (string, *DB) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, args := range [][]string{{"init", "-q", "-b", "main", dir},
		{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "a"},
		{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "b"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir, New(dir+"/.git", dir+"/.git", &gitcmd.Runner{Dir: dir}, &Shared{})
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestMoveIsCompareAndSwap: a move from the value a ref holds is made and
// logged under ReflogMessage; one from another value is a race (ErrRace)
// and moves nothing, one process per move or through the long-lived pipe;
// and every move is read back, loose or packed.
func TestMoveIsCompareAndSwap(t *testing.T) {
	dir, d := newRepo(t)
	ctx := context.Background()
	a := plumbing.NewHash(git(t, dir, "rev-parse", "HEAD~1"))
	b := plumbing.NewHash(git(t, dir, "rev-parse", "HEAD"))
	const ref = "refs/zerg/test"
	for _, piped := range []bool{false, true} {
		if err := d.Move(ctx, []Update{{Name: ref, New: a, Unchecked: true}}, piped, nil); err != nil {
			t.Fatal(err)
		}
		err := d.Move(ctx, []Update{{Name: ref, New: b, Old: b}}, piped, nil)
		if !errors.Is(err, ErrRace) {
			t.Fatalf("piped %v: a move from a value the ref does not hold: %v, want ErrRace", piped, err)
		}
		if h, err := d.Read(ref); err != nil || h != a {
			t.Fatalf("piped %v: after a lost race the ref is %v (%v), want %v", piped, h, err, a)
		}
		if err := d.Move(ctx, []Update{{Name: ref, New: b, Old: a}}, piped, nil); err != nil {
			t.Fatalf("piped %v: %v", piped, err)
		}
		if log := git(t, dir, "reflog", "show", "--format=%gs", ref); !strings.HasPrefix(log, ReflogMessage) {
			t.Fatalf("piped %v: the move is logged as %q, want %q", piped, log, ReflogMessage)
		}
		git(t, dir, "pack-refs", "--all")
		if h, err := d.Read(ref); err != nil || h != b {
			t.Fatalf("piped %v: packed, the ref is %v (%v), want %v", piped, h, err, b)
		}
		if got, err := d.Under("refs/zerg/"); err != nil || len(got) != 1 || got[ref] != b {
			t.Fatalf("piped %v: Under = %v, %v", piped, got, err)
		}
		if err := d.Move(ctx, []Update{{Name: ref, Delete: true}}, piped, nil); err != nil {
			t.Fatal(err)
		}
	}
	if p := d.PipeProcess(); p == nil {
		t.Fatal("no update-ref pipe after piped moves")
	}
	if err := d.ClosePipe(); err != nil || d.PipeProcess() != nil {
		t.Fatalf("ClosePipe: %v, process %v", err, d.PipeProcess())
	}
}
