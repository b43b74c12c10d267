// Package hooks installs git-zerg's pre-commit and pre-push hooks and runs
// the checks they call: a commit may only stage what its author may change,
// and a push may carry neither work under another owner's lock nor an
// ungated staging branch.
//
// The hooks go into the directory git really runs hooks from
// (`git rev-parse --git-path hooks`: core.hooksPath when it is set, else the
// common dir's hooks/, shared by every linked worktree). A relative
// core.hooksPath is resolved in each worktree on its own, so one directory
// cannot serve them all: git-zerg's own directory stands in for it in the
// worktrees that matter (own.go). The warning notices any later change of
// core.hooksPath that leaves git looking where the hooks are not. A hook
// that was already there is kept as <name>.zerg-legacy, runs first, and is
// put back, byte for byte and with its mode, by Uninstall; hook managers
// that install after git-zerg are recognised where they keep git-zerg's
// hook (see status).
package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// Names are the hooks git-zerg installs.
var Names = []string{"pre-commit", "pre-push"}

// legacySuffix names the hook that was in place before install: it keeps
// running, first, and Uninstall restores it. The pre-commit framework uses
// ".legacy" for the same purpose; a suffix of our own keeps the two from
// overwriting each other's saved hook when both are installed.
const legacySuffix = ".zerg-legacy"

// marker identifies a hook script written by git-zerg.
const marker = "# git-zerg hook, format 1"

// ErrConflict: a hook that is not git-zerg's sits where git-zerg's was and a
// saved legacy hook is still there too; installing would lose one of them.
var ErrConflict = errors.New("conflicting hooks")

// State is what a hook file is.
type State string

const (
	Absent    State = "absent"    // no hook: git runs nothing
	Installed State = "installed" // git-zerg's hook
	Other     State = "other"     // somebody else's hook: git-zerg's checks do not run
)

// Hook is the state of one hook.
type Hook struct {
	Name  string
	Path  string
	State State
	// Legacy is the path of the kept previous hook, "" when there is none.
	Legacy string
	// Binary is the git-zerg path recorded in an installed hook.
	Binary string
	// Chains is the hook of a relative core.hooksPath an installed hook
	// runs first (in git-zerg's own directory), "" when none.
	Chains string
	// RunBy names the hook manager whose hook, installed over git-zerg's,
	// runs git-zerg's from where it kept it (Path): "" when git runs
	// git-zerg's hook itself.
	RunBy string
	// Displaced is where a hook manager that does not run the hooks it
	// replaces (lefthook) moved git-zerg's hook: it does not run there.
	Displaced string
}

// Change is what Install or Uninstall did to one hook.
type Change struct {
	Name string
	Path string
	// Action: "installed", "updated", "unchanged", "removed", "restored",
	// "absent" (uninstall found nothing of ours), "kept" (uninstall left a
	// hook that is not ours alone).
	Action string
	// Legacy is the kept (install) or restored (uninstall) previous hook.
	Legacy string
	// Chains is the hook of a relative core.hooksPath the installed hook
	// runs first.
	Chains string
}

func (c Change) String() string {
	switch c.Action {
	case "installed":
		if c.Chains != "" {
			return fmt.Sprintf("installed %s in %s (it runs %s first, as core.hooksPath says, in this worktree and in worker worktrees)", c.Name, filepath.Dir(c.Path), c.Chains)
		}
		if c.Legacy != "" {
			return fmt.Sprintf("installed %s in %s (the previous hook is kept as %s and runs first)", c.Name, filepath.Dir(c.Path), filepath.Base(c.Legacy))
		}
		return fmt.Sprintf("installed %s in %s", c.Name, filepath.Dir(c.Path))
	case "updated":
		return fmt.Sprintf("updated %s in %s", c.Name, filepath.Dir(c.Path))
	case "unchanged":
		return fmt.Sprintf("%s already installed in %s", c.Name, filepath.Dir(c.Path))
	case "removed":
		return fmt.Sprintf("removed %s from %s", c.Name, filepath.Dir(c.Path))
	case "restored":
		return fmt.Sprintf("removed %s from %s and restored the previous hook", c.Name, filepath.Dir(c.Path))
	}
	s := fmt.Sprintf("%s: git-zerg's hook is not installed in %s", c.Name, filepath.Dir(c.Path))
	if c.Action == "kept" {
		s = fmt.Sprintf("%s in %s is not git-zerg's; left alone", c.Name, filepath.Dir(c.Path))
	}
	if c.Legacy != "" {
		s += fmt.Sprintf(" (%s, saved by an earlier install, is left too)", filepath.Base(c.Legacy))
	}
	return s
}

