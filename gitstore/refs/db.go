// Package refs reads and moves the refs of one repository as git does:
// loose files first, then packed-refs, names git would refuse taken for
// no ref; every move a compare-and-swap made by `git update-ref --stdin`,
// so that git's own <ref>.lock protocol is respected by every writer; and
// the turn this machine's writers take. It knows nothing of what the refs
// hold (gitstore's state) nor of objects.
package refs

import (
	"sync"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// Shared is what the DBs of one repository share in a process: the parsed
// packed-refs, the long-lived `git update-ref --stdin`, the writers' turn.
// It is safe for concurrent use.
type Shared struct {
	mu     sync.Mutex
	packed *packedRefs
	// pipe is the one `git update-ref --stdin` of the process's piped
	// moves: `update-ref --stdin` takes transaction after transaction,
	// and a rush makes hundreds of them.
	pipe pipe
	// Turns orders this machine's writers (Turns.Take).
	Turns Turns
}

// pipe is a long-lived `git update-ref --stdin`.
type pipe struct {
	mu sync.Mutex
	p  *gitcmd.Pipe
}

// DB reads and moves the refs of one repository as one work tree sees
// them (its own HEAD and per-worktree refs). Its reads are safe for
// concurrent use; what DBs of a repository share is their Shared.
type DB struct {
	commonDir, gitDir string
	git               *gitcmd.Runner
	shared            *Shared
}

// New returns the refs of the repository whose common git dir is
// commonDir, as the work tree of git dir gitDir ("" in a bare one) sees
// them, git running in it.
func New(commonDir, gitDir string, git *gitcmd.Runner, shared *Shared) *DB {
	return &DB{commonDir: commonDir, gitDir: gitDir, git: git, shared: shared}
}
