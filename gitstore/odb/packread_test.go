package odb

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestDirectPackReadAgreesWithGit reads every object of packs git made
// with deltas by offset (git repack) and by name (git pack-objects without
// --delta-base-offset), each through the index in place, and compares it
// with what git cat-file says.
func TestDirectPackReadAgreesWithGit(t *testing.T) {
	for _, mode := range []string{"ofs-delta", "ref-delta"} {
		t.Run(mode, func(t *testing.T) {
			dir := newRepo(t)
			// Similar files over several commits: deltas for the packer.
			var text strings.Builder
			for i := 0; i < 12; i++ {
				for j := 0; j < 40; j++ {
					fmt.Fprintf(&text, "line %d of version %d\n", j, i/3)
				}
				fmt.Fprintf(&text, "change %d\n", i)
				os.WriteFile(filepath.Join(dir, "f.txt"), []byte(text.String()), 0o644)
				git(t, dir, "add", "f.txt")
				git(t, dir, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", fmt.Sprint("c", i))
			}
			if mode == "ofs-delta" {
				git(t, dir, "repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=50")
			} else {
				cmd := fmt.Sprintf("git rev-list --objects --all | git pack-objects -q --window=50 --depth=50 %s && git prune-packed",
					filepath.Join(dir, ".git", "objects", "pack", "pack"))
				git(t, dir, "-c", "alias.x=!"+cmd, "x")
			}
			objs := strings.Fields(git(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"))
			verify := git(t, dir, "verify-pack", "-v", packIdx(t, dir))
			if !strings.Contains(verify, "chain length") {
				t.Fatalf("git made no deltas: the test shows nothing\n%s", verify)
			}
			db := openDB(t, dir)
			for _, o := range objs {
				h := plumbing.NewHash(o)
				db.packMu.Lock()
				got, err := db.readDirect(h, 0)
				db.packMu.Unlock()
				if err != nil {
					t.Fatalf("%s: %v", o, err)
				}
				typ := git(t, dir, "cat-file", "-t", o)
				if typ != got.typ.String() {
					t.Errorf("%s: type %s, git says %s", o, got.typ, typ)
				}
				want, err := exec.Command("git", "-C", dir, "cat-file", typ, o).Output()
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.data, want) {
					t.Errorf("%s: content differs from git's", o)
				}
				if !db.Has(h) {
					t.Errorf("%s: Has = false", o)
				}
			}
			var missing plumbing.Hash
			copy(missing[:], bytes.Repeat([]byte{0xab}, 20))
			db.packMu.Lock()
			_, err := db.readDirect(missing, 0)
			db.packMu.Unlock()
			if err != errNotInPacks {
				t.Errorf("a missing object: %v, want errNotInPacks", err)
			}
		})
	}
}

func packIdx(t *testing.T, dir string) string {
	t.Helper()
	idx, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
	if len(idx) != 1 {
		t.Fatalf("packs: %v", idx)
	}
	return idx[0]
}
