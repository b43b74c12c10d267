package worktree

import (
	"slices"
	"testing"
)

func TestOverlap(t *testing.T) {
	touched := []string{"a.txt", "src/b.go", "docs/c.md", "dir"}
	for _, c := range []struct {
		dirty []string
		want  []string
	}{
		{nil, nil},
		{[]string{"other.txt"}, nil},
		{[]string{"a.txt"}, []string{"a.txt"}},
		// An untracked directory, as git status lists it, holds the path.
		{[]string{"src/"}, []string{"src/b.go"}},
		// A dirty file inside what the merge turns into a file.
		{[]string{"dir/x"}, []string{"dir"}},
		{[]string{"docs"}, []string{"docs/c.md"}},
		// A prefix of a name is not its directory.
		{[]string{"a.tx", "sr"}, nil},
		{[]string{"docs/c.md", "a.txt"}, []string{"a.txt", "docs/c.md"}},
	} {
		if got := overlap(touched, c.dirty); !slices.Equal(got, c.want) {
			t.Errorf("overlap(%q) = %q, want %q", c.dirty, got, c.want)
		}
	}
}
