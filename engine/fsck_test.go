package engine

import (
	"errors"
	"testing"

	"github.com/git-zerg/git-zerg/gates"
)

// FsckVerdict fails with the number of problems and the features that
// have them, and passes clean reports.
func TestFsckVerdict(t *testing.T) {
	if err := FsckVerdict([]*FsckReport{{Feature: "a"}}); err != nil {
		t.Fatalf("clean: %v", err)
	}
	rs := []*FsckReport{{Feature: "a", Problems: make([]gates.Problem, 2)}, {Feature: "b"}, {Feature: "c", Problems: make([]gates.Problem, 1)}}
	var ee *Error
	if err := FsckVerdict(rs); !errors.As(err, &ee) || ee.Kind != Failed || ee.What != "fsck found 3 problems" || ee.Why != "in feature a, c" {
		t.Fatalf("problems: %#v", err)
	}
}
