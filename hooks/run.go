package hooks

import (
	"context"
	"fmt"
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
func (r Run) Skip() bool { return gitcmd.Internal() || zergAbsent(r.Dir) }

// identity is who commits or pushes here: the worker of a worker
// worktree's branch, else ZERG_WORKER, else the user.
func (r Run) identity(s *gitstore.Store) Identity {
	id := Identity{WorkerOwner: r.WorkerOwner, Owner: r.Owner}
	if f, w, ok := worktree.WorkerOf(gitcmd.HeadBranch(s.GitDir)); ok {
		id.Feature, id.Worker = f, w
	}
	return id
}

// Refusal is a commit or push a hook refuses, for the problems found.
type Refusal struct {
	What, Why, Hint string
	Problems        []Problem
}

func (r *Refusal) Error() string { return r.What + " (" + r.Why + ")" }

// CheckCommit is the pre-commit hook: a *Refusal when PreCommit finds
// problems, nil when the commit may go on.
func (r Run) CheckCommit(ctx context.Context) error {
	if r.Skip() {
		return nil
	}
	dropRedundantGitDir(r.Dir)
	// The staged paths are asked from git right away, so that git works
	// while the state is read; cancelling stops it when it was not needed.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	staged := startStaged(ctx, r.Dir)
	s, err := r.Open()
	if err != nil {
		return err
	}
	ps, err := preCommit(s, r.identity(s), r.Now, staged)
	if err != nil || len(ps) == 0 {
		return err
	}
	n, verb := paths(ps), "are"
	if n == 1 {
		verb = "is"
	}
	return &Refusal{What: "commit refused", Why: count(n, "staged path") + " " + verb + " not yours to commit",
		Hint: "git zerg status and git zerg locks show who holds what", Problems: ps}
}

// InputError is input git does not send a hook.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// CheckPush is the pre-push hook: it reads git's lines from in (an
// *InputError when they are not what git sends) and returns a *Refusal
// when PrePush finds problems, nil when the push may go on. gateSet is the
// gate set of the configuration (GateSet), asked once the repository is
// open.
func (r Run) CheckPush(ctx context.Context, in io.Reader, remote, url string, gateSet func() string) error {
	if r.Skip() {
		return nil
	}
	lines, err := parsePush(in)
	if err != nil {
		return &InputError{err}
	}
	dropRedundantGitDir(r.Dir)
	s, err := r.Open()
	if err != nil {
		return err
	}
	ps, err := prePush(ctx, s, remote, url, lines, r.identity(s), gateSet(), r.Now)
	if err != nil || len(ps) == 0 {
		return err
	}
	to := remote
	if to == "" {
		to = "the remote"
	}
	hint := "git zerg gates run runs the quality gates on a feature's staging"
	for _, p := range ps {
		if p.Path != "" {
			hint = "git zerg locks shows who holds what"
		}
	}
	return &Refusal{What: "push to " + to + " refused", Why: count(len(ps), "problem"), Hint: hint, Problems: ps}
}

// count is "1 problem", "2 problems".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// paths counts the paths the problems are about.
func paths(ps []Problem) int {
	seen := map[string]bool{}
	for _, p := range ps {
		seen[p.Path] = true
	}
	return len(seen)
}
