package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/lazy"
)

// Add gives worker n a worktree on branch zerg/<f>/worker-<n> at start (the
// current staging commit). An existing worktree of that worker is reused
// and its branch reset to start, but only when it is clean and everything
// it holds is already in staging (or in start); otherwise Add returns an
// *Error (ErrDirty, ErrUnmerged) and changes nothing. A worker branch left
// without a worktree is checked by the same rule.
//
// Stale worktree entries are pruned first. Files named by the main work
// tree's .worktreeinclude are copied in when missing (see copyIncluded);
// when some could not be copied safely, because a symlink committed in the
// worktree is in their way, Add returns the worker together with an
// *IncludeError (ErrUnsafePath) and does not run Setup. Setup runs in a newly
// created worktree; when it fails, Add returns the worker together with a
// *SetupError.
//
// Add, Remove and StagingWorktree may be called from several goroutines:
// their git work is serialized within the process (copying and Setup are
// not). Separate processes adding worktrees to one repository at the same
// moment can still trip over git's own race.
func (m *Manager) Add(ctx context.Context, n int, start string) (*Worker, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("worktree: worker number %d", n)
	}
	w, list, created, err := m.add(ctx, n, start)
	if err != nil {
		return nil, err
	}
	if m.HooksPath != "" {
		// Set each time: a worker may have changed it in its worktree.
		if _, err := m.at(w.Dir).Run(ctx, "config", "--worktree", "core.hooksPath", m.HooksPath); err != nil {
			return w, err
		}
	}
	if err := m.copyIncluded(ctx, list, w.Dir); err != nil {
		return w, err
	}
	if created && m.Setup != "" {
		if err := m.runSetup(ctx, w); err != nil {
			return w, err
		}
	}
	return w, nil
}

// worktreeMu serializes the changes to the worktree list made in this
// process: git 2.39's `worktree add` reads the other worktrees' admin
// directories and fails on one that a concurrent add is still writing
// ("failed to read .git/worktrees/<name>/commondir").
var worktreeMu sync.Mutex

// worktreeGit runs `git worktree <args>`. Between processes nothing
// serializes git's worktree list: a `git worktree prune` or `remove` (git
// gc runs one) removes .git/worktrees when it empties it, between an add's
// creating that directory and making its entry in it ("could not create
// directory of '.git/worktrees/<name>'"), and an add, a list or a prune
// reads an entry another process's add is still writing ("failed to read
// .git/worktrees/<name>/commondir"). Such a failure leaves nothing behind
// (a failed add removes what it made), so the command is tried again, a
// bounded number of times.
func worktreeGit(ctx context.Context, git *gitcmd.Runner, args ...string) ([]byte, error) {
	var out []byte
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 20 * time.Millisecond)
		}
		if out, err = git.Run(ctx, append([]string{"worktree"}, args...)...); err == nil || !worktreeListRace(err) {
			return out, err
		}
	}
	return out, err
}

// worktreeGit runs `git worktree <args>` in the Manager's repository.
func (m *Manager) worktreeGit(ctx context.Context, args ...string) ([]byte, error) {
	return worktreeGit(ctx, m.Git, args...)
}

// worktreeListRace tells the failures of a `git worktree add` that lost a
// race with another process changing the worktree list.
func worktreeListRace(err error) bool {
	var ge *gitcmd.Error
	if !errors.As(err, &ge) || !strings.Contains(ge.Stderr, "/worktrees/") {
		return false
	}
	return strings.Contains(ge.Stderr, "No such file or directory") || strings.Contains(ge.Stderr, "failed to read")
}

var branchLockExists = &lazy.Value[*regexp.Regexp]{Build: func() *regexp.Regexp { return regexp.MustCompile(`Unable to create '([^']+\.lock)': File exists`) }} // compiled on first use, not at every start

// dropStaleBranchLock removes the lock file of a worker branch that a git
// killed with its rush (kill -9) left behind, when err says it is in the
// way. Only a rush moves its workers' branches, and one rush of a feature
// runs at a time on a host (its marker says so), so a lock on one of them
// that the running rush did not take is a dead process's.
func (m *Manager) dropStaleBranchLock(err error, ref string) bool {
	match := branchLockExists.Get().FindStringSubmatch(err.Error())
	if match == nil || !strings.HasSuffix(filepath.ToSlash(match[1]), "/"+ref+".lock") {
		return false
	}
	return os.Remove(match[1]) == nil
}

