package gitstore

import (
	"context"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// The done gate asks two questions of every piece of work: does it descend
// from the claim's base, and which paths does it change. Both are answered
// in-process (a worker's work is a few commits on top of its base), so a
// transition does not pay for two more git processes; long or odd
// histories fall back to git itself.

// ancestorWalkLimit bounds the in-process walk before asking git.
const ancestorWalkLimit = 256

// IsAncestor reports whether a is an ancestor of b (or b itself).
func (s *Store) IsAncestor(ctx context.Context, a, b plumbing.Hash) (bool, error) {
	if a == b {
		return true, nil
	}
	seen := map[plumbing.Hash]bool{b: true}
	queue := []plumbing.Hash{b}
	for n := 0; len(queue) > 0; n++ {
		if n >= ancestorWalkLimit {
			_, err := s.git.Run(ctx, "merge-base", "--is-ancestor", a.String(), b.String())
			if gitcmd.ExitCode(err) == 1 {
				return false, nil
			}
			return err == nil, err
		}
		c, err := s.readCommit(queue[0])
		if err != nil {
			return false, err
		}
		queue = queue[1:]
		for _, p := range c.ParentHashes {
			if p == a {
				return true, nil
			}
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return false, nil
}

// ChangedPaths lists the paths whose content differs between two commits,
// sorted; a rename counts as both paths (the task must own both).
func (s *Store) ChangedPaths(from, to plumbing.Hash) ([]string, error) {
	ta, err := s.commitTree(from)
	if err != nil {
		return nil, err
	}
	tb, err := s.commitTree(to)
	if err != nil {
		return nil, err
	}
	changes, err := object.DiffTree(ta, tb)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, ch := range changes {
		if ch.From.Name != "" {
			set[ch.From.Name] = true
		}
		if ch.To.Name != "" {
			set[ch.To.Name] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

func (s *Store) commitTree(h plumbing.Hash) (*object.Tree, error) {
	c, err := s.readCommit(h)
	if err != nil {
		return nil, err
	}
	return s.readTree(c.TreeHash)
}

// InHistory reports which of commits are in tip's history (tip included),
// in one git process however many there are, where asking git once per
// commit costs a process each (a level merge asks about every task). A
// commit this repository lacks is in no local history.
func (s *Store) InHistory(ctx context.Context, tip string, commits []string) (map[string]bool, error) {
	in := map[string]bool{}
	var asked []string
	for _, c := range commits {
		if !plumbing.IsHash(c) || !s.hasObject(plumbing.NewHash(c)) {
			continue
		}
		asked = append(asked, c)
	}
	if len(asked) == 0 {
		return in, nil
	}
	// rev-list prints what the commits reach and tip does not: a commit
	// is printed itself exactly when tip does not reach it, and the walk
	// stops where the commits' history joins tip's.
	out, err := s.git.Run(ctx, append(append([]string{"rev-list"}, asked...), "--not", tip)...)
	if err != nil {
		return nil, err
	}
	printed := map[string]bool{}
	for _, l := range strings.Fields(string(out)) {
		printed[l] = true
	}
	for _, c := range asked {
		in[c] = !printed[c]
	}
	return in, nil
}
