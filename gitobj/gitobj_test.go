package gitobj

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

func git(t *testing.T, dir string, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=A U Thor", "GIT_AUTHOR_EMAIL=author@example.com", "GIT_AUTHOR_DATE=1700000000 +0530",
		"GIT_COMMITTER_NAME=C O Mitter", "GIT_COMMITTER_EMAIL=committer@example.com", "GIT_COMMITTER_DATE=1700000100 -0800")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

func repo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	git(t, dir, "", "init", "-q", "-b", "main")
	return dir
}

// Trees as git writes them decode entry for entry, encode back to the same
// bytes, and every name is found by Entry, whichever side of a directory
// of a similar name it sorts on.
func TestTreeAgreesWithGit(t *testing.T) {
	dir := repo(t)
	names := []string{"a", "a-b", "a.b", "a0", "b/c", "a/x", "a b/y", "z", "x.sh", "link", "deep/er/still/f"}
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(n+"\n"), 0o644); err != nil {
			// "a" is both a file and a directory ("a/x"): only in a tree
			// built by hand, below.
			continue
		}
	}
	os.Chmod(filepath.Join(dir, "x.sh"), 0o755)
	os.Remove(filepath.Join(dir, "link"))
	os.Symlink("z", filepath.Join(dir, "link"))
	git(t, dir, "", "add", "-A")
	root := strings.TrimSpace(git(t, dir, "", "write-tree"))
	blob := strings.TrimSpace(git(t, dir, "z\n", "hash-object", "-w", "--stdin"))
	sub := strings.TrimSpace(git(t, dir, "", "rev-parse", root+":b"))
	// A file "a" and a directory "a" in one tree: git's order puts "a-b",
	// "a.b" between them ('-' and '.' sort before '/').
	mk := fmt.Sprintf("100644 blob %s\ta\n040000 tree %s\ta\n100644 blob %s\ta-b\n100644 blob %s\ta.b\n", blob, sub, blob, blob)
	both := strings.TrimSpace(git(t, dir, mk, "mktree", "--missing"))

	for _, tree := range []string{root, sub, both} {
		raw := []byte(git(t, dir, "", "cat-file", "tree", tree))
		h := plumbing.NewHash(tree)
		got, err := DecodeTree(h, raw)
		if err != nil {
			t.Fatal(err)
		}
		if enc := EncodeTree(got.Entries); !bytes.Equal(enc, raw) {
			t.Errorf("tree %s: encoded again differs:\n%q\n%q", tree, enc, raw)
		}
		// Sort puts the entries back in git's order, however shuffled.
		shuffled := slices.Clone(got.Entries)
		rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		Sort(shuffled)
		if enc := EncodeTree(shuffled); !bytes.Equal(enc, raw) {
			t.Errorf("tree %s: sorted again differs:\n%q\n%q", tree, enc, raw)
		}
		if ph := plumbing.ComputeHash(plumbing.TreeObject, EncodeTree(got.Entries)); ph != h {
			t.Errorf("tree %s hashes to %s", tree, ph)
		}
		var want []string
		for _, l := range strings.Split(strings.TrimSpace(git(t, dir, "", "ls-tree", tree)), "\n") {
			want = append(want, l)
		}
		if len(got.Entries) != len(want) {
			t.Fatalf("tree %s: %d entries, git lists %d", tree, len(got.Entries), len(want))
		}
		for i, e := range got.Entries {
			kind := "blob"
			switch e.Mode {
			case filemode.Dir:
				kind = "tree"
			case filemode.Submodule:
				kind = "commit"
			}
			line := fmt.Sprintf("%06o %s %s\t%s", uint32(e.Mode), kind, e.Hash, e.Name)
			if line != want[i] {
				t.Errorf("entry %d: %q, git: %q", i, line, want[i])
			}
			f, ok := got.Entry(e.Name)
			if !ok {
				t.Errorf("Entry(%q) not found in %s", e.Name, tree)
				continue
			}
			// In the tree with a file and a directory both named "a",
			// Entry gives the file (git never writes such a tree).
			if f.Name != e.Name {
				t.Errorf("Entry(%q) = %q", e.Name, f.Name)
			}
		}
		for _, missing := range []string{"", "a/", "b/c", "zz", "A"} {
			if e, ok := got.Entry(missing); ok {
				t.Errorf("Entry(%q) found %v in %s", missing, e, tree)
			}
		}
	}
}

