package worktree

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// A feature with several hard dependencies starts from a merge of their
// staging tips, made without the user's checkout, index or HEAD.
func TestMergeCommits(t *testing.T) {
	top, m := newRepo(t)
	ctx := context.Background()
	base := git(t, top, "rev-parse", "HEAD")
	git(t, top, "checkout", "-q", "-b", "a")
	a := commitFile(t, top, "a.txt", "a\n")
	git(t, top, "checkout", "-q", "-b", "b", base)
	b := commitFile(t, top, "b.txt", "b\n")
	git(t, top, "checkout", "-q", "main")
	head := git(t, top, "rev-parse", "HEAD")
	status := git(t, top, "status", "--porcelain")

	one, err := m.MergeCommits(ctx, []string{"A"}, []string{a}, "start")
	if err != nil || one != a {
		t.Fatalf("one commit: got %s, %v; want %s", one, err, a)
	}
	got, err := m.MergeCommits(ctx, []string{"A", "B"}, []string{a, b}, "start C from A, B")
	if err != nil {
		t.Fatal(err)
	}
	if files := git(t, top, "ls-tree", "--name-only", got); !containsLine(files, "a.txt") || !containsLine(files, "b.txt") {
		t.Fatalf("merge lacks a dependency's files:\n%s", files)
	}
	if parents := git(t, top, "log", "-1", "--format=%P", got); parents != a+" "+b {
		t.Errorf("parents %q, want %s %s", parents, a, b)
	}
	if git(t, top, "rev-parse", "HEAD") != head || git(t, top, "status", "--porcelain") != status {
		t.Error("the user's checkout moved")
	}
	// A dependency the other already holds adds nothing.
	if same, err := m.MergeCommits(ctx, []string{"B", "base"}, []string{b, base}, "x"); err != nil || same != b {
		t.Errorf("ancestor: got %s, %v; want %s", same, err, b)
	}

	git(t, top, "checkout", "-q", "-b", "c", base)
	c := commitFile(t, top, "a.txt", "other a\n")
	git(t, top, "checkout", "-q", "main")
	_, err = m.MergeCommits(ctx, []string{"A", "C"}, []string{a, c}, "x")
	var conflict *Conflict
	if !errors.As(err, &conflict) || conflict.Task != "C" || len(conflict.Files) != 1 || conflict.Files[0] != "a.txt" {
		t.Fatalf("conflict: got %v", err)
	}
}

func containsLine(s, line string) bool {
	return slices.Contains(strings.Split(s, "\n"), line)
}
