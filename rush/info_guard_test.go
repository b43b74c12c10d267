package rush

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-zerg/git-zerg/engine/enginetest"
	"github.com/git-zerg/git-zerg/engine/rushmarker"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/proc"
)

// excludeRepo is a repository whose info/exclude holds the user's line,
// with the store on it.
func excludeRepo(t *testing.T) (*gitstore.Store, string) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	repo := filepath.Join(dir, "repo")
	enginetest.Run(t, dir, "git", "init", "-q", repo)
	s, err := gitstore.Open(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Drop() })
	path := filepath.Join(s.CommonDir, "info", "exclude")
	if err := os.WriteFile(path, []byte("the user's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil { // git made it 644: the mode is put back too
		t.Fatal(err)
	}
	if err := os.MkdirAll(s.Layout().RushDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	return s, path
}

// marker writes a rush marker for feature: of this process (alive) or of
// none (dead).
func marker(t *testing.T, s *gitstore.Store, feature string, alive bool) string {
	t.Helper()
	self := s.Host()
	h := rushmarker.Holder{Host: self.Name, Instance: self.Instance}
	if alive {
		h.PID, h.Started = os.Getpid(), proc.StartTime(os.Getpid())
	}
	b, _ := json.Marshal(h)
	p := s.Layout().Rush(feature)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func wantExclude(t *testing.T, path, want string) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("info/exclude: %v, %v; want the user's regular file, mode 600", fi, err)
	}
	if b, _ := os.ReadFile(path); string(b) != want {
		t.Fatalf("info/exclude = %q, want %q", b, want)
	}
}

func TestInfoGuardPutsBack(t *testing.T) {
	s, path := excludeRepo(t)
	g, note, err := keepInfo(s, marker(t, s, "a", true))
	if err != nil || note != "" {
		t.Fatalf("keepInfo = %q, %v", note, err)
	}
	if changed, err := g.check(); len(changed) != 0 || err != nil {
		t.Fatalf("check of an unchanged file = %v, %v", changed, err)
	}

	os.WriteFile(path, []byte("the user's\nhelper.sh\n"), 0o600)
	if changed, err := g.check(); len(changed) != 1 || changed[0] != "exclude" || err != nil {
		t.Fatalf("check after a worker's line = %v, %v", changed, err)
	}
	wantExclude(t, path, "the user's\n")

	// Put back by replacing, never by writing through a link a worker put
	// in the file's place, or in its directory's.
	elsewhere := filepath.Join(t.TempDir(), "target")
	os.WriteFile(elsewhere, []byte("not to be written\n"), 0o644)
	os.Remove(path)
	os.Symlink(elsewhere, path)
	if changed, err := g.check(); len(changed) != 1 || changed[0] != "exclude" || err != nil {
		t.Fatalf("check after a link = %v, %v", changed, err)
	}
	wantExclude(t, path, "the user's\n")
	info := filepath.Dir(path)
	otherDir := t.TempDir()
	os.RemoveAll(info)
	os.Symlink(otherDir, info)
	if changed, err := g.check(); len(changed) != 1 || changed[0] != "exclude" || err != nil {
		t.Fatalf("check after info/ made a link = %v, %v", changed, err)
	}
	wantExclude(t, path, "the user's\n")
	if b, _ := os.ReadFile(elsewhere); string(b) != "not to be written\n" {
		t.Fatal("written through a link")
	}
	if ents, _ := os.ReadDir(otherDir); len(ents) != 0 {
		t.Fatal("written through a link to a directory")
	}

	g.end()
	if _, err := os.Stat(g.saved); !os.IsNotExist(err) {
		t.Fatalf("the saved version outlives the last rush: %v", err)
	}
}

// A user without an info/exclude has none afterwards either.
func TestInfoGuardNone(t *testing.T) {
	s, path := excludeRepo(t)
	os.Remove(path)
	g, _, err := keepInfo(s, marker(t, s, "a", true))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, []byte("helper.sh\n"), 0o644)
	if changed, err := g.check(); len(changed) != 1 || changed[0] != "exclude" || err != nil {
		t.Fatalf("check = %v, %v", changed, err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("info/exclude is there: %v", err)
	}
}

// A rush killed before it put the file back: the next rush does, and says
// so.
func TestInfoGuardAfterKill(t *testing.T) {
	s, path := excludeRepo(t)
	dead := marker(t, s, "a", false)
	if _, _, err := keepInfo(s, dead); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, []byte("helper.sh\n"), 0o600) // its worker's, never put back
	g, note, err := keepInfo(s, marker(t, s, "b", true))
	if err != nil || note == "" {
		t.Fatalf("keepInfo after a killed rush = %q, %v; want a note", note, err)
	}
	wantExclude(t, path, "the user's\n")
	g.end()
}

// Two rushes at once (an epic's features) keep the same version: the one
// that started second does not take the first one's worker's line for the
// user's, and the saved version stays until the last one ends.
func TestInfoGuardTwoRushes(t *testing.T) {
	s, path := excludeRepo(t)
	ma := marker(t, s, "a", true)
	a, _, err := keepInfo(s, ma)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, []byte("the user's\nA's worker's\n"), 0o600)
	b, note, err := keepInfo(s, marker(t, s, "b", true))
	if err != nil || note != "" {
		t.Fatalf("second keepInfo = %q, %v; want nothing done while the first runs", note, err)
	}
	if changed, err := b.check(); len(changed) != 1 || err != nil {
		t.Fatalf("second rush's check = %v, %v", changed, err)
	}
	wantExclude(t, path, "the user's\n")
	a.end()
	os.Remove(ma)
	if _, err := os.Stat(a.saved); err != nil {
		t.Fatalf("saved version gone while a rush runs: %v", err)
	}
	b.end()
	if _, err := os.Stat(b.saved); !os.IsNotExist(err) {
		t.Fatalf("saved version outlives the last rush: %v", err)
	}
}

// info/attributes is kept too: a line there can have a filter rewrite a
// file as git checks it out for the verification.
func TestInfoGuardAttributes(t *testing.T) {
	s, _ := excludeRepo(t)
	g, _, err := keepInfo(s, marker(t, s, "a", true))
	if err != nil {
		t.Fatal(err)
	}
	attrs := filepath.Join(s.CommonDir, "info", "attributes")
	os.WriteFile(attrs, []byte("a.sh filter=helper\n"), 0o644)
	if changed, err := g.check(); len(changed) != 1 || changed[0] != "attributes" || err != nil {
		t.Fatalf("check = %v, %v; want attributes put back", changed, err)
	}
	if _, err := os.Lstat(attrs); !os.IsNotExist(err) {
		t.Fatalf("info/attributes is there: %v", err)
	}
	g.end()
}