// Commits git writes decode to what git's own log says of them; those
// without headers this package drops encode back to the same bytes.
func TestCommitAgreesWithGit(t *testing.T) {
	dir := repo(t)
	git(t, dir, "", "commit", "-q", "--allow-empty", "-m", "first\n\nbody line")
	git(t, dir, "", "commit", "-q", "--allow-empty", "-m", "second")
	tree := strings.TrimSpace(git(t, dir, "", "rev-parse", "HEAD^{tree}"))
	merge := strings.TrimSpace(git(t, dir, "merge of two\n", "commit-tree", tree, "-p", "HEAD", "-p", "HEAD^"))
	// A signed commit's gpgsig header spans lines, each continued with a
	// space; and a commit in another encoding says so in a header.
	raw := git(t, dir, "", "cat-file", "commit", "HEAD")
	signed := strings.Replace(raw, "\n\n", "\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\nencoding ISO-8859-1\n\n", 1)
	signedHash := strings.TrimSpace(git(t, dir, signed, "hash-object", "-t", "commit", "-w", "--stdin"))

	for _, rev := range []string{"HEAD", "HEAD^", merge, signedHash} {
		h := plumbing.NewHash(strings.TrimSpace(git(t, dir, "", "rev-parse", rev)))
		raw := []byte(git(t, dir, "", "cat-file", "commit", h.String()))
		c, err := DecodeCommit(h, raw)
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Split(git(t, dir, "", "log", "-1", "--format=%T%n%P%n%an%n%ae%n%at %ai%n%cn%n%ce%n%ct %ci", h.String()), "\n")
		var parents []string
		for _, p := range c.ParentHashes {
			parents = append(parents, p.String())
		}
		got := []string{c.TreeHash.String(), strings.Join(parents, " "),
			c.Author.Name, c.Author.Email, fmt.Sprint(c.Author.When.Unix(), " ", c.Author.When.Format("2006-01-02 15:04:05 -0700")),
			c.Committer.Name, c.Committer.Email, fmt.Sprint(c.Committer.When.Unix(), " ", c.Committer.When.Format("2006-01-02 15:04:05 -0700"))}
		for i := range got {
			if got[i] != f[i] {
				t.Errorf("%s: field %d = %q, git says %q", rev, i, got[i], f[i])
			}
		}
		_, wantMsg, _ := strings.Cut(string(raw), "\n\n")
		if c.Message != wantMsg {
			t.Errorf("%s: message %q, want %q", rev, c.Message, wantMsg)
		}
		if h.String() != signedHash {
			if enc := c.Encode(); !bytes.Equal(enc, raw) {
				t.Errorf("%s: encoded again:\n%s\nwant:\n%s", rev, enc, raw)
			}
		}
	}

	// What Encode writes, git reads as written.
	c := &Commit{TreeHash: plumbing.NewHash(tree), ParentHashes: []plumbing.Hash{plumbing.NewHash(merge)},
		Author:    Signature{Name: "Ünï Cöde", Email: "u@example.com", When: time.Unix(1700000200, 0).In(time.FixedZone("", -(3*3600 + 30*60)))},
		Committer: Signature{Name: "git-zerg", Email: "git-zerg@host", When: time.Unix(1700000300, 0).UTC()},
		Message:   "subject\n\nZerg-Op: claim\n"}
	written := strings.TrimSpace(git(t, dir, string(c.Encode()), "hash-object", "-t", "commit", "-w", "--stdin"))
	if want := plumbing.ComputeHash(plumbing.CommitObject, c.Encode()).String(); written != want {
		t.Errorf("git stored %s, ComputeHash says %s", written, want)
	}
	git(t, dir, "", "fsck", "--strict", "--no-dangling")
	if got := git(t, dir, "", "log", "-1", "--format=%an|%ae|%ai|%cn|%ci|%B", written); got != "Ünï Cöde|u@example.com|2023-11-14 18:46:40 -0330|git-zerg|2023-11-14 22:18:20 +0000|subject\n\nZerg-Op: claim\n\n" {
		t.Errorf("git log says %q", got)
	}
}

// Damaged objects are refused, never a panic or a partly read object.
func TestDecodeDamaged(t *testing.T) {
	h := plumbing.NewHash("1111111111111111111111111111111111111111")
	e := EncodeTree([]TreeEntry{{Name: "f", Mode: filemode.Regular, Hash: h}, {Name: "g", Mode: filemode.Dir, Hash: h}})
	for n := 1; n < len(e); n++ {
		if n == 29 {
			continue // the cut between the two entries is a whole tree
		}
		if _, err := DecodeTree(h, e[:n]); err == nil {
			t.Errorf("tree cut at %d of %d: read", n, len(e))
		}
	}
	for _, bad := range []string{"9 f\x00", "100644f\x00" + string(h[:]), " f\x00" + string(h[:]), "100644 f" + string(h[:])} {
		if _, err := DecodeTree(h, []byte(bad)); err == nil {
			t.Errorf("tree %q read", bad)
		}
	}
	for _, bad := range []string{"", "parent " + h.String() + "\n\nmsg", "tree xyz\n\n", "tree " + h.String() + "\nparent 12\n\n"} {
		if _, err := DecodeCommit(h, []byte(bad)); err == nil {
			t.Errorf("commit %q read", bad)
		}
	}
}

func FuzzDecode(f *testing.F) {
	h := plumbing.NewHash("1111111111111111111111111111111111111111")
	f.Add(EncodeTree([]TreeEntry{{Name: "f", Mode: filemode.Regular, Hash: h}, {Name: "g", Mode: filemode.Dir, Hash: h}}))
	f.Add((&Commit{TreeHash: h, ParentHashes: []plumbing.Hash{h}, Message: "m\n"}).Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		if tr, err := DecodeTree(h, b); err == nil {
			again, err := DecodeTree(h, EncodeTree(tr.Entries))
			if err != nil || len(again.Entries) != len(tr.Entries) {
				t.Fatalf("a tree read does not read again: %v", err)
			}
			for i := range tr.Entries {
				if again.Entries[i] != tr.Entries[i] {
					t.Fatalf("entry %d: %v, then %v", i, tr.Entries[i], again.Entries[i])
				}
			}
		}
		if c, err := DecodeCommit(h, b); err == nil {
			again, err := DecodeCommit(h, c.Encode())
			if err != nil || again.TreeHash != c.TreeHash || len(again.ParentHashes) != len(c.ParentHashes) || again.Message != c.Message {
				t.Fatalf("a commit read does not read again: %v", err)
			}
		}
	})
}
