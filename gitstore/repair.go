package gitstore

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
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
// Every writer therefore records the tip it wrote (.git/zerg/tips/), and
// before each transaction checks the ref against the record: a ref that
// went back to an ancestor of the record is moved forward again; a ref that
// moved on from such a reverted value (another writer built on it before
// anyone noticed) gets the lost commit merged back in, with the
// deterministic merge that sync uses. Nothing acknowledged is lost.

func (s *Store) tipRecord(ref string) string {
	sum := sha1.Sum([]byte(ref))
	return filepath.Join(s.ZergDir(), "tips", hex.EncodeToString(sum[:8]))
}

func (s *Store) recordTips(us []refUpdate) {
	for _, u := range us {
		if u.verify || u.unchecked || u.delete || u.new.IsZero() {
			continue
		}
		if u.name != LocksRef && !strings.HasPrefix(u.name, FeaturePrefix) {
			continue
		}
		_ = writeFileAtomic(s.tipRecord(u.name), []byte(u.new.String()+"\n"))
	}
}

// repair brings a ref back to (or merges back) the last tip recorded for
// it, when a concurrent pack-refs undid it. It reports whether it moved
// the ref.
func (s *Store) repair(ctx context.Context, ref string) (bool, error) {
	b, err := os.ReadFile(s.tipRecord(ref))
	if err != nil {
		return false, nil
	}
	rec := plumbing.NewHash(strings.TrimSpace(string(b)))
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
	s.recordTips([]refUpdate{{name: ref, new: next, old: tip}})
	return true, nil
}

// behind reports whether tip lacks the recorded tip of ref: read after a
// pack-refs undid an update, a transaction must not build on it.
func (s *Store) behind(ctx context.Context, ref string, tip plumbing.Hash) bool {
	b, err := os.ReadFile(s.tipRecord(ref))
	if err != nil {
		return false
	}
	rec := plumbing.NewHash(strings.TrimSpace(string(b)))
	if rec.IsZero() || rec == tip || tip.IsZero() {
		return false
	}
	if _, err := s.readCommit(rec); err != nil {
		return false
	}
	ok, err := s.IsAncestor(ctx, rec, tip)
	return err == nil && !ok
}
