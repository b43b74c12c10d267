package gitstore

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDropCache removes every cache file of a deleted feature, those of
// the cache's first format among them, and no other feature's.
func TestDropCache(t *testing.T) {
	s := openStore(t, newRepo(t))
	dir := filepath.Join(s.Layout().Dir(), "cache")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	names := []string{".tasks", ".delta.tasks", ".index", ".index-delta", ".workers", ".task-json", ".gob", ".delta.gob", ".workers.json"}
	for _, f := range []string{"f", "other"} {
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, f+n), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.DropCache("f")
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, "f"+n)); err == nil {
			t.Errorf("f%s left behind", n)
		}
		if _, err := os.Stat(filepath.Join(dir, "other"+n)); err != nil {
			t.Errorf("other%s removed", n)
		}
	}
}
