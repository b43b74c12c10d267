// Package setup is what `git zerg init` and `hooks` do to a repository
// before any feature is planned: the checks of git and its worktrees, the
// configuration's template written, the hooks installed, and the run of a
// hook git starts.
package setup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/hooks"
	"github.com/git-zerg/git-zerg/worktree"
)

// MinGit is the oldest git git-zerg works with: `merge-tree --write-tree`,
// the level merge's conflict check, came in 2.38.
var MinGit = [2]int{2, 38}

// Check checks, before init writes anything, what git-zerg needs of
// the repository: a work tree, git MinGit or later, working `git worktree`
// and a readable hooks setting. It returns git's version line.
func Check(ctx context.Context, s *gitstore.Store) (string, error) {
	if s.Top == "" {
		return "", engine.UsageError("init needs a work tree (this is a bare repository)")
	}
	git := engine.Git(s)
	v, err := git.Line(ctx, "version")
	if err != nil {
		return "", err
	}
	major, minor, ok := GitVersion(v)
	if !ok {
		return "", engine.FailedError("cannot tell the version of git", v)
	}
	if major < MinGit[0] || major == MinGit[0] && minor < MinGit[1] {
		return "", &engine.Error{Kind: engine.Failed, What: fmt.Sprintf("git %d.%d or later is needed", MinGit[0], MinGit[1]),
			Why: strings.TrimPrefix(v, "git version "), Hint: "upgrade git, then run git zerg init again"}
	}
	if err := worktree.Supported(ctx, git); err != nil {
		return "", engine.FailedError("git worktree does not work here", err.Error())
	}
	// A hooks setting git cannot read fails init before it writes
	// anything, not halfway through.
	if _, err := hooks.Locate(ctx, git); err != nil {
		return "", err
	}
	if err := CheckUnlinked("init", s.Top, configPath); err != nil {
		return "", err
	}
	return v, nil
}

// configPath is where init writes the configuration, relative to the work
// tree's top.
const configPath = ".zerg/config.toml"

// CheckUnlinked refuses what command would write under top through a
// symbolic link, before it writes anything. Any link is refused, one that
// stays inside the repository too: a link is committed content, so anyone
// who can commit (a worker, another clone) chooses where it leads (~/.claude
// makes git-zerg's hooks run in every Claude Code session of the user), and
// a link inside the repository can be aimed elsewhere by the next commit, or
// at a file of the user's that the write would replace.
func CheckUnlinked(command, top string, names ...string) error {
	for _, n := range names {
		if err := worktree.CheckWrite(top, n); err != nil {
			var ue *worktree.UnsafePathError
			if !errors.As(err, &ue) {
				return err
			}
			why := ue.Link + " is a symbolic link"
			if to, err := os.Readlink(filepath.Join(top, filepath.FromSlash(ue.Link))); err == nil {
				why += " to " + to
			}
			if ue.Link != ue.Path {
				why += ", on the way to " + ue.Path
			}
			return &engine.Error{Kind: engine.Refused, What: command + " refused: nothing written through a symbolic link", Why: why,
				Hint: "replace " + ue.Link + " with a file or directory of its own (or remove it), then run it again", Err: err}
		}
	}
	return nil
}

// GitVersion parses "git version 2.39.5 (Apple Git-143)".
func GitVersion(v string) (major, minor int, ok bool) {
	f := strings.Fields(v)
	if len(f) < 3 {
		return 0, 0, false
	}
	parts := strings.SplitN(f[2], ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	var err1, err2 error
	major, err1 = strconv.Atoi(parts[0])
	minor, err2 = strconv.Atoi(parts[1])
	return major, minor, err1 == nil && err2 == nil
}

// WriteConfig writes .zerg/config.toml under top from the commented
// template, unless there is one already (wrote false): init never replaces
// a configuration. Check has refused a symbolic link on the way; the
// write goes through an os.Root all the same, so that a link put there
// since cannot lead it out of the work tree.
func WriteConfig(top string) (wrote bool, err error) {
	r, err := os.OpenRoot(top)
	if err != nil {
		return false, err
	}
	defer r.Close()
	name := filepath.FromSlash(configPath)
	switch _, err := r.Lstat(name); {
	case err == nil:
		return false, nil
	case !errors.Is(err, fs.ErrNotExist):
		return false, err
	}
	if err := r.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return false, err
	}
	f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return false, err
	}
	if _, err := f.Write([]byte(config.Template)); err != nil {
		f.Close()
		return false, err
	}
	return true, f.Close()
}

// ChangeHooks installs the hooks, running git-zerg at binary ("" for this
// executable), or uninstalls them. The changes made come back even when
// it fails part way.
func ChangeHooks(ctx context.Context, s *gitstore.Store, uninstall bool, binary string) ([]hooks.Change, error) {
	var changes []hooks.Change
	var err error
	if uninstall {
		changes, err = hooks.UninstallIn(ctx, s)
	} else {
		changes, err = hooks.InstallIn(ctx, s, binary)
	}
	return changes, hooksError(err)
}

// hooksError refuses an install over a hook that is not git-zerg's.
func hooksError(err error) error {
	if errors.Is(err, hooks.ErrConflict) {
		return &engine.Error{Kind: engine.Refused, What: "hooks install refused", Why: err.Error(),
			Hint: "look at both files, keep one (or merge them), then install again", Err: err}
	}
	return err
}

// HookRun is a run of a git hook in dir: the user is who commits or pushes,
// unless a worker's branch says otherwise.
func HookRun(ctx context.Context, dir string, open func() (*gitstore.Store, error), now time.Time) hooks.Run {
	return hooks.Run{Dir: dir, Open: open, Now: now.UTC(), Owner: func() string {
		s, _ := open()
		return (&engine.Engine{Ctx: ctx, Store: s}).UserIdentity()
	}, WorkerOwner: func(worker string) string {
		s, err := open()
		if err != nil {
			return ""
		}
		return engine.Owner(s.Host(), worker)
	}}
}

// HookGateSet is the gate set of the configuration the pre-push hook runs
// under: a pass recorded for another set does not let staging out. An
// unreadable configuration matches no record, so the push is refused
// rather than let through on gates nobody can name.
func HookGateSet(open func() (*gitstore.Store, error)) func() string {
	return func() string {
		s, err := open()
		if err != nil {
			return ""
		}
		cfg, err := engine.LoadConfig(s)
		if err != nil {
			return ""
		}
		return hooks.GateSet(cfg.Gates)
	}
}
