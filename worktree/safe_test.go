package worktree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// emptyDir fails the test unless dir holds nothing.
func emptyDir(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("%s written outside the worktree", filepath.Join(dir, e.Name()))
	}
}

// A worker commits `cache -> <outside>` where the main work tree has the
// ignored directory cache/ that .worktreeinclude names: making the next
// worktree must not copy cache/secret.env through the link.
func TestIncludeRefusesCommittedSymlink(t *testing.T) {
	top, m := newRepo(t)
	ctx := context.Background()
	outside := t.TempDir()
	// "cache/" ignores only a directory, so the worker's symlink named
	// cache is not ignored and commits like any file.
	write(t, top, ".gitignore", ".env\ncache/\n")
	git(t, top, "add", ".gitignore")
	git(t, top, "commit", "-q", "-m", "ignore cache")
	write(t, top, ".worktreeinclude", ".env\ncache/\n")
	write(t, top, ".env", "TOKEN=1\n")
	write(t, top, "cache/secret.env", "SECRET=1\n")
	write(t, top, "cache/deep/more.env", "MORE=1\n")

	staging, err := m.EnsureStaging(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	w, err := m.Add(ctx, 1, staging)
	if err != nil {
		t.Fatal(err)
	}
	// The worker drops the copied directory and puts its link there.
	if err := os.RemoveAll(filepath.Join(w.Dir, "cache")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(w.Dir, "cache")); err != nil {
		t.Fatal(err)
	}
	git(t, w.Dir, "add", "cache")
	git(t, w.Dir, "commit", "-q", "-m", "cache")
	evil := git(t, w.Dir, "rev-parse", "HEAD")

	w2, err := m.Add(ctx, 2, evil)
	emptyDir(t, outside)
	var ie *IncludeError
	if !errors.As(err, &ie) || !errors.Is(err, errUnsafePath) || w2 == nil {
		t.Fatalf("Add over a committed symlink: %v (worker %v), want an *IncludeError with the worker", err, w2)
	}
	if len(ie.Skipped) != 2 || !strings.Contains(err.Error(), "2 files not copied") ||
		!strings.Contains(err.Error(), "cache is a symbolic link") {
		t.Errorf("error %q, skipped %v", err, ie.Skipped)
	}
	if b, err := os.ReadFile(filepath.Join(w2.Dir, ".env")); err != nil || string(b) != "TOKEN=1\n" {
		t.Errorf(".env not copied beside the refused files: %q %v", b, err)
	}
	if l, err := os.Readlink(filepath.Join(w2.Dir, "cache")); err != nil || l != outside {
		t.Errorf("the committed link changed: %q %v", l, err)
	}

	// Reusing the worktree at that commit refuses again, still writing nothing.
	if _, err := m.Add(ctx, 2, evil); !errors.Is(err, errUnsafePath) {
		t.Errorf("reuse: %v", err)
	}
	emptyDir(t, outside)

	// The same link one level down is refused too.
	if err := os.Remove(filepath.Join(w.Dir, "cache")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(w.Dir, "cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(w.Dir, "cache", "deep")); err != nil {
		t.Fatal(err)
	}
	git(t, w.Dir, "add", "-A", "-f", "cache")
	git(t, w.Dir, "commit", "-q", "-m", "deep")
	w3, err := m.Add(ctx, 3, git(t, w.Dir, "rev-parse", "HEAD"))
	if !errors.As(err, &ie) || len(ie.Skipped) != 1 || ie.Skipped[0].Link != "cache/deep" {
		t.Fatalf("link one level down: %v", err)
	}
	emptyDir(t, outside)
	if b, err := os.ReadFile(filepath.Join(w3.Dir, "cache", "secret.env")); err != nil || string(b) != "SECRET=1\n" {
		t.Errorf("cache/secret.env, beside the link, not copied: %q %v", b, err)
	}
}

func TestWriteFile(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := WriteFile(root, "a/b/c.txt", []byte("one"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(root, "a/b/c.txt", []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "a", "b", "c.txt")
	if b, err := os.ReadFile(p); err != nil || string(b) != "two" {
		t.Errorf("content %q %v", b, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	if ents, _ := os.ReadDir(filepath.Dir(p)); len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}

	for _, link := range []struct{ at, to string }{
		{"out", outside},
		{"a/up", "../.."},
		{"a/in", "b"}, // inside, but still a link
		{"file.txt", filepath.Join(outside, "f.txt")}, // the last component
	} {
		if err := os.Symlink(link.to, filepath.Join(root, filepath.FromSlash(link.at))); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"out/x", "out/new/x", "a/up/x", "a/in/c.txt", "file.txt"} {
		err := WriteFile(root, name, []byte("evil"), 0o644)
		var ue *UnsafePathError
		if !errors.As(err, &ue) || !errors.Is(err, errUnsafePath) {
			t.Errorf("WriteFile(%s) = %v, want ErrUnsafePath", name, err)
		}
	}
	emptyDir(t, outside)
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Errorf("written through an inside link: %q", b)
	}
	for _, name := range []string{"", "/etc/x", "../x", "a/../x", "a//x", "./x"} {
		if err := WriteFile(root, name, nil, 0o644); err == nil {
			t.Errorf("WriteFile(%q) accepted", name)
		}
	}
}

// CheckWrite refuses, without writing, exactly what WriteFile would refuse
// for a link, and names the link.
func TestCheckWrite(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, link := range []struct{ at, to string }{{"out", outside}, {"a/in", "b"}, {"a/f", filepath.Join(outside, "f")}} {
		if err := os.Symlink(link.to, filepath.Join(root, filepath.FromSlash(link.at))); err != nil {
			t.Fatal(err)
		}
	}
	for name, link := range map[string]string{"out/x": "out", "out/new/x": "out", "a/in/x": "a/in", "a/f": "a/f",
		"a/b/x": "", "a/new/deeper/x": "", "new": ""} {
		err := CheckWrite(root, name)
		var ue *UnsafePathError
		switch {
		case link == "" && err != nil:
			t.Errorf("CheckWrite(%s) = %v, want nil", name, err)
		case link != "" && (!errors.As(err, &ue) || ue.Link != link || ue.Path != name):
			t.Errorf("CheckWrite(%s) = %v, want the link %s", name, err, link)
		}
	}
	emptyDir(t, outside)
	if err := CheckWrite(root, "../x"); err == nil {
		t.Error("CheckWrite(../x) accepted")
	}
}
