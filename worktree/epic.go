package worktree

import (
	"context"
	"fmt"
	"strings"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// MergeCommits merges commits into one, in the object store alone (`git
// merge-tree --write-tree`, then `git commit-tree`), and returns it: the
// start of a feature that builds on several others. No ref, work tree or
// index is touched. One commit is returned as it is; a commit another
// already contains adds nothing. A conflict is a *Conflict naming the
// commit that did not merge (as Task, the label given with it).
func (m *Manager) MergeCommits(ctx context.Context, labels, commits []string, message string) (string, error) {
	if len(commits) == 0 || len(labels) != len(commits) {
		return "", fmt.Errorf("merge commits: %d labels for %d commits", len(labels), len(commits))
	}
	c, err := m.resolve(ctx, commits...)
	if err != nil {
		return "", err
	}
	for i, h := range c {
		if h == "" {
			return "", fmt.Errorf("%s: commit %q: %w", labels[i], commits[i], ErrBadRevision)
		}
	}
	cur := c[0]
	parents := []string{cur}
	call := gitcmd.Call{Env: m.identity()}
	var tree string
	for i := 1; i < len(c); i++ {
		if _, err := m.Git.Run(ctx, "merge-base", "--is-ancestor", c[i], cur); err == nil {
			continue
		} else if gitcmd.ExitCode(err) != 1 {
			return "", err
		}
		out, err := m.Git.Run(ctx, "merge-tree", "--write-tree", "--no-messages", "--name-only", "-z", cur, c[i])
		fields := gitcmd.Split(out, 0)
		switch code := gitcmd.ExitCode(err); {
		case code == 1 && len(fields) > 0:
			return "", &Conflict{Task: labels[i], Commit: c[i], Files: uniq(fields[1:])}
		case err != nil:
			return "", err
		case len(fields) == 0:
			return "", fmt.Errorf("git merge-tree: no tree for %s", labels[i])
		}
		tree = fields[0]
		parents = append(parents, c[i])
		args := []string{"commit-tree", tree}
		for _, p := range parents {
			args = append(args, "-p", p)
		}
		// One commit with every merged tip as a parent: the history says
		// what the feature started from.
		next, err := m.Git.RunWith(ctx, call, append(args, "-m", message)...)
		if err != nil {
			return "", err
		}
		cur = strings.TrimSpace(string(next))
	}
	return cur, nil
}
