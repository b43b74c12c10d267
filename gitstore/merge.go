package gitstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-zerg/git-zerg/gitobj"
	"github.com/git-zerg/git-zerg/gitstore/statemerge"
	"github.com/git-zerg/git-zerg/state"
)

// The rules of the merge of two histories of one state (a feature's, or
// the locks') are statemerge's; the store writes the merge commit.

// MergeResult says what a feature merge did.
type MergeResult struct {
	Commit    plumbing.Hash // the merged state (one of the tips when no merge commit was needed)
	Kind      string        // "up to date", "new here", "new on the remote", "local ahead", "fast-forward", "merge"
	Conflicts []Conflict
}

// Conflict is a task both sides changed.
type Conflict = statemerge.Conflict

// MergeFeature merges the feature state at remote into the state at local
// and writes the merge commit if one is needed; it moves no ref.
func (s *Store) MergeFeature(ctx context.Context, feature string, local, remote plumbing.Hash) (MergeResult, error) {
	return s.mergeFeature(ctx, feature, local, remote, fmt.Sprintf("sync %s: merge %s into %s", feature, short(remote), short(local)))
}

func (s *Store) mergeFeature(ctx context.Context, feature string, local, remote plumbing.Hash, subject string) (MergeResult, error) {
	res, base, a, b, err := s.trivialMerge(ctx, local, remote)
	if err != nil || res.Kind != "" {
		return res, err
	}
	trees := make([]entries, 3)
	clocks := make([]uint64, 3)
	for i, h := range []plumbing.Hash{base, a, b} {
		if h.IsZero() {
			trees[i] = entries{}
			continue
		}
		c, err := s.readCommit(h)
		if err != nil {
			return MergeResult{}, err
		}
		t, err := s.readTree(c.TreeHash)
		if err != nil {
			return MergeResult{}, err
		}
		trees[i] = entriesOf(t)
		clocks[i] = ParseMessage(c.Message).Clock
	}
	clock := max(clocks[1], clocks[2]) + 1
	root, conflicts, err := statemerge.Feature(s.db, clock, trees[0], trees[1], trees[2])
	if err != nil {
		return MergeResult{}, err
	}
	h, err := s.writeBlob([]byte(strconv.FormatUint(clock, 10) + "\n"))
	if err != nil {
		return MergeResult{}, err
	}
	if _, gone := root[tombstone]; !gone {
		root.SetBlob("clock", h)
	}
	th, err := s.writeTree(root)
	if err != nil {
		return MergeResult{}, err
	}
	var lines []string
	for _, c := range conflicts {
		lines = append(lines, fmt.Sprintf("conflict %s: %s wins over %s", c.Task, c.Winner, c.Loser))
	}
	msg := &Message{Subject: subject,
		Op: state.OpSync, Feature: feature, Clock: clock, Reason: strings.Join(lines, "; ")}
	sig := gitobj.Signature{Name: "git-zerg", Email: "git-zerg@" + hostname.Get(), When: time.Now()}
	c := &gitobj.Commit{Author: sig, Committer: sig, Message: msg.String(), TreeHash: th, ParentHashes: []plumbing.Hash{local, remote}}
	if err := s.seal(c); err != nil {
		return MergeResult{}, err
	}
	ch, err := s.writeCommit(c)
	if err != nil {
		return MergeResult{}, err
	}
	return MergeResult{Commit: ch, Kind: "merge", Conflicts: conflicts}, nil
}

