package gitstore

import (
	"context"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// The done gate asks two questions of every piece of work: does it descend
// from the claim's base, and which paths does it change. Both are answered
// in-process (a worker's work is a few commits on top of its base), so a
// transition does not pay for two more git processes; long or odd
// histories fall back to git itself.

// ancestorWalkLimit bounds the in-process walk before asking git.
const ancestorWalkLimit = 256

// ancestorWithin reports whether a is an ancestor of b (or b itself) as
// far as a walk of at most limit commits back from b can tell: false may
// mean "farther back". A catch-up's merge asks it before git merge-base:
// the two tips of a state are nearly always a few transitions apart on
// one line, and a rush catches up dozens of times a level.
func (s *Store) ancestorWithin(a, b plumbing.Hash, limit int) bool {
	yes, _, _ := s.walkToAncestor(a, b, limit)
	return yes
}

// walkToAncestor walks back from b, at most limit commits, looking for a;
// known is false when the walk ran out first.
func (s *Store) walkToAncestor(a, b plumbing.Hash, limit int) (yes, known bool, err error) {
	if a == b {
		return true, true, nil
	}
	seen := map[plumbing.Hash]bool{b: true}
	queue := []plumbing.Hash{b}
	for n := 0; len(queue) > 0; n++ {
		if n >= limit {
			return false, false, nil
		}
		c, err := s.readCommit(queue[0])
		if err != nil {
			return false, false, err
		}
		queue = queue[1:]
		for _, p := range c.ParentHashes {
			if p == a {
				return true, true, nil
			}
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return false, true, nil
}

// Between lists the commits of tip's history that stop's lacks (stop ""
// for all), oldest first and each after its parents, as git rev-list
// --topo-order --reverse does. A line of commits with one parent each is
// walked in-process, which is what a catch-up's check meets; anything
// else (merges, long runs) asks git.
func (s *Store) Between(ctx context.Context, tip, stop string) ([]string, error) {
	if stop != "" && plumbing.IsHash(tip) && plumbing.IsHash(stop) {
		var line []string
		h, end := plumbing.NewHash(tip), plumbing.NewHash(stop)
		for n := 0; n < ancestorWalkLimit && h != end; n++ {
			c, err := s.readCommit(h)
			if err != nil || len(c.ParentHashes) != 1 {
				line = nil
				break
			}
			line = append(line, h.String())
			h = c.ParentHashes[0]
		}
		if h == end {
			for i, j := 0, len(line)-1; i < j; i, j = i+1, j-1 {
				line[i], line[j] = line[j], line[i]
			}
			return line, nil
		}
	}
	args := []string{"rev-list", "--topo-order", "--reverse", tip}
	if stop != "" {
		args = append(args, "^"+stop)
	}
	return s.git.Fields(ctx, '\n', append(args, "--")...)
}

// IsAncestor reports whether a is an ancestor of b (or b itself).
func (s *Store) IsAncestor(ctx context.Context, a, b plumbing.Hash) (bool, error) {
	yes, known, err := s.walkToAncestor(a, b, ancestorWalkLimit)
	if err != nil || known {
		return yes, err
	}
	_, err = s.git.Run(ctx, "merge-base", "--is-ancestor", a.String(), b.String())
	if gitcmd.ExitCode(err) == 1 {
		return false, nil
	}
	return err == nil, err
}

// ChangedPaths lists the paths whose content differs between two commits,
// sorted; a rename counts as both paths (the task must own both).
func (s *Store) ChangedPaths(from, to plumbing.Hash) ([]string, error) {
	ca, err := s.readCommit(from)
	if err != nil {
		return nil, err
	}
	cb, err := s.readCommit(to)
	if err != nil {
		return nil, err
	}
	changes, err := s.DiffTrees(ca.TreeHash, cb.TreeHash)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(changes))
	for i, c := range changes {
		out[i] = c.Path
	}
	sort.Strings(out)
	return out, nil
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
