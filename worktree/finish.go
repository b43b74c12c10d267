package worktree

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// Refusals of MergeIntoHead; nothing was written.
var (
	// ErrDetached: HEAD is no branch, so there is nothing to finish into.
	ErrDetached = errors.New("HEAD is detached")
	// ErrZergBranch: the current branch is one of git-zerg's own.
	ErrZergBranch = errors.New("the current branch is git-zerg's")
	// ErrConflict: the merge would conflict.
	ErrConflict = errors.New("the merge would conflict")
	// ErrOverlap: uncommitted changes in the work tree are in paths the
	// merge changes.
	ErrOverlap = errors.New("uncommitted changes in paths the merge changes")
)

// FinishError is a refusal of MergeIntoHead, naming what refused it.
type FinishError struct {
	Branch string   // the current branch, when there is one
	Err    error    // ErrDetached, ErrZergBranch, ErrConflict or ErrOverlap
	Paths  []string // ErrOverlap: the paths both change; ErrConflict: the conflicted ones
}

func (e *FinishError) Error() string {
	if len(e.Paths) > 0 {
		return e.Err.Error() + ": " + e.PathList()
	}
	return e.Err.Error()
}

// PathList names the first paths and counts the rest.
func (e *FinishError) PathList() string {
	const show = 5
	p := e.Paths
	if len(p) > show {
		p = p[:show]
	}
	s := strings.Join(p, ", ")
	if n := len(e.Paths) - show; n > 0 {
		s += fmt.Sprintf(" and %d more", n)
	}
	return s
}

func (e *FinishError) Unwrap() error { return e.Err }

// Merged is what MergeIntoHead did to the current branch.
type Merged struct {
	Branch string // the branch, short name
	From   string // its commit before
	To     string // its commit after
	// How: "fast-forward", "merge" (a merge commit) or "up to date"
	// (the branch had the commit already: nothing done).
	How string
}

// MergeIntoHead merges commit into the branch checked out in the work
// tree at dir (the user's checkout): a fast-forward when the branch is
// an ancestor of commit, else a merge commit with message.
//
// It refuses, writing nothing, a detached HEAD, a branch of git-zerg's, a
// merge that would conflict (judged first with merge-tree, so that no
// conflict markers land in the user's files), and uncommitted changes
// (untracked and ignored files too) in any path the merge changes. Changes elsewhere
// stay as they are: git carries them over.
//
// The merge itself is the git binary's, in that work tree, not a ref
// moved here: git updates the index and files together and refuses, on
// its own, to overwrite a local change, so the user's uncommitted work is
// guarded twice, by the check here and by git's, and a change made
// between the two is still git's to protect. --no-autostash keeps a
// merge.autoStash setting from stashing the user's changes away.
func (m *Manager) MergeIntoHead(ctx context.Context, dir, commit, message string) (*Merged, error) {
	git := m.at(dir)
	branch, err := git.Line(ctx, "symbolic-ref", "-q", "--short", "HEAD")
	if err != nil {
		if gitcmd.ExitCode(err) == 1 {
			return nil, &FinishError{Err: ErrDetached}
		}
		return nil, err
	}
	if strings.HasPrefix(branch, "zerg/") {
		return nil, &FinishError{Branch: branch, Err: ErrZergBranch}
	}
	c, err := m.resolve(ctx, "HEAD", commit)
	if err != nil {
		return nil, err
	}
	head, tip := c[0], c[1]
	if tip == "" {
		return nil, fmt.Errorf("%s: %w", commit, ErrBadRevision)
	}
	res := &Merged{Branch: branch, From: head, To: head, How: "up to date"}
	if head != "" && m.isAncestor(ctx, tip, head) {
		return res, nil
	}
	ff := head == "" || m.isAncestor(ctx, head, tip)
	result := tip
	if !ff {
		tree, clean, err := m.MergeTree(ctx, head, tip)
		if err != nil {
			return nil, err
		}
		if !clean {
			return nil, &FinishError{Branch: branch, Err: ErrConflict, Paths: m.conflicted(ctx, head, tip)}
		}
		result = tree
	}
	// On a branch with no commit yet, everything the commit holds is
	// new to the work tree.
	diff := []string{"ls-tree", "-r", "-z", "--name-only", result}
	if head != "" {
		diff = []string{"diff", "--name-only", "--no-renames", "-z", head, result}
	}
	touched, err := git.Fields(ctx, 0, diff...)
	if err != nil {
		return nil, err
	}
	dirty, err := m.changes(ctx, dir, true)
	if err != nil {
		return nil, err
	}
	// git overwrites ignored files without a word (it takes them
	// for build output): an ignored .env the merge would replace
	// counts as the user's work too.
	ignored, err := git.Fields(ctx, 0, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")
	if err != nil {
		return nil, err
	}
	if both := overlap(touched, append(dirty, ignored...)); len(both) > 0 {
		return nil, &FinishError{Branch: branch, Err: ErrOverlap, Paths: both}
	}
	args := []string{"merge", "-q", "--no-autostash", "--no-edit", "--no-squash"}
	if ff {
		args = append(args, "--ff-only", tip)
		res.How = "fast-forward"
	} else {
		args = append(args, "--no-ff", "-m", message, tip)
		res.How = "merge"
	}
	if _, err := git.Run(ctx, args...); err != nil {
		return nil, err
	}
	if res.To, err = m.resolve1(ctx, "HEAD"); err != nil {
		return nil, err
	}
	return res, nil
}

// conflicted lists the paths a merge of a and b conflicts in (none when
// git cannot say).
func (m *Manager) conflicted(ctx context.Context, a, b string) []string {
	out, _ := m.Git.Run(ctx, "merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", a, b)
	fields := gitcmd.Split(out, 0)
	var paths []string
	seen := map[string]bool{}
	for i, f := range fields {
		if i > 0 && f != "" && !seen[f] { // the first is the tree
			seen[f] = true
			paths = append(paths, f)
		}
	}
	return paths
}

// overlap lists the paths of touched that a dirty path (git status's,
// where an untracked directory ends in "/") is, is inside, or holds.
func overlap(touched, dirty []string) []string {
	var out []string
	for _, t := range touched {
		for _, d := range dirty {
			d = strings.TrimSuffix(d, "/")
			if t == d || strings.HasPrefix(t, d+"/") || strings.HasPrefix(d, t+"/") {
				out = append(out, t)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}
