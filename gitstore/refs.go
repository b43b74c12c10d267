package gitstore

import (
	"context"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitstore/refs"
)

// The refs are read and moved by gitstore/refs; these are the store's
// names for it.

type refUpdate = refs.Update

// errRace is a lost compare-and-swap: read again and retry.
var errRace = refs.ErrRace

// ReadRef returns the commit a ref points at, or the zero hash. A name git
// would refuse (a lock file's, say) is no ref: zero.
func (s *Store) ReadRef(name string) (plumbing.Hash, error) { return s.refs.Read(name) }

// RefsUnder lists the refs whose names start with prefix (a directory
// such as "refs/zerg/work/f/", or one ref's full name), with their commits.
func (s *Store) RefsUnder(prefix string) (map[string]plumbing.Hash, error) {
	return s.refs.Under(prefix)
}

// moveRefs moves refs in one compare-and-swap (refs.DB.Move): through the
// Repo's long-lived update-ref when s is Persistent, else through the one
// started ahead of it, if any.
func (s *Store) moveRefs(ctx context.Context, us []refUpdate) error {
	return s.refs.Move(ctx, us, s.Persistent, s.pre.Swap(nil))
}

// writerTurn waits for this process's turn among the writers of this
// machine (refs.Turns.Take), at most wait.
func (s *Store) writerTurn(wait time.Duration) (end func()) {
	return s.repo.refs.Turns.Take(s.Layout().WriterLock(), wait)
}

// Features lists the planned features, sorted.
func (s *Store) Features() ([]string, error) {
	refs, err := s.RefsUnder(FeaturePrefix)
	if err != nil {
		return nil, err
	}
	var out []string
	for name, h := range refs {
		if c, err := s.readCommit(h); err == nil {
			if t, err := s.readTree(c.TreeHash); err == nil {
				if _, gone := entriesOf(t)[tombstone]; gone {
					continue
				}
			}
		}
		out = append(out, strings.TrimPrefix(name, FeaturePrefix))
	}
	sortStrings(out)
	return out, nil
}
