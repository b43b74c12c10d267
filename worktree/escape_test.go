package worktree

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindEscape(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	outside := filepath.Join(base, "elsewhere")
	for _, d := range []string{root, outside, filepath.Join(root, "src", "pkg"), filepath.Join(root, ".git", "hooks")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "src", "file.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"link":          outside,
		"rel":           "../elsewhere",
		"src/up":        "../..",
		"src/inside":    "pkg",
		"src/toinside":  "../link", // inside, to a link that leaves
		"dangling":      filepath.Join(outside, "not", "yet"),
		"chain":         "dangling",
		"passwd":        filepath.Join(outside, "passwd"),
		"hooks":         ".git/hooks",
		"loop":          "loop",
		"src/pkg/local": "../file.go",
	}
	for at, to := range links {
		if err := os.Symlink(to, filepath.Join(root, filepath.FromSlash(at))); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		path, link string // link "" means no escape
	}{
		{"link/x", "link"},
		{"link", "link"},
		{"link/", "link"},
		{"link/**/*.go", "link"},
		{"rel/a/b", "rel"},
		{"src/up/x", "src/up"},
		{"src/toinside/x", "src/toinside"},
		{"dangling", "dangling"},
		{"chain/x", "chain"},
		{"passwd", "passwd"},
		{"hooks/pre-commit", "hooks"},
		{"src/inside/x.go", ""},
		{"src/pkg/local", ""},
		{"src/file.go/x", ""},
		{"src/new/deeper/x", ""},
		{"src/*.go", ""},
		{"**", ""},
		{"*.go", ""},
		{"missing", ""},
	} {
		e, err := FindEscape(root, tc.path)
		if err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		got := ""
		if e != nil {
			got = e.Link
			if !strings.Contains(e.Error(), "outside the repository") {
				t.Errorf("%s: message %q", tc.path, e)
			}
		}
		if got != tc.link {
			t.Errorf("FindEscape(%s) = %q (%v), want %q", tc.path, got, e, tc.link)
		}
		if esc, _ := escapesRepo(root, tc.path); esc != (tc.link != "") {
			t.Errorf("EscapesRepo(%s) = %v", tc.path, esc)
		}
	}
	if _, err := FindEscape(root, "loop/x"); err == nil {
		t.Error("a link loop gives no error")
	}
	if _, err := FindEscape(root, "../x"); err == nil {
		t.Error(`"../x" accepted`)
	}
	// The root itself may be reached through a link.
	via := filepath.Join(base, "via")
	if err := os.Symlink(root, via); err != nil {
		t.Fatal(err)
	}
	if e, err := FindEscape(via, "src/inside/x"); e != nil || err != nil {
		t.Errorf("root through a link: %v %v", e, err)
	}
	if e, err := FindEscape(via, "link/x"); e == nil || err != nil {
		t.Errorf("root through a link: escape missed: %v", err)
	}
}

func TestFindOwnedEscape(t *testing.T) {
	top, m := newRepo(t)
	ctx := context.Background()
	outside := t.TempDir()
	write(t, top, "src/a.go", "package a\n")
	if err := os.Symlink(outside, filepath.Join(top, "src", "cache")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.go", filepath.Join(top, "src", "b.go")); err != nil {
		t.Fatal(err)
	}
	git(t, top, "add", "src")
	git(t, top, "commit", "-q", "-m", "src")
	// Made by a setup command, not committed: below a directory owner it
	// is the user's own business.
	if err := os.Symlink(outside, filepath.Join(top, "src", "node_modules")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		owned []string
		link  string
	}{
		{[]string{"a.txt", "src/"}, "src/cache"},
		{[]string{"src/**/*.go"}, "src/cache"},
		{[]string{"**"}, "src/cache"},
		{[]string{"src/node_modules/x"}, "src/node_modules"},
		{[]string{"src/a.go", "src/b.go", "docs/", "*.txt"}, ""},
		{[]string{"sr*/cache/x"}, "src/cache"},
		{[]string{"s*/*"}, "src/cache"},
		{[]string{"sr*/x", "src/*.go", "src/c"}, ""},
	} {
		e, err := FindOwnedEscape(ctx, m.Git, top, tc.owned)
		if err != nil {
			t.Fatalf("%v: %v", tc.owned, err)
		}
		got := ""
		if e != nil {
			got = e.Link
		}
		if got != tc.link {
			t.Errorf("FindOwnedEscape(%v) = %q (%v), want %q", tc.owned, got, e, tc.link)
		}
	}
}
