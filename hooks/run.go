package hooks

import (
	"context"
	"io"
	"time"

	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/worktree"
)

// Run is one run of a hook, as git starts it.
type Run struct {
	// Dir is where git runs the hook: the top of the work tree.
	Dir string
	// Open opens the repository at Dir; it is not called when the hook has
	// nothing to do.
	Open func() (*gitstore.Store, error)
	Now  time.Time
	// Owner is the user's lock owner identity, asked only when a lock is
	// in the way (it may cost a git process).
	Owner func() string
	// WorkerOwner is a worker's lock owner identity (worker@host).
	WorkerOwner func(worker string) string
}

// Skip reports that the hook has nothing to do. Commits and pushes git-zerg
// makes itself are checked by the command that makes them, and a repository
// without refs/zerg has nothing that could refuse anything; both are
// answered before anything is loaded.
func (r Run) Skip() bool { return gitcmd.Internal() || ZergAbsent(r.Dir) }

// identity is who commits or pushes here: the worker of a worker
// worktree's branch, else ZERG_WORKER, else the user.
func (r Run) identity(s *gitstore.Store) Identity {
	id := Identity{WorkerOwner: r.WorkerOwner, Owner: r.Owner}
	if f, w, ok := worktree.WorkerOf(gitcmd.HeadBranch(s.GitDir)); ok {
		id.Feature, id.Worker = f, w
	}
	return id
}

// CheckCommit is the pre-commit hook: the problems that refuse the commit
// (PreCommit), none when it may go on.
func (r Run) CheckCommit(ctx context.Context) ([]Problem, error) {
	if r.Skip() {
		return nil, nil
	}
	DropRedundantGitDir(r.Dir)
	// The staged paths are asked from git right away, so that git works
	// while the state is read; cancelling stops it when it was not needed.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	staged := StartStaged(ctx, r.Dir)
	s, err := r.Open()
	if err != nil {
		return nil, err
	}
	return PreCommit(s, r.identity(s), r.Now, staged)
}

// InputError is input git does not send a hook.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// CheckPush is the pre-push hook: it reads git's lines from in and returns
// the problems that refuse the push (PrePush). gateSet is the gate set of
// the configuration (GateSet), asked once the repository is open.
func (r Run) CheckPush(ctx context.Context, in io.Reader, remote, url string, gateSet func() string) ([]Problem, error) {
	if r.Skip() {
		return nil, nil
	}
	lines, err := ParsePush(in)
	if err != nil {
		return nil, &InputError{err}
	}
	DropRedundantGitDir(r.Dir)
	s, err := r.Open()
	if err != nil {
		return nil, err
	}
	return PrePush(ctx, s, remote, url, lines, r.identity(s), gateSet(), r.Now)
}

// Paths counts the paths the problems are about.
func Paths(ps []Problem) int {
	seen := map[string]bool{}
	for _, p := range ps {
		seen[p.Path] = true
	}
	return len(seen)
}
