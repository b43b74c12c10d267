package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// Out is merged work to take out of staging: a task's verified commit,
// and the label its revert commit names (the task).
type Out struct {
	Commit, Label string
}

// TakeOut takes merged work out of staging: the commit on staging's
// first-parent line that merged commit (its second parent) is reverted by
// a commit on top, made in the object store alone, and staging moves to
// it by compare-and-swap. A revert already there (its message names the
// merge) is not made twice, so a command stopped halfway can run again.
// found is false when staging holds no such merge. A conflict (later work
// built on what goes) is a *Conflict naming the files; nothing moves.
func (m *Manager) TakeOut(ctx context.Context, commit, label string) (tip string, found bool, err error) {
	res, err := m.TakeOutAll(ctx, []Out{{Commit: commit, Label: label}})
	return res.Tip, len(res.Held) > 0, err
}

// TakenOut is what TakeOutAll did.
type TakenOut struct {
	Tip      string   // staging afterwards ("" without a staging branch)
	Held     []string // labels whose merge staging holds, reverted now or before, in the order given
	Reverted []string // those reverted now, newest merge first
}

// TakeOutAll is TakeOut of several tasks' work in one move of staging:
// each revert is a commit on the one before, and staging moves once, so
// that a conflict in any of them moves nothing. Without a staging branch
// there is nothing to take out, and none is made.
func (m *Manager) TakeOutAll(ctx context.Context, outs []Out) (TakenOut, error) {
	var res TakenOut
	if err := m.check(); err != nil {
		return res, err
	}
	if now, err := m.resolve1(ctx, m.stagingRef()); err != nil || now == "" {
		return res, err
	}
	tip, err := m.EnsureStaging(ctx, "")
	if err != nil {
		return res, err
	}
	// Newest merge first: a task's work taken out before the work merged
	// on top of it would conflict with that work.
	type merged struct {
		Out
		merge, before string
		at            int
	}
	var todo []merged
	for _, o := range outs {
		merge, before, at, reverted, err := m.findMerge(ctx, tip, o.Commit)
		if err != nil {
			return res, err
		}
		if merge == "" {
			continue
		}
		res.Held = append(res.Held, o.Label)
		if !reverted {
			todo = append(todo, merged{o, merge, before, at})
		}
	}
	sort.SliceStable(todo, func(i, j int) bool { return todo[i].at < todo[j].at })
	cur := tip
	var made []string
	for _, o := range todo {
		tree, err := m.revertTree(ctx, cur, o.merge, o.before, o.Label, o.Commit)
		if err != nil {
			return TakenOut{}, err
		}
		msg := fmt.Sprintf("take %s out of staging\n\nZerg-Reverts: %s\n", o.Label, o.merge)
		next, err := m.Git.RunWith(ctx, gitcmd.Call{Env: m.identity()}, "commit-tree", tree, "-p", cur, "-m", msg)
		if err != nil {
			return TakenOut{}, err
		}
		cur = strings.TrimSpace(string(next))
		made = append(made, o.Label)
	}
	res.Tip = tip
	if cur == tip {
		return res, nil
	}
	if _, err := m.Git.Run(ctx, "update-ref", "-m", "git-zerg: "+strings.Join(made, ", ")+" taken out of staging", m.stagingRef(), cur, tip); err != nil {
		return TakenOut{}, fmt.Errorf("move %s: %w", StagingBranch(m.Feature), err)
	}
	res.Tip, res.Reverted = cur, made
	return res, m.moved(cur)
}

// findMerge finds the commit on tip's first-parent line that merged commit
// (as its second parent), the first parent it merged into, how many
// commits below tip it is, and whether a commit above it already reverts
// it. The walk stops at what commit descends from (its base, a staging of
// before) rather than going through the whole history: everything from
// the merge up descends from commit.
func (m *Manager) findMerge(ctx context.Context, tip, commit string) (merge, before string, at int, reverted bool, err error) {
	if commit == "" {
		return "", "", 0, false, nil
	}
	c, err := m.resolve(ctx, commit)
	if err != nil || c[0] == "" {
		return "", "", 0, false, err // gone: nothing of it can be in staging
	}
	out, err := m.Git.Run(ctx, "log", "--first-parent", "--format=%H %P%x00%B%x00", tip, "^"+c[0])
	if err != nil {
		return "", "", 0, false, err
	}
	reverts := map[string]bool{}
	for i, rec := range strings.Split(string(out), "\x00\n") {
		head, body, ok := strings.Cut(strings.TrimLeft(rec, "\n"), "\x00")
		if !ok {
			continue
		}
		for _, l := range strings.Split(body, "\n") {
			if h, ok := strings.CutPrefix(l, "Zerg-Reverts: "); ok {
				reverts[strings.TrimSpace(h)] = true
			}
		}
		f := strings.Fields(head)
		if len(f) == 3 && f[2] == c[0] {
			return f[0], f[1], i, reverts[f[0]], nil
		}
	}
	return "", "", 0, false, nil
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
