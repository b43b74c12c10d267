package fsck

import (
	"errors"
	"testing"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gates"
)

// FsckVerdict fails with the number of problems and the features that
// have them, and passes clean reports.
func TestFsckVerdict(t *testing.T) {
	if err := Verdict([]*Report{{Feature: "a"}}); err != nil {
		t.Fatalf("clean: %v", err)
	}
	rs := []*Report{{Feature: "a", Problems: make([]gates.Problem, 2)}, {Feature: "b"}, {Feature: "c", Problems: make([]gates.Problem, 1)}}
	var ee *engine.Error
	if err := Verdict(rs); !errors.As(err, &ee) || ee.Kind != engine.Failed || ee.What != "fsck found 3 problems" || ee.Why != "in feature a, c" {
		t.Fatalf("problems: %#v", err)
	}
}
