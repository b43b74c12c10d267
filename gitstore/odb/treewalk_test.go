package odb

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitobj"
)

// DiffTrees lists what `git diff-tree -r --name-only --no-renames` lists,
// over random edits that add, change, remove, chmod, and turn files into
// directories and back; EntryAt and WalkFiles find what `git ls-tree -r`
// lists.
func TestTreeWalksAgreeWithGit(t *testing.T) {
	dir := newRepo(t)
	db := openDB(t, dir)
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
			got, err := db.DiffTrees(plumbing.NewHash(a), plumbing.NewHash(b))
			if err != nil {
				t.Fatal(err)
			}
			var paths, sides []string
			for _, c := range got {
				paths = append(paths, c.Path)
				sides = append(sides, fmt.Sprintf("%s %s %s", c.From, c.To, c.Path))
			}
			sort.Strings(paths)
			sort.Strings(sides)
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
			sort.Strings(wantSides)
			if strings.Join(sides, "\n") != strings.Join(wantSides, "\n") {
				t.Errorf("DiffTrees(%d, %d) sides:\n%s\ngit says\n%s", j, i, strings.Join(sides, "\n"), strings.Join(wantSides, "\n"))
			}
		}
		var walked []string
		if err := db.WalkFiles(plumbing.NewHash(trees[i]), func(p string, e gitobj.TreeEntry) error {
			walked = append(walked, fmt.Sprintf("%06o %s\t%s", uint32(e.Mode), e.Hash, p))
			got, err := db.EntryAt(plumbing.NewHash(trees[i]), p)
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
		if _, err := db.EntryAt(root, p); !errors.Is(err, gitobj.ErrNotFound) {
			t.Errorf("EntryAt(%q) = %v, want ErrNotFound", p, err)
		}
	}
	if _, err := db.EntryAt(root, "a-b/inner"); !errors.Is(err, gitobj.ErrNotFound) {
		t.Errorf("EntryAt below a file = %v, want ErrNotFound", err)
	}
}
