package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/hooks"
)

// Classify gives every error the kind its exit code comes from.
func TestClassify(t *testing.T) {
	own := &Error{Kind: NeedsPerson, What: "w"}
	for _, c := range []struct {
		err  error
		kind Kind
		what string
	}{
		{fmt.Errorf("wrapped: %w", own), NeedsPerson, "w"},
		{&gates.Refusal{Op: "claim", Task: "A", Reasons: []string{"x", "y"}}, Refused, "claim A refused (x; y)"},
		{fmt.Errorf("%w: here", gitstore.ErrNotRepo), Usage, "not in a git repository"},
		{gitstore.ErrNotFound, Usage, gitstore.ErrNotFound.Error()},
		{gitstore.ErrExists, Refused, gitstore.ErrExists.Error()},
		{gitstore.ErrContention, Refused, "state update lost"},
		{&hooks.InputError{Err: errors.New("bad line")}, Usage, "bad line"},
		{&hooks.Refusal{What: "commit refused", Why: "2 staged paths"}, Failed, "commit refused (2 staged paths)"},
		{errors.New("plain"), Failed, "plain"},
	} {
		if got := Classify(c.err); got.Kind != c.kind || got.Error()[:len(c.what)] != c.what {
			t.Errorf("Classify(%v) = %d %q, want %d %q", c.err, got.Kind, got.Error(), c.kind, c.what)
		}
	}
}

func TestOpenStoreNotRepo(t *testing.T) {
	_, err := OpenStore(context.Background(), t.TempDir())
	wantKind(t, err, Usage, "not in a git repository")
	if !errors.Is(err, gitstore.ErrNotRepo) {
		t.Fatalf("%v does not wrap ErrNotRepo", err)
	}
	wantKind(t, CheckWorkTree(&gitstore.Store{GitDir: "/r.git"}, "rush"), Usage, "rush needs a work tree")
	if err := CheckWorkTree(&gitstore.Store{Top: "/r"}, "rush"); err != nil {
		t.Fatal(err)
	}
}
