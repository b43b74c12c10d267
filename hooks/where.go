package hooks

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// Location is where git runs hooks from, seen from one worktree.
type Location struct {
	// Dir is the hooks directory git uses here, absolute.
	Dir string
	// HooksPath is core.hooksPath as git reads it here, "" when it is not
	// set.
	HooksPath string
	// Relative: HooksPath is resolved against each worktree's top, so
	// linked worktrees do not share Dir.
	Relative bool
	// Default is <common git dir>/hooks, where every worktree looks when
	// core.hooksPath is not set.
	Default string
	// Common is the common git dir, Top the top of this work tree ("" in a
	// git dir).
	Common, Top string
	// Own: this worktree's own setting (extensions.worktreeConfig) points
	// git at git-zerg's hooks directory, which stands in for Under.
	Own bool
	// Under is core.hooksPath as it is set for every worktree (the
	// repository's, user's or system's configuration), which Own overrides
	// here: "" when not set.
	Under string
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
	loc.Common = filepath.Clean(lines[1])
	loc.Default = filepath.Join(loc.Common, "hooks")
	// Each value with its scope: the last one is what git uses, and the
	// last one outside this worktree's own file is what it would use
	// without git-zerg's setting there.
	scoped, err := git.Fields(ctx, '\n', "config", "--show-scope", "--show-origin", "--get-all", "core.hooksPath")
	if err != nil && gitcmd.ExitCode(err) != 1 { // 1: not set
		return loc, err
	}
	for _, l := range scoped {
		scope, rest, _ := strings.Cut(l, "\t")
		_, v, _ := strings.Cut(rest, "\t")
		loc.HooksPath = v
		if scope == "worktree" {
			loc.Own = filepath.Clean(v) == ownDir(loc.Common)
		} else {
			loc.Under, loc.Own = v, false
		}
	}
	loc.Relative = relativeHooksPath(loc.HooksPath)
	if loc.Own || relativeHooksPath(loc.Under) {
		top, err := git.Line(ctx, "rev-parse", "--show-toplevel")
		if err != nil {
			return loc, err
		}
		loc.Top = filepath.Clean(top)
	}
	return loc, nil
}

// relativeHooksPath: git expands "~/" and "%(prefix)/" in core.hooksPath,
// so those are absolute too.
func relativeHooksPath(v string) bool {
	return v != "" && !filepath.IsAbs(v) && !strings.HasPrefix(v, "~") && !strings.HasPrefix(v, "%(prefix)/")
}

// installRepo installs the hooks where git runs them for every worktree of
// the repository the runner is at, and returns that directory.
//
// With core.hooksPath unset or absolute that is one directory, shared by all
// worktrees, and Install does the work. A relative core.hooksPath (husky's
// .husky/_, a team's .githooks) is resolved in each worktree on its own:
// that directory is either the team's versioned hooks (writing ours there
// changes tracked files, in the main checkout and in every worker commit),
// or one a hook manager rewrites at each of its installs, or absent from the
// worktrees a rush makes later, so no set of files there can cover the
// worktrees that matter most. Then git-zerg's own directory stands in for
// it, set for this worktree alone (installOwn), and each worker worktree a
// rush makes gets the same setting (WorktreeHooksPath): the relative
// directory's hooks still run, from each worktree's own top, as git would
// run them, and a hook manager that sets core.hooksPath again at its next
// install changes the repository's setting, which this worktree's own one
// overrides.
func installRepo(ctx context.Context, git *gitcmd.Runner, exe string) (string, []Change, error) {
	loc, err := Locate(ctx, git)
	if err != nil {
		return "", nil, err
	}
	if loc.Own || relativeHooksPath(loc.Under) {
		return installOwn(ctx, git, loc, exe)
	}
	cs, err := writeHooks(loc.Dir, exe)
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
		return fmt.Sprintf("git-zerg's hooks do not run here: core.hooksPath is relative (%s), and git-zerg's hooks directory does not stand in for it in this worktree; run git zerg hooks install", loc.HooksPath), nil
	}
	if loc.Own {
		if w := ownProblem(loc); w != "" {
			return w, nil
		}
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
