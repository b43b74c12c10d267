package gitstore

import (
	"container/heap"
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

// Log returns the feature's state commits, newest first (by commit time,
// as git log orders them), at most limit (all when limit <= 0). Every
// parent is followed: the transitions another host made while the two
// could not see each other (a remote that lost its refs) come in by a
// sync merge's second parent, and are transitions all the same; a forced
// re-plan keeps the earlier history behind it.
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
	return s.history(tip, limit)
}

// history is the history of a state ref from tip, every parent followed,
// newest commit first, at most limit entries (all when limit <= 0). Only
// the commits printed and their parents are read.
func (s *Store) history(tip plumbing.Hash, limit int) ([]Entry, error) {
	var out []Entry
	seen := map[plumbing.Hash]bool{tip: true}
	var next entryHeap
	push := func(h plumbing.Hash) error {
		c, err := s.readCommit(h)
		if err != nil {
			return err
		}
		e := historyEntry{Entry: Entry{Hash: h, When: c.Committer.When, Message: ParseMessage(c.Message)}, parents: c.ParentHashes, seq: len(seen)}
		if len(c.ParentHashes) > 0 {
			e.Parent = c.ParentHashes[0]
		}
		heap.Push(&next, e)
		return nil
	}
	if err := push(tip); err != nil {
		return nil, err
	}
	for next.Len() > 0 && (limit <= 0 || len(out) < limit) {
		e := heap.Pop(&next).(historyEntry)
		out = append(out, e.Entry)
		for _, p := range e.parents {
			if !seen[p] {
				seen[p] = true
				if err := push(p); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// historyEntry is an Entry waiting in history's queue, with its parents.
type historyEntry struct {
	Entry
	parents []plumbing.Hash
	seq     int // order of reaching it
}

// entryHeap orders commits newest first; of two made in the same second,
// the one pushed first (nearer the tip) comes first.
type entryHeap []historyEntry

func (h entryHeap) Len() int { return len(h) }
func (h entryHeap) Less(i, j int) bool {
	if !h[i].When.Equal(h[j].When) {
		return h[i].When.After(h[j].When)
	}
	return h[i].seq < h[j].seq
}
func (h entryHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *entryHeap) Push(x any)   { *h = append(*h, x.(historyEntry)) }
func (h *entryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
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
