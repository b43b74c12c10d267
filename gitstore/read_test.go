package gitstore

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Objects are read wherever git keeps them: loose or packed in an
// alternate object directory, and in a pack whose index is of the first
// version (which this package leaves to git).
func TestObjectsEverywhereGitKeepsThem(t *testing.T) {
	upstream := newRepo(t)
	os.WriteFile(filepath.Join(upstream, "f"), []byte("packed upstream\n"), 0o644)
	git(t, upstream, "add", "f")
	git(t, upstream, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "packed")
	git(t, upstream, "repack", "-a", "-d", "-q")
	packedBlob := git(t, upstream, "rev-parse", "HEAD:f")
	loose := strings.TrimSpace(gitIn(t, upstream, "loose upstream\n", "hash-object", "-w", "--stdin"))

	dir := t.TempDir()
	git(t, dir, "clone", "-q", "--shared", upstream, ".")
	s := openStore(t, dir)
	for blob, want := range map[string]string{packedBlob: "packed upstream\n", loose: "loose upstream\n"} {
		b, err := s.ReadBlob(plumbing.NewHash(blob))
		if err != nil || string(b) != want {
			t.Errorf("blob %s of the alternate: %q, %v", blob, b, err)
		}
		if !s.HasObject(plumbing.NewHash(blob)) {
			t.Errorf("HasObject(%s) = false", blob)
		}
	}

	// A pack with a version 1 index: git reads it, and so must we.
	old := newRepo(t)
	os.WriteFile(filepath.Join(old, "f"), []byte("in an old pack\n"), 0o644)
	git(t, old, "add", "f")
	git(t, old, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "old")
	git(t, old, "-c", "pack.indexVersion=1", "repack", "-a", "-d", "-q")
	idx, _ := filepath.Glob(filepath.Join(old, ".git", "objects", "pack", "*.idx"))
	if len(idx) != 1 {
		t.Fatalf("packs: %v", idx)
	}
	if b, _ := os.ReadFile(idx[0]); len(b) > 4 && string(b[:4]) == "\xfftOc" {
		t.Fatal("git wrote a version 2 index")
	}
	s = openStore(t, old)
	tip, err := s.ReadRef("refs/heads/main")
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.ReadCommit(tip)
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.EntryAt(c.TreeHash, "f")
	if err != nil || e.Mode != filemode.Regular {
		t.Fatalf("EntryAt(f) = %v, %v", e, err)
	}
	if b, err := s.ReadBlob(e.Hash); err != nil || string(b) != "in an old pack\n" {
		t.Errorf("blob in an old pack: %q, %v", b, err)
	}
	missing := plumbing.NewHash("0123456789012345678901234567890123456789")
	if s.HasObject(missing) {
		t.Error("a missing object is found")
	}
	if _, err := s.ReadBlob(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing object: %v, want not exist", err)
	}

	// HEAD is read, not followed: callers want a commit.
	if _, err := s.ReadRef("HEAD"); err == nil || !strings.Contains(err.Error(), "symbolic") {
		t.Errorf("ReadRef(HEAD) = %v, want refused as symbolic", err)
	}
	git(t, old, "checkout", "-q", "--detach")
	if h, err := s.ReadRef("HEAD"); err != nil || h != tip {
		t.Errorf("detached ReadRef(HEAD) = %v, %v; want %s", h, err, tip)
	}
	if h, err := s.ReadRef("ORIG_HEAD"); err != nil || !h.IsZero() {
		t.Errorf("ReadRef(ORIG_HEAD) = %v, %v; want none", h, err)
	}
	if _, err := s.ReadRef("../config"); err == nil {
		t.Error("a path outside the git dir is read as a ref")
	}
}

func gitIn(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}
