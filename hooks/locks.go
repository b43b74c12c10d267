package hooks

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
)

// locksCache is the repository's locks as of one tip of refs/zerg/locks,
// kept in <common dir>/zerg/cache/locks.json. The locks ref holds one blob
// per lock: during a rush that is a few hundred object reads, the largest
// cost of a pre-commit hook by far. A tip's content never changes, so the
// cache is never stale: a file for another tip is just a miss, and
// whoever misses rewrites it.
type locksCache struct {
	Format int          `json:"format"`
	Tip    string       `json:"tip"`
	Locks  []state.Lock `json:"locks"`
}

const locksCacheFormat = 1

func locksCachePath(s *gitstore.Store) string {
	return filepath.Join(s.ZergDir(), "cache", "locks.json")
}

// repoLocks returns every lock of the repository (expired ones included).
func repoLocks(s *gitstore.Store) ([]state.Lock, error) {
	tip, err := s.ReadRef(gitstore.LocksRef)
	if err != nil || tip.IsZero() {
		return nil, err
	}
	name := locksCachePath(s)
	if b, err := os.ReadFile(name); err == nil {
		var c locksCache
		if json.Unmarshal(b, &c) == nil && c.Format == locksCacheFormat && c.Tip == tip.String() {
			return c.Locks, nil
		}
	}
	locks, err := locksAt(s, tip)
	if err != nil {
		return nil, err
	}
	// Best effort: a cache that cannot be written only costs the next hook
	// the same reads.
	if b, err := json.Marshal(locksCache{Format: locksCacheFormat, Tip: tip.String(), Locks: locks}); err == nil {
		writeAtomic(name, b)
	}
	return locks, nil
}

// locksAt reads the locks of one commit of refs/zerg/locks: a tree of
// JSON blobs, one per lock (gitstore's layout, format 1).
func locksAt(s *gitstore.Store, tip plumbing.Hash) ([]state.Lock, error) {
	c, err := object.GetCommit(s.Objects(), tip)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", gitstore.LocksRef, err)
	}
	t, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", gitstore.LocksRef, err)
	}
	locks := make([]state.Lock, 0, len(t.Entries))
	for _, e := range t.Entries {
		b, err := object.GetBlob(s.Objects(), e.Hash)
		if err != nil {
			return nil, fmt.Errorf("read lock %s: %w", e.Name, err)
		}
		r, err := b.Reader()
		if err != nil {
			return nil, err
		}
		var l state.Lock
		err = json.NewDecoder(r).Decode(&l)
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("decode lock %s: %w", e.Name, err)
		}
		locks = append(locks, l)
	}
	return locks, nil
}

func writeAtomic(name string, data []byte) {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return
	}
	f, err := os.CreateTemp(filepath.Dir(name), ".tmp-*")
	if err != nil {
		return
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
	}
}
