package worktree

import (
	"os"
	"strings"
)

// git-zerg's own identity, for every commit it makes itself (merges into
// staging, a worker's leftovers) when the environment sets none, so that
// it works in repositories and on machines without user.name / user.email.
const (
	IdentityName  = "git-zerg"
	IdentityEmail = "git-zerg@localhost"
)

// identity returns the author and committer variables the environment
// leaves unset, filled with git-zerg's own identity. Git config is never
// touched: a user's or worker's setting of its own still wins.
func (m *Manager) identity() []string {
	var env []string
	set := func(k, v string) {
		for _, kv := range m.Git.Env {
			if strings.HasPrefix(kv, k+"=") && len(kv) > len(k)+1 {
				return
			}
		}
		if os.Getenv(k) == "" {
			env = append(env, k+"="+v)
		}
	}
	set("GIT_AUTHOR_NAME", IdentityName)
	set("GIT_AUTHOR_EMAIL", IdentityEmail)
	set("GIT_COMMITTER_NAME", IdentityName)
	set("GIT_COMMITTER_EMAIL", IdentityEmail)
	return env
}
