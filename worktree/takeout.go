package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// TakeOut takes merged work out of staging: the commit on staging's
// first-parent line that merged commit (its second parent) is reverted by
// a commit on top, made in the object store alone (`git merge-tree` of
// the tip and the merge's first parent, on the merge as base), and staging
// moves to it by compare-and-swap. A revert already there (its message
// names the merge) is not made twice, so a command stopped halfway can
// run again. found is false when staging holds no such merge. A conflict
// (later work built on what goes) is a *Conflict naming the files;
// nothing moves.
func (m *Manager) TakeOut(ctx context.Context, commit, label string) (tip string, found bool, err error) {
	tip, err = m.EnsureStaging(ctx, "")
	if err != nil || commit == "" {
		return tip, false, err
	}
	out, err := m.Git.Run(ctx, "log", "--first-parent", "--format=%H %P%x00%B%x00", tip)
	if err != nil {
		return "", false, err
	}
	var merge, before string
	reverted := map[string]bool{}
	for _, rec := range strings.Split(string(out), "\x00\n") {
		head, body, ok := strings.Cut(strings.TrimLeft(rec, "\n"), "\x00")
		if !ok {
			continue
		}
		for _, l := range strings.Split(body, "\n") {
			if h, ok := strings.CutPrefix(l, "Zerg-Reverts: "); ok {
				reverted[strings.TrimSpace(h)] = true
			}
		}
		f := strings.Fields(head)
		if len(f) == 3 && f[2] == commit {
			merge, before = f[0], f[1]
			break
		}
	}
	if merge == "" {
		return tip, false, nil
	}
	if reverted[merge] {
		return tip, true, nil
	}
	tree, err := m.revertTree(ctx, tip, merge, before, label, commit)
	if err != nil {
		return "", true, err
	}
	msg := fmt.Sprintf("take %s out of staging\n\nZerg-Reverts: %s\n", label, merge)
	next, err := m.Git.RunWith(ctx, gitcmd.Call{Env: m.identity()}, "commit-tree", tree, "-p", tip, "-m", msg)
	if err != nil {
		return "", true, err
	}
	n := strings.TrimSpace(string(next))
	if _, err := m.Git.Run(ctx, "update-ref", "-m", "git-zerg: "+label+" taken out of staging", m.stagingRef(), n, tip); err != nil {
		return "", true, fmt.Errorf("move %s: %w", StagingBranch(m.Feature), err)
	}
	return n, true, m.moved(n)
}

// revertTree is tip's tree with what merge brought (its changes from
// before, its first parent) put back as before had it. A path changed
// since by later work is a conflict. Done on a temporary index rather
// than by git merge-tree, whose --merge-base needs git 2.40.
func (m *Manager) revertTree(ctx context.Context, tip, merge, before, label, commit string) (string, error) {
	out, err := m.Git.Run(ctx, "diff-tree", "-r", "--no-renames", "-z", "--name-only", before, merge)
	if err != nil {
		return "", err
	}
	paths := gitcmd.Split(out, 0)
	var conflicts []string
	var info strings.Builder
	for _, p := range paths {
		at := func(rev string) string {
			b, err := m.Git.Run(ctx, "ls-tree", "-z", rev, "--", p)
			if err != nil {
				return ""
			}
			return strings.TrimSuffix(string(b), "\x00")
		}
		now, merged, was := at(tip), at(merge), at(before)
		if now != merged {
			conflicts = append(conflicts, p)
			continue
		}
		if was == "" {
			fmt.Fprintf(&info, "0 %s\t%s\x00", strings.Repeat("0", 40), p) // the merge added it: removed
		} else {
			info.WriteString(was + "\x00") // "<mode> blob <hash>\t<path>", as update-index reads it
		}
	}
	if len(conflicts) > 0 {
		return "", &Conflict{Task: label, Commit: commit, Files: conflicts}
	}
	dir, err := os.MkdirTemp("", "zerg-takeout-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	call := gitcmd.Call{Env: []string{"GIT_INDEX_FILE=" + filepath.Join(dir, "index")}}
	if _, err := m.Git.RunWith(ctx, call, "read-tree", tip); err != nil {
		return "", err
	}
	call.Stdin = strings.NewReader(info.String())
	if _, err := m.Git.RunWith(ctx, call, "update-index", "-z", "--index-info"); err != nil {
		return "", err
	}
	call.Stdin = nil
	t, err := m.Git.RunWith(ctx, call, "write-tree")
	return strings.TrimSpace(string(t)), err
}