// DropStaleLocks removes the index and HEAD lock files that a git killed
// with its rush (kill -9 in the middle of `add -A` or `reset`) left in
// worker w's worktree, so the next rush can save and reset it. Only locks
// older than before are taken: the caller holds the feature's rush marker
// from then on, so an older lock belongs to a process of a dead rush, and
// a newer one (a person's `git status` in that worktree) is left alone.
// It returns the files removed.
func (m *Manager) DropStaleLocks(w Worker, before time.Time) []string {
	gitdir := filepath.Join(w.Dir, ".git")
	if b, err := os.ReadFile(gitdir); err == nil {
		// A linked worktree's .git is a file naming its private directory.
		d, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
		if !ok {
			return nil
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(w.Dir, d)
		}
		gitdir = d
	}
	var removed []string
	for _, name := range []string{"index.lock", "HEAD.lock"} {
		p := filepath.Join(gitdir, name)
		if fi, err := os.Stat(p); err == nil && fi.ModTime().Before(before) && os.Remove(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed
}

// add does Add's git work: find or create the worktree, check it, reset it.
func (m *Manager) add(ctx context.Context, n int, start string) (*Worker, []entry, bool, error) {
	worktreeMu.Lock()
	defer worktreeMu.Unlock()
	if _, err := m.worktreeGit(ctx, "prune"); err != nil {
		return nil, nil, false, err
	}
	branch := workerBranch(m.Feature, n)
	ref := "refs/heads/" + branch
	c, err := m.resolve(ctx, start, m.stagingRef(), ref)
	if err != nil {
		return nil, nil, false, err
	}
	startC, stagingC, branchC := c[0], c[1], c[2]
	if startC == "" {
		return nil, nil, false, fmt.Errorf("worker start %q: %w", start, ErrBadRevision)
	}
	list, err := m.entries(ctx)
	if err != nil {
		return nil, nil, false, err
	}
	root, err := m.root(list)
	if err != nil {
		return nil, nil, false, err
	}
	w := &Worker{N: n, Name: "worker-" + strconv.Itoa(n), Branch: branch,
		Dir: filepath.Join(root, "worker-"+strconv.Itoa(n)), Head: startC}

	created := false
	e := find(list, ref, w.Dir)
	if e != nil && e.interrupted() && !samePath(e.dir, list[0].dir) {
		if err := m.removeInterrupted(ctx, e.dir); err != nil {
			return nil, nil, false, err
		}
		e = nil
	}
	if e, err = m.repairFound(ctx, w, e, list); err != nil {
		return nil, nil, false, err
	}
	if e != nil {
		if samePath(e.dir, list[0].dir) {
			return nil, nil, false, fmt.Errorf("worktree: %s is the main worktree", e.dir)
		}
		w.Dir = e.dir
		paths, err := m.changes(ctx, e.dir, true)
		if err != nil {
			return nil, nil, false, err
		}
		if len(paths) > 0 {
			return nil, nil, false, &Error{Dir: e.dir, Branch: branch, Err: ErrDirty, Paths: paths}
		}
		k, err := m.unmerged(ctx, []string{e.head, branchC}, []string{stagingC, startC})
		if err != nil {
			return nil, nil, false, err
		}
		if k > 0 {
			return nil, nil, false, &Error{Dir: e.dir, Branch: branch, Err: ErrUnmerged, Commits: k}
		}
		if e.branch != ref || e.head != startC {
			if _, err := m.at(e.dir).Run(ctx, "checkout", "-q", "-B", branch, startC); err != nil {
				if !m.dropStaleBranchLock(err, ref) {
					return nil, nil, false, err
				}
				if _, err := m.at(e.dir).Run(ctx, "checkout", "-q", "-B", branch, startC); err != nil {
					return nil, nil, false, err
				}
			}
		}
	} else {
		if err := occupied(w.Dir, branch); err != nil {
			return nil, nil, false, err
		}
		if branchC != "" {
			k, err := m.unmerged(ctx, []string{branchC}, []string{stagingC, startC})
			if err != nil {
				return nil, nil, false, err
			}
			if k > 0 {
				return nil, nil, false, &Error{Branch: branch, Err: ErrUnmerged, Commits: k}
			}
		}
		if err := os.MkdirAll(filepath.Dir(w.Dir), 0o755); err != nil {
			return nil, nil, false, err
		}
		if _, err := m.worktreeGit(ctx, "add", "-q", "-B", branch, w.Dir, startC); err != nil {
			if !m.dropStaleBranchLock(err, ref) {
				return nil, nil, false, err
			}
			// A half-made worktree of the failed add goes with prune.
			m.worktreeGit(ctx, "prune")
			os.RemoveAll(w.Dir)
			if _, err := m.worktreeGit(ctx, "add", "-q", "-B", branch, w.Dir, startC); err != nil {
				return nil, nil, false, err
			}
		}
		created = true
	}
	return w, list, created, nil
}

func (m *Manager) runSetup(ctx context.Context, w *Worker) error {
	cmd := exec.CommandContext(ctx, "sh", "-c", m.Setup)
	cmd.Dir = w.Dir
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !slices.Contains(m.SetupUnset, name) {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env,
		"ZERG_FEATURE="+m.Feature,
		"ZERG_WORKTREE="+w.Dir,
		"ZERG_BRANCH="+w.Branch,
		"ZERG_PORT_BASE="+strconv.Itoa(PortBase(w.N)),
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return &SetupError{Dir: w.Dir, Command: m.Setup, Output: string(out), Err: err}
	}
	return nil
}

// Remove deletes worker w's worktree and branch. Unless force, it refuses
// with an *Error when the worktree has uncommitted changes (ErrDirty) or
// the branch or worktree HEAD has commits staging lacks (ErrUnmerged; with
// no staging branch nothing counts as merged). The worktree and branch are
// found from w.N; a w.Branch that is not worker w.N of this feature is an
// error.
func (m *Manager) Remove(ctx context.Context, w Worker, force bool) error {
	if err := m.check(); err != nil {
		return err
	}
	branch := workerBranch(m.Feature, w.N)
	if w.Branch != "" && w.Branch != branch {
		return fmt.Errorf("worktree: %s is not worker %d of feature %s", w.Branch, w.N, m.Feature)
	}
	ref := "refs/heads/" + branch
	worktreeMu.Lock()
	defer worktreeMu.Unlock()
	if _, err := m.worktreeGit(ctx, "prune"); err != nil {
		return err
	}
	list, err := m.entries(ctx)
	if err != nil {
		return err
	}
	e := find(list, ref, w.Dir)
	if e != nil && len(list) > 0 && samePath(e.dir, list[0].dir) {
		return fmt.Errorf("worktree: %s is the main worktree", e.dir)
	}
	c, err := m.resolve(ctx, ref, m.stagingRef())
	if err != nil {
		return err
	}
	branchC, stagingC := c[0], c[1]
	if e != nil && e.interrupted() {
		force = true // nothing in it: see entry.interrupted
	}
	if !force {
		tips := []string{branchC}
		if e != nil {
			paths, err := m.changes(ctx, e.dir, true)
			if err != nil {
				return err
			}
			if len(paths) > 0 {
				return &Error{Dir: e.dir, Branch: branch, Err: ErrDirty, Paths: paths}
			}
			tips = append(tips, e.head)
		}
		k, err := m.unmerged(ctx, tips, []string{stagingC})
		if err != nil {
			return err
		}
		if k > 0 {
			dir := ""
			if e != nil {
				dir = e.dir
			}
			return &Error{Dir: dir, Branch: branch, Err: ErrUnmerged, Commits: k}
		}
	}
	switch {
	case e != nil && e.interrupted():
		if err := m.removeInterrupted(ctx, e.dir); err != nil {
			return err
		}
	case e != nil:
		args := []string{"remove"}
		if force {
			args = append(args, "--force")
		}
		if _, err := m.worktreeGit(ctx, append(args, e.dir)...); err != nil {
			return err
		}
	}
	if branchC != "" {
		if _, err := m.Git.Run(ctx, "branch", "-D", branch); err != nil {
			return err
		}
	}
	return nil
}

// StagingWorktree returns a detached worktree at the staging tip, for the
// quality gates: <Root>/staging, created when missing, else moved to the tip
// with `git checkout --detach`. Changes to tracked files there are refused
// (ErrDirty); untracked files that gates leave behind are kept, and git
// itself refuses a checkout that would overwrite one.
func (m *Manager) StagingWorktree(ctx context.Context) (string, error) {
	if err := m.check(); err != nil {
		return "", err
	}
	tip, err := m.resolve1(ctx, m.stagingRef())
	if err != nil {
		return "", err
	}
	if tip == "" {
		return "", ErrNoStaging
	}
	worktreeMu.Lock()
	defer worktreeMu.Unlock()
	if _, err := m.worktreeGit(ctx, "prune"); err != nil {
		return "", err
	}
	list, err := m.entries(ctx)
	if err != nil {
		return "", err
	}
	root, err := m.root(list)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "staging")
	if e := find(list, "", dir); e != nil {
		if len(list) > 0 && samePath(e.dir, list[0].dir) {
			return "", fmt.Errorf("worktree: %s is the main worktree", e.dir)
		}
		paths, err := m.changes(ctx, e.dir, false)
		if err != nil {
			return "", err
		}
		if len(paths) > 0 {
			return "", &Error{Dir: e.dir, Err: ErrDirty, Paths: paths}
		}
		if !e.detached || e.head != tip {
			if _, err := m.at(e.dir).Run(ctx, "checkout", "-q", "--detach", tip); err != nil {
				return "", err
			}
		}
		return e.dir, nil
	}
	if err := occupied(dir, ""); err != nil {
		return "", err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	if _, err := m.worktreeGit(ctx, "add", "-q", "--detach", dir, tip); err != nil {
		return "", err
	}
	return dir, nil
}
