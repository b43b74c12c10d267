package hooks

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// errRelativeHooksPath: core.hooksPath is a relative path, so every worktree
// runs the hooks found under its own top, and no install can cover them all.
var errRelativeHooksPath = errors.New("core.hooksPath is relative")

// Location is where git runs hooks from, seen from one worktree.
type Location struct {
	// Dir is the hooks directory git uses here, absolute.
	Dir string
	// HooksPath is core.hooksPath as configured, "" when it is not set.
	HooksPath string
	// Relative: HooksPath is resolved against each worktree's top, so
	// linked worktrees do not share Dir.
	Relative bool
	// Default is <common git dir>/hooks, where every worktree looks when
	// core.hooksPath is not set.
	Default string
}

// Locate finds where git runs hooks from in the worktree (or git dir) the
// runner is at: two git processes.
func Locate(ctx context.Context, git *gitcmd.Runner) (Location, error) {
	var loc Location
	lines, err := git.Fields(ctx, '\n', "rev-parse", "--path-format=absolute", "--git-path", "hooks", "--git-common-dir")
	if err != nil {
		return loc, err
	}
	if len(lines) != 2 {
		return loc, fmt.Errorf("git rev-parse: %d lines, want 2", len(lines))
	}
	loc.Dir = filepath.Clean(lines[0])
	loc.Default = filepath.Join(filepath.Clean(lines[1]), "hooks")
	v, err := git.Line(ctx, "config", "--get", "core.hooksPath")
	if err != nil && gitcmd.ExitCode(err) != 1 { // 1: not set
		return loc, err
	}
	loc.HooksPath = v
	loc.Relative = relativeHooksPath(v)
	return loc, nil
}

// relativeHooksPath: git expands "~/" and "%(prefix)/" in core.hooksPath,
// so those are absolute too.
func relativeHooksPath(v string) bool {
	return v != "" && !filepath.IsAbs(v) && !strings.HasPrefix(v, "~") && !strings.HasPrefix(v, "%(prefix)/")
}

// HooksPathError refuses an install under a relative core.hooksPath.
type HooksPathError struct {
	HooksPath string // the configured value
	Dir       string // where it leads from this worktree
}

func (e *HooksPathError) Error() string {
	return fmt.Sprintf("core.hooksPath is relative (%s): git looks for hooks under each worktree's own top, so hooks installed in %s would not run in worker worktrees", e.HooksPath, e.Dir)
}

func (e *HooksPathError) Unwrap() error { return errRelativeHooksPath }

// Hint is the command that shares this worktree's hooks directory with
// every worktree.
func (e *HooksPathError) Hint() string {
	return "make it absolute, then install again: git config core.hooksPath " + shellQuote(e.Dir)
}

// installRepo installs the hooks where git runs them for every worktree of
// the repository the runner is at, and returns that directory.
//
// With core.hooksPath unset or absolute that is one directory, shared by all
// worktrees, and Install does the work. With a relative core.hooksPath, git
// looks under each worktree's own top, and installRepo refuses with a
// *HooksPathError (ErrRelativeHooksPath) rather than pretend to cover them:
// that directory is either the team's versioned hooks (writing ours there
// changes tracked files, in the main checkout and in every worker commit) or
// absent from the worktrees a rush makes later, so no set of files can cover
// the worktrees that matter most. Rewriting the setting would change which
// hooks the user's own worktrees run, so it is left to the user: the hint
// names the absolute value that keeps this checkout's hooks as they are.
func installRepo(ctx context.Context, git *gitcmd.Runner, exe string) (string, []Change, error) {
	loc, err := Locate(ctx, git)
	if err != nil {
		return "", nil, err
	}
	if loc.Relative {
		return loc.Dir, nil, &HooksPathError{HooksPath: loc.HooksPath, Dir: loc.Dir}
	}
	cs, err := Install(loc.Dir, exe)
	return loc.Dir, cs, err
}

// warning returns a one-line warning when git-zerg's hooks would not run
// for a commit or push made here or in a linked worktree, "" when they
// would: core.hooksPath is relative, or it (or its absence) points git at a
// directory without both hooks, say because it was set after the install.
// It costs two git processes and a few file reads, for commands to run
// first thing.
func warning(ctx context.Context, git *gitcmd.Runner) (string, error) {
	loc, err := Locate(ctx, git)
	if err != nil {
		return "", err
	}
	if loc.Relative {
		e := &HooksPathError{HooksPath: loc.HooksPath, Dir: loc.Dir}
		return fmt.Sprintf("git-zerg's hooks do not run in worker worktrees: core.hooksPath is relative (%s); %s", loc.HooksPath, e.Hint()), nil
	}
	return problemAt(loc)
}

func problemAt(loc Location) (string, error) {
	hs, err := Status(loc.Dir)
	if err != nil {
		return "", err
	}
	var missing []string
	other := ""
	for _, h := range hs {
		if h.State != Installed {
			missing = append(missing, h.Name)
			if h.State == Other && other == "" {
				other = h.Name
			}
		}
	}
	if len(missing) == 0 {
		return "", nil
	}
	what := strings.Join(missing, " and ")
	unchecked := uncheckedOf(missing)
	if other != "" {
		return fmt.Sprintf("%s in %s is not git-zerg's hook: %s not checked; run git zerg hooks install (it keeps that hook and runs it first)",
			other, loc.Dir, unchecked), nil
	}
	// Installed once where git looked before core.hooksPath changed: say
	// so, since that is what makes the loss silent.
	if loc.Dir != loc.Default {
		if old, err := Status(loc.Default); err == nil && installedAny(old) {
			return fmt.Sprintf("git-zerg's hooks are in %s, but core.hooksPath (%s) has git run hooks from %s: %s not checked; run git zerg hooks install",
				loc.Default, loc.HooksPath, loc.Dir, unchecked), nil
		}
	}
	return fmt.Sprintf("git-zerg's %s %s not installed in %s, where git runs hooks: %s not checked; run git zerg hooks install",
		what, isAre(len(missing)), loc.Dir, unchecked), nil
}

func installedAny(hs []Hook) bool {
	for _, h := range hs {
		if h.State == Installed {
			return true
		}
	}
	return false
}

func isAre(n int) string {
	if n == 1 {
		return "hook is"
	}
	return "hooks are"
}

// uncheckedOf says what goes unchecked without the named hooks.
func uncheckedOf(missing []string) string {
	var what []string
	for _, name := range missing {
		if name == "pre-push" {
			what = append(what, "pushes")
		} else {
			what = append(what, "commits")
		}
	}
	return strings.Join(what, " and ") + " are"
}
