package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/git-zerg/git-zerg/gitstore"
)

// InstallIn installs the hooks where git runs them for every worktree of
// the store's repository (InstallRepo), running git-zerg at exe ("" for
// this executable, a relative path made absolute), and records that they
// are wanted here. What was done is returned with an error too.
func InstallIn(ctx context.Context, s *gitstore.Store, exe string) ([]Change, error) {
	var err error
	if exe == "" {
		exe, err = selfExecutable()
	} else {
		exe, err = filepath.Abs(exe)
	}
	if err != nil {
		return nil, err
	}
	dir, changes, err := installRepo(ctx, gitIn(s), exe)
	// A conflict leaves one hook installed and the user asked for both:
	// the warning about the missing one is wanted from now on.
	if err == nil || errors.Is(err, ErrConflict) {
		if rerr := writeRecord(s, recordInstalled, dir); err == nil {
			err = rerr
		}
	}
	return changes, err
}

// UninstallIn removes the hooks from where git runs them and records that
// they are not wanted here. What was done is returned with an error too.
func UninstallIn(ctx context.Context, s *gitstore.Store) ([]Change, error) {
	loc, err := Locate(ctx, gitIn(s))
	if err != nil {
		return nil, err
	}
	var changes []Change
	if loc.Own {
		changes, err = uninstallOwn(ctx, gitIn(s), loc.Dir)
	} else {
		changes, err = removeHooks(loc.Dir)
	}
	if err != nil {
		return changes, err
	}
	return changes, writeRecord(s, recordUninstalled, "")
}

// Report is `hooks status`: the hooks directory git uses and each hook in
// it. Its JSON is the documented output of `git zerg hooks status --json`.
type Report struct {
	Dir   string       `json:"hooks_dir"`
	Hooks []HookReport `json:"hooks"`
}

// HookReport is one hook of a Report.
type HookReport struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	State State  `json:"state"`
	// Legacy is the kept previous hook, run first and restored by uninstall.
	Legacy string `json:"legacy,omitempty"`
	// Binary is the git-zerg an installed hook runs; BinaryFound says
	// whether it is still there (else the hook searches PATH).
	Binary      string `json:"binary,omitempty"`
	BinaryFound bool   `json:"binary_found"`
	// Chains is the hook of a relative core.hooksPath the hook runs
	// first, relative to the work tree's top.
	Chains string `json:"chains,omitempty"`
	// RunBy names the hook manager (pre-commit) whose hook runs
	// git-zerg's, kept at Path.
	RunBy string `json:"run_by,omitempty"`
	// Displaced is where a hook manager moved git-zerg's hook, which does
	// not run there.
	Displaced string `json:"displaced,omitempty"`
}

// StatusIn reports the hooks where git runs them for the store's work tree.
func StatusIn(ctx context.Context, s *gitstore.Store) (Report, error) {
	dir, err := gitHooksDir(ctx, gitIn(s))
	if err != nil {
		return Report{}, err
	}
	hs, err := Status(dir)
	if err != nil {
		return Report{}, err
	}
	r := Report{Dir: dir, Hooks: []HookReport{}}
	for _, h := range hs {
		hr := HookReport{Name: h.Name, Path: h.Path, State: h.State, Legacy: h.Legacy, Binary: h.Binary,
			Chains: h.Chains, RunBy: h.RunBy, Displaced: h.Displaced}
		if h.Binary != "" {
			fi, err := os.Stat(h.Binary)
			hr.BinaryFound = err == nil && fi.Mode()&0o111 != 0
		}
		r.Hooks = append(r.Hooks, hr)
	}
	return r, nil
}

// Summary says in words what the hook does for a commit or push.
func (h HookReport) Summary() string {
	switch h.State {
	case Installed:
		what := "runs " + h.Binary
		if !h.BinaryFound {
			what = "runs git-zerg from PATH (" + h.Binary + " is gone)"
		}
		if h.Chains != "" {
			what += ", after " + h.Chains
		}
		if h.Legacy != "" {
			what += ", after " + filepath.Base(h.Legacy)
		}
		if h.RunBy != "" {
			what += "; run by the " + h.RunBy + " hook installed over it"
		}
		return what
	case Other:
		if h.Displaced != "" {
			return "not git-zerg's: it moved git-zerg's hook to " + filepath.Base(h.Displaced) + ", where it does not run (install puts it back and runs this hook first)"
		}
		return "not git-zerg's: its checks do not run (install keeps this hook and runs it first)"
	}
	what := "git-zerg's checks do not run"
	if h.Legacy != "" {
		what += " (" + filepath.Base(h.Legacy) + " is kept; install chains it again)"
	}
	return what
}

// Mend puts git-zerg's hooks back, as InstallIn does with exe, where a hook
// manager's own install left git not running them, when they are wanted
// here: husky set a relative core.hooksPath, the relative setting git-zerg's
// directory stands in for changed, or lefthook moved git-zerg's hook aside
// (it keeps the hooks it replaces as <name>.old and does not run them).
// Why says which; "" with nothing done when there was nothing to mend. A
// rush mends before its workers start, so that their commits are checked
// after an `npm install` re-ran the manager; nothing the manager installed
// is lost, since its hook is kept and run first.
func Mend(ctx context.Context, s *gitstore.Store, exe string) (why string, changes []Change, err error) {
	if s == nil || !wanted(s) {
		return "", nil, nil
	}
	loc, err := Locate(ctx, gitIn(s))
	if err != nil {
		return "", nil, err
	}
	switch {
	case loc.Relative:
		why = "core.hooksPath is now relative (" + loc.HooksPath + ")"
	case loc.Own && ownProblem(loc) != "":
		why = fmt.Sprintf("core.hooksPath is now %q, not what git-zerg's hooks stood in for", loc.Under)
	default:
		hs, err := Status(loc.Dir)
		if err != nil {
			return "", nil, err
		}
		for _, h := range hs {
			if h.State == Other && h.Displaced != "" {
				why = "another hook manager moved git-zerg's " + h.Name + " hook to " + filepath.Base(h.Displaced)
				break
			}
		}
	}
	if why == "" {
		return "", nil, nil
	}
	changes, err = InstallIn(ctx, s, exe)
	return why, changes, err
}