// trivialMerge settles the merges that need no merge commit (one side is
// empty or contains the other). Otherwise res is zero and it returns the
// merge base and the two sides in canonical order (res.Kind is empty), so that the result does
// not depend on which machine merges.
func (s *Store) trivialMerge(ctx context.Context, local, remote plumbing.Hash) (res MergeResult, base, a, b plumbing.Hash, err error) {
	switch {
	case local == remote:
		return MergeResult{Commit: local, Kind: "up to date"}, base, a, b, nil
	case remote.IsZero():
		return MergeResult{Commit: local, Kind: "new on the remote"}, base, a, b, nil
	case local.IsZero():
		return MergeResult{Commit: remote, Kind: "new here"}, base, a, b, nil
	}
	// The usual answers, without a git process: one side is a few
	// transitions ahead of the other.
	const near = 64
	switch {
	case s.ancestorWithin(local, remote, near):
		base = local
	case s.ancestorWithin(remote, local, near):
		base = remote
	default:
		if base, err = s.mergeBase(ctx, local, remote); err != nil {
			return res, base, a, b, err
		}
	}
	switch base {
	case remote:
		return MergeResult{Commit: local, Kind: "local ahead"}, base, a, b, nil
	case local:
		return MergeResult{Commit: remote, Kind: "fast-forward"}, base, a, b, nil
	}
	a, b = local, remote
	if b.String() < a.String() {
		a, b = b, a
	}
	return MergeResult{}, base, a, b, nil
}

func short(h plumbing.Hash) string { return h.String()[:12] }

func (s *Store) mergeBase(ctx context.Context, a, b plumbing.Hash) (plumbing.Hash, error) {
	out, err := s.git.Line(ctx, "merge-base", a.String(), b.String())
	if err != nil {
		if strings.TrimSpace(out) == "" {
			// Unrelated histories (the feature was planned on both
			// machines): merge against nothing.
			return plumbing.ZeroHash, nil
		}
		return plumbing.ZeroHash, err
	}
	return plumbing.NewHash(out), nil
}

// LockKeeper returns the rule that drops, after a merge, the locks whose
// task is no longer held by the lock's owner in the merged state (the
// loser of a double claim). tips are the merged feature states.
func (s *Store) LockKeeper(tips map[string]plumbing.Hash) func(state.Lock) bool {
	return func(l state.Lock) bool {
		if l.Feature == "" || l.Task == "" {
			return true
		}
		tip, ok := tips[l.Feature]
		if !ok {
			return true
		}
		b, err := s.TaskAt(tip, l.Task)
		if err != nil || b == nil {
			return true
		}
		var t state.Task
		if json.Unmarshal(b, &t) != nil {
			return true
		}
		return t.Status.Holding() && t.Owner == l.Owner
	}
}

// MergeLocks merges the repository's locks at remote into those at local
// and writes the merged commit if one is needed. A path both sides locked
// differently goes to the earlier lock (then the smaller bytes); keep drops
// locks whose task lost its claim in the feature merges. It moves no ref.
func (s *Store) MergeLocks(ctx context.Context, local, remote plumbing.Hash, keep func(state.Lock) bool) (MergeResult, error) {
	return s.mergeLocks(ctx, local, remote, keep, fmt.Sprintf("sync locks: merge %s into %s", short(remote), short(local)))
}

func (s *Store) mergeLocks(ctx context.Context, local, remote plumbing.Hash, keep func(state.Lock) bool, subject string) (MergeResult, error) {
	res, base, a, b, err := s.trivialMerge(ctx, local, remote)
	if err != nil || res.Kind != "" {
		return res, err
	}
	roots := make([]gitobj.TreeEntry, 3)
	for i, h := range []plumbing.Hash{base, a, b} {
		if h.IsZero() {
			continue
		}
		c, err := s.readCommit(h)
		if err != nil {
			return MergeResult{}, err
		}
		roots[i] = gitobj.TreeEntry{Mode: filemode.Dir, Hash: c.TreeHash}
	}
	out, err := statemerge.Locks(s.db, roots[0], roots[1], roots[2], keep)
	if err != nil {
		return MergeResult{}, err
	}
	th, err := s.writeTree(out)
	if err != nil {
		return MergeResult{}, err
	}
	msg := &Message{Subject: subject, Op: state.OpSync}
	sig := gitobj.Signature{Name: "git-zerg", Email: "git-zerg@" + hostname.Get(), When: time.Now()}
	c := &gitobj.Commit{Author: sig, Committer: sig, Message: msg.String(), TreeHash: th, ParentHashes: []plumbing.Hash{local, remote}}
	if err := s.seal(c); err != nil {
		return MergeResult{}, err
	}
	ch, err := s.writeCommit(c)
	if err != nil {
		return MergeResult{}, err
	}
	return MergeResult{Commit: ch, Kind: "merge"}, nil
}
