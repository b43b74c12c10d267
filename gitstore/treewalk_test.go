package gitstore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-zerg/git-zerg/gitobj"
)

// DiffTrees lists what `git diff-tree -r --name-only --no-renames` lists,
// over random edits that add, change, remove, chmod, and turn files into
// directories and back; EntryAt and WalkFiles find what `git ls-tree -r`
// lists.
func TestTreeWalksAgreeWithGit(t *testing.T) {
	dir := newRepo(t)
	s := openStore(t, dir)
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "a-b", "a.b", "b/c", "b/d/e", "c", "d/x", "d/y/z", "e f/g"}
	var trees []string
	for round := 0; round < 25; round++ {
		for i := 0; i < 3; i++ {
			name := names[rng.IntN(len(names))]
			if round%5 == 4 {
				// A file where a directory was, or the other way round.
				name = strings.Split(name, "/")[0]
				if rng.IntN(2) == 0 {
					name += "/inner"
				}
			}
			p := filepath.Join(dir, filepath.FromSlash(name))
			switch rng.IntN(4) {
			case 0:
				os.RemoveAll(p)
			case 1:
				os.Chmod(p, 0o755)
			default:
				os.RemoveAll(p)
				for d := filepath.Dir(p); d != dir; d = filepath.Dir(d) {
					if fi, err := os.Stat(d); err == nil && !fi.IsDir() {
						os.Remove(d)
					}
				}
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, []byte(fmt.Sprint(round, i)), 0o644)
			}
		}
		git(t, dir, "add", "-A")
		trees = append(trees, git(t, dir, "write-tree"))
	}
	for i := 1; i < len(trees); i++ {
		for _, j := range []int{i - 1, 0} {
			a, b := trees[j], trees[i]
			got, err := s.DiffTrees(plumbing.NewHash(a), plumbing.NewHash(b))
			if err != nil {
				t.Fatal(err)
			}
			var paths, sides []string
			for _, c := range got {
				paths = append(paths, c.Path)
				sides = append(sides, fmt.Sprintf("%s %s %s", c.From, c.To, c.Path))
			}
			sortStrings(paths)
			sortStrings(sides)
			want := git(t, dir, "diff-tree", "-r", "--name-only", "--no-renames", a, b)
			if strings.Join(paths, "\n") != want {
				t.Errorf("DiffTrees(%d, %d) = %q\ngit says %q", j, i, paths, want)
			}
			// Each side's object, as `git diff-tree -r` gives it (zeros
			// where the path is absent).
			var wantSides []string
			for _, l := range splitLines(git(t, dir, "diff-tree", "-r", "--no-renames", a, b)) {
				meta, path, _ := strings.Cut(l, "\t")
				f := strings.Fields(meta)
				wantSides = append(wantSides, f[2]+" "+f[3]+" "+path)
			}
			sortStrings(wantSides)
			if strings.Join(sides, "\n") != strings.Join(wantSides, "\n") {
				t.Errorf("DiffTrees(%d, %d) sides:\n%s\ngit says\n%s", j, i, strings.Join(sides, "\n"), strings.Join(wantSides, "\n"))
			}
		}
		var walked []string
		if err := s.WalkFiles(plumbing.NewHash(trees[i]), func(p string, e gitobj.TreeEntry) error {
			walked = append(walked, fmt.Sprintf("%06o %s\t%s", uint32(e.Mode), e.Hash, p))
			got, err := s.EntryAt(plumbing.NewHash(trees[i]), p)
			if err != nil || got.Hash != e.Hash {
				t.Errorf("EntryAt(%s) = %v, %v; the walk saw %s", p, got, err, e.Hash)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, l := range strings.Split(git(t, dir, "ls-tree", "-r", trees[i]), "\n") {
			if l != "" {
				mode, rest, _ := strings.Cut(l, " ")
				_, rest, _ = strings.Cut(rest, " ")
				want = append(want, mode+" "+rest)
			}
		}
		if strings.Join(walked, "\n") != strings.Join(want, "\n") {
			t.Errorf("WalkFiles(%d):\n%s\ngit ls-tree -r:\n%s", i, strings.Join(walked, "\n"), strings.Join(want, "\n"))
		}
	}
	root := plumbing.NewHash(trees[len(trees)-1])
	for _, p := range []string{"nothing", "a/b/c/d", "zz/top"} {
		if _, err := s.EntryAt(root, p); !errors.Is(err, gitobj.ErrNotFound) {
			t.Errorf("EntryAt(%q) = %v, want ErrNotFound", p, err)
		}
	}
	if _, err := s.EntryAt(root, "a-b/inner"); !errors.Is(err, gitobj.ErrNotFound) {
		t.Errorf("EntryAt below a file = %v, want ErrNotFound", err)
	}
}

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
