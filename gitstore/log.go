package gitstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-zerg/git-zerg/gitobj"
)

// Entry is one state commit.
type Entry struct {
	Hash    plumbing.Hash
	Parent  plumbing.Hash // first parent, zero for the first commit
	When    time.Time
	Message Message
}

// Log returns the feature's state commits, newest first, following first
// parents (a forced re-plan keeps the earlier history behind it). limit <= 0
// means all.
func (s *Store) Log(feature string, limit int) ([]Entry, error) {
	tip, err := s.ReadRef(FeatureRef(feature))
	if err != nil {
		return nil, err
	}
	if lost, err := s.check(context.Background(), FeatureRef(feature), tip); err == nil && len(lost) > 0 {
		if moved, err := s.repair(context.Background(), FeatureRef(feature)); err == nil && moved {
			if tip, err = s.ReadRef(FeatureRef(feature)); err != nil {
				return nil, err
			}
		}
	}
	if tip.IsZero() {
		return nil, fmt.Errorf("feature %q: %w", feature, ErrNotFound)
	}
	return s.firstParents(tip, limit)
}

// firstParents is the history of a state ref from tip along first
// parents, newest first, at most limit entries (all when limit <= 0).
func (s *Store) firstParents(tip plumbing.Hash, limit int) ([]Entry, error) {
	var out []Entry
	for h := tip; !h.IsZero() && (limit <= 0 || len(out) < limit); {
		c, err := s.readCommit(h)
		if err != nil {
			return nil, err
		}
		e := Entry{Hash: h, When: c.Committer.When, Message: ParseMessage(c.Message)}
		if len(c.ParentHashes) > 0 {
			e.Parent = c.ParentHashes[0]
		}
		out = append(out, e)
		h = e.Parent
	}
	return out, nil
}

// TaskAt returns the stored JSON of a task as of a state commit, nil when
// the task did not exist then.
func (s *Store) TaskAt(commit plumbing.Hash, id string) ([]byte, error) {
	if commit.IsZero() {
		return nil, nil
	}
	c, err := s.readCommit(commit)
	if err != nil {
		return nil, err
	}
	e, err := s.EntryAt(c.TreeHash, "tasks/"+shardOf(id)+"/"+id)
	if errors.Is(err, gitobj.ErrNotFound) || (err == nil && e.Mode == filemode.Dir) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return s.readBlob(e.Hash)
}