// gitHooksDir returns the absolute hooks directory git uses for the repository
// (work tree or git dir) at dir. A relative core.hooksPath is relative to the
// work tree the hooks run in, so dir should be the top of that work tree;
// installRepo and warning say whether every worktree uses the same one.
func gitHooksDir(ctx context.Context, git *gitcmd.Runner) (string, error) {
	out, err := git.Line(ctx, "rev-parse", "--path-format=absolute", "--git-path", "hooks")
	if err != nil {
		return "", err
	}
	return filepath.Clean(out), nil
}

// selfExecutable returns the path hooks should run git-zerg by. git starts us
// as "git-zerg" found on its PATH, so that name looked up on PATH is kept
// when it resolves (a symlink such as a package manager's stays valid across
// upgrades); otherwise os.Executable.
func selfExecutable() (string, error) {
	arg0 := os.Args[0]
	if strings.ContainsRune(arg0, filepath.Separator) {
		if p, err := filepath.Abs(arg0); err == nil && isExecutable(p) {
			return p, nil
		}
	} else if p, err := exec.LookPath(arg0); err == nil && filepath.Base(p) == "git-zerg" {
		if abs, err := filepath.Abs(p); err == nil {
			return abs, nil
		}
	}
	return os.Executable()
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Status reports the state of each hook in dir.
func Status(dir string) ([]Hook, error) {
	var out []Hook
	for _, name := range Names {
		h, err := status(dir, name)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

func status(dir, name string) (Hook, error) {
	h := Hook{Name: name, Path: filepath.Join(dir, name), State: Absent}
	if _, err := os.Lstat(h.Path + legacySuffix); err == nil {
		h.Legacy = h.Path + legacySuffix
	} else if !errors.Is(err, fs.ErrNotExist) {
		return h, err
	}
	b, err := readHook(h.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return h, nil
	case errors.Is(err, errNotFile):
		h.State = Other
		return h, nil
	case err != nil:
		return h, err
	}
	if bytes.Contains(b, []byte(marker)) {
		h.State = Installed
		h.Binary = recordedBinary(b)
		if u := recordedUnder(b); u != "" {
			h.Chains = u + "/" + name
		}
		return h, nil
	}
	h.State = Other
	// A hook manager installed after git-zerg: the pre-commit framework
	// keeps the hook it replaces as <name>.legacy and runs it (so
	// git-zerg's checks still run); lefthook keeps it as <name>.old and
	// does not.
	for _, kept := range []struct{ suffix, by string }{{".legacy", preCommitFramework}, {".old", ""}} {
		k, err := readHook(h.Path + kept.suffix)
		if err != nil || !bytes.Contains(k, []byte(marker)) {
			continue
		}
		if kept.by != "" && bytes.Contains(b, []byte(preCommitSignature)) {
			h.State, h.RunBy, h.Path, h.Binary = Installed, kept.by, h.Path+kept.suffix, recordedBinary(k)
			return h, nil
		}
		h.Displaced = h.Path + kept.suffix
	}
	return h, nil
}

// The pre-commit framework's hook says so in its second line.
const (
	preCommitFramework = "pre-commit"
	preCommitSignature = "# File generated by pre-commit: https://pre-commit.com"
)

var errNotFile = errors.New("not a regular file")

// readHook reads a hook file that is a regular file (git runs links too,
// but git-zerg writes none and reads no link's target as its own).
func readHook(p string) ([]byte, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errNotFile
	}
	return os.ReadFile(p)
}

// writeHooks writes git-zerg's hooks into dir (created if missing), each
// running git-zerg at exe, or from PATH when exe is gone. A hook that is not
// git-zerg's is renamed to <name>.zerg-legacy and run first. Installing again
// changes nothing; with another exe, it rewrites only the path.
func writeHooks(dir, exe string) ([]Change, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []Change
	for _, name := range Names {
		c, err := installScript(dir, name, hookScript(name, exe))
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

// installScript puts want in place as dir's hook name, keeping a hook of
// somebody else's that is there as <name>.zerg-legacy.
func installScript(dir, name string, want []byte) (Change, error) {
	h, err := status(dir, name)
	if err != nil {
		return Change{}, err
	}
	if h.Displaced != "" {
		// Left by a hook manager that moved it aside; installing again
		// makes a new one where git runs it.
		if err := os.Remove(h.Displaced); err != nil {
			return Change{}, err
		}
	}
	if h.State == Other && h.Legacy != "" && sameFile(h.Path, h.Legacy) {
		// The hook manager git-zerg keeps and runs first installed itself
		// again over git-zerg's hook: the same hook is kept already.
		if err := os.Remove(h.Path); err != nil {
			return Change{}, err
		}
		h.State = Absent
	}
	c := Change{Name: name, Path: h.Path, Legacy: h.Legacy}
	switch h.State {
	case Installed:
		old, err := os.ReadFile(h.Path)
		if err != nil {
			return c, err
		}
		if bytes.Equal(old, want) {
			c.Action = "unchanged"
			return c, nil
		}
		c.Action = "updated"
		return c, writeScript(h.Path, want)
	case Other:
		if h.Legacy != "" {
			return c, fmt.Errorf("%s is not git-zerg's hook and %s already exists: %w", h.Path, filepath.Base(h.Legacy), ErrConflict)
		}
		// Write the new script first, so the window without any hook is one
		// rename wide.
		tmp, err := writeTemp(dir, want)
		if err != nil {
			return c, err
		}
		c.Legacy = h.Path + legacySuffix
		if err := os.Rename(h.Path, c.Legacy); err != nil {
			os.Remove(tmp)
			return c, err
		}
		if err := os.Rename(tmp, h.Path); err != nil {
			os.Remove(tmp)
			os.Rename(c.Legacy, h.Path)
			return c, err
		}
		c.Action = "installed"
		return c, nil
	}
	// Absent. A legacy hook without ours next to it was saved by an earlier
	// install whose hook was deleted by hand: it is still the user's hook,
	// so it is chained again and restored by Uninstall.
	c.Action = "installed"
	return c, writeScript(h.Path, want)
}

// removeHooks removes git-zerg's hooks from dir and puts back what was there
// before, exactly. A hook that is not git-zerg's is left alone.
func removeHooks(dir string) ([]Change, error) {
	var out []Change
	for _, name := range Names {
		h, err := status(dir, name)
		if err != nil {
			return out, err
		}
		c := Change{Name: name, Path: h.Path}
		switch h.State {
		case Installed:
			if h.Legacy != "" {
				// One rename replaces ours with the original: same bytes,
				// same mode, same inode.
				if err := os.Rename(h.Legacy, h.Path); err != nil {
					return out, err
				}
				c.Action, c.Legacy = "restored", h.Path
			} else {
				if err := os.Remove(h.Path); err != nil {
					return out, err
				}
				c.Action = "removed"
			}
		case Other:
			c.Action, c.Legacy = "kept", h.Legacy
		default:
			c.Action, c.Legacy = "absent", h.Legacy
		}
		out = append(out, c)
	}
	return out, nil
}

func writeTemp(dir string, data []byte) (string, error) {
	f, err := os.CreateTemp(dir, ".git-zerg-hook-*")
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o755)
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

func writeScript(path string, data []byte) error {
	tmp, err := writeTemp(filepath.Dir(path), data)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func sameFile(a, b string) bool {
	x, err := os.ReadFile(a)
	if err != nil {
		return false
	}
	y, err := os.ReadFile(b)
	return err == nil && bytes.Equal(x, y)
}
