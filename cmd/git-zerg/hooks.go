package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/hooks"
	"github.com/git-zerg/git-zerg/printable"
	"github.com/git-zerg/git-zerg/worktree"
)

type hooksOptions struct {
	binary string
}

func hooksCmd(e *env) *cli.Command {
	var o hooksOptions
	return &cli.Command{
		Name:  "hooks",
		Usage: "install, remove or show git-zerg's git hooks",
		Description: "The hooks go where git runs hooks from (core.hooksPath, else the hooks directory\n" +
			"shared by every worktree). A hook already there is kept as <name>.zerg-legacy and\n" +
			"runs first; uninstall puts it back exactly as it was.",
		Subcommands: []*cli.Command{
			{
				Name:  "install",
				Usage: "install the pre-commit and pre-push hooks (again: changes nothing)",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "binary", Usage: "run git-zerg at `PATH` (default: this executable); PATH is searched when it is gone",
						Destination: &o.binary},
				},
				Action: func(c *cli.Context) error {
					if _, err := args(c, 0, 0); err != nil {
						return err
					}
					return runHooksInstall(e, &o)
				},
			},
			{
				Name:  "uninstall",
				Usage: "remove the hooks and restore the ones they replaced",
				Action: func(c *cli.Context) error {
					if _, err := args(c, 0, 0); err != nil {
						return err
					}
					return runHooksUninstall(e)
				},
			},
			{
				Name:  "status",
				Usage: "show which hooks are installed",
				Action: func(c *cli.Context) error {
					if _, err := args(c, 0, 0); err != nil {
						return err
					}
					return runHooksStatus(e)
				},
			},
		},
	}
}

func hookCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:   "hook",
		Usage:  "what the installed git hooks run",
		Hidden: true,
		Subcommands: []*cli.Command{
			{
				Name:  "pre-commit",
				Usage: "refuse staged paths the committer may not change (exit 1)",
				Action: func(c *cli.Context) error {
					if _, err := args(c, 0, -1); err != nil {
						return err
					}
					return runHookPreCommit(e)
				},
			},
			{
				Name:      "pre-push",
				Usage:     "refuse pushes of locked paths or of ungated staging (exit 1); reads git's lines on stdin",
				ArgsUsage: "[REMOTE [URL]]",
				Action: func(c *cli.Context) error {
					a, err := args(c, 0, 2)
					if err != nil {
						return err
					}
					a = append(a, "", "")
					return runHookPrePush(e, a[0], a[1])
				},
			},
		},
	}
}

func initCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "set up git-zerg in this repository",
		Description: "Checks git (2.38 or later) and worktree support, writes .zerg/config.toml when\n" +
			"it is absent, and installs the hooks. Running it again changes nothing.",
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			return runInit(e)
		},
	}
}

// hooksDir opens the repository and finds the hooks directory git uses.
func (e *env) hooksDir() (*gitstore.Store, string, error) {
	s, err := e.Store()
	if err != nil {
		return nil, "", err
	}
	dir, err := hooks.Dir(e.ctx, gitIn(s))
	return s, dir, err
}

func installHooks(e *env, binary string) error {
	s, err := e.Store()
	if err != nil {
		return err
	}
	if binary == "" {
		if binary, err = hooks.Executable(); err != nil {
			return err
		}
	} else if binary, err = filepath.Abs(binary); err != nil {
		return err
	}
	dir, changes, err := hooks.InstallRepo(e.ctx, gitIn(s), binary)
	for _, c := range changes {
		fmt.Fprintln(e.stdout, c)
	}
	// A conflict leaves one hook installed and the user asked for both:
	// the warning about the missing one is wanted from now on.
	if err == nil || errors.Is(err, hooks.ErrConflict) {
		if rerr := writeHooksRecord(s, hooksInstalled, dir); err == nil {
			err = rerr
		}
	}
	if err != nil {
		return hooksInstallError(err)
	}
	return nil
}

func hooksInstallError(err error) error {
	var hp *hooks.HooksPathError
	switch {
	case errors.As(err, &hp):
		return &cliError{code: exitRefused, what: "hooks install refused", why: err.Error(), hint: hp.Hint()}
	case errors.Is(err, hooks.ErrConflict):
		return &cliError{code: exitRefused, what: "hooks install refused", why: err.Error(),
			hint: "look at both files, keep one (or merge them), then install again"}
	}
	return err
}

func runHooksInstall(e *env, o *hooksOptions) error { return installHooks(e, o.binary) }

func runHooksUninstall(e *env) error {
	s, dir, err := e.hooksDir()
	if err != nil {
		return err
	}
	changes, err := hooks.Uninstall(dir)
	for _, c := range changes {
		fmt.Fprintln(e.stdout, c)
	}
	if err != nil {
		return err
	}
	return writeHooksRecord(s, hooksUninstalled, "")
}

type hooksStatusJSON struct {
	Dir   string     `json:"hooks_dir"`
	Hooks []hookJSON `json:"hooks"`
}

type hookJSON struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	State string `json:"state"` // installed | absent | other
	// Legacy is the kept previous hook, run first and restored by uninstall.
	Legacy string `json:"legacy,omitempty"`
	// Binary is the git-zerg an installed hook runs; BinaryFound says
	// whether it is still there (else the hook searches PATH).
	Binary      string `json:"binary,omitempty"`
	BinaryFound bool   `json:"binary_found"`
}

func runHooksStatus(e *env) error {
	_, dir, err := e.hooksDir()
	if err != nil {
		return err
	}
	hs, err := hooks.Status(dir)
	if err != nil {
		return err
	}
	out := hooksStatusJSON{Dir: dir, Hooks: []hookJSON{}}
	for _, h := range hs {
		j := hookJSON{Name: h.Name, Path: h.Path, State: string(h.State), Legacy: h.Legacy, Binary: h.Binary}
		if h.Binary != "" {
			if fi, err := os.Stat(h.Binary); err == nil && fi.Mode()&0o111 != 0 {
				j.BinaryFound = true
			}
		}
		out.Hooks = append(out.Hooks, j)
	}
	if e.json {
		return writeJSON(e.stdout, out)
	}
	fmt.Fprintf(e.stdout, "hooks directory: %s\n", dir)
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	for _, h := range out.Hooks {
		var what string
		switch hooks.State(h.State) {
		case hooks.Installed:
			what = "runs " + h.Binary
			if !h.BinaryFound {
				what = "runs git-zerg from PATH (" + h.Binary + " is gone)"
			}
			if h.Legacy != "" {
				what += ", after " + filepath.Base(h.Legacy)
			}
		case hooks.Other:
			what = "not git-zerg's: its checks do not run (install keeps this hook and runs it first)"
		default:
			what = "git-zerg's checks do not run"
			if h.Legacy != "" {
				what += " (" + filepath.Base(h.Legacy) + " is kept; install chains it again)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", h.Name, h.State, what)
	}
	return tw.Flush()
}

// hookIdentity is who commits or pushes here: the worker of
// a worker worktree's branch, else ZERG_WORKER, else the user; the last is
// looked up (a git process) only when a lock asks for it.
func (e *env) hookIdentity(s *gitstore.Store) hooks.Identity {
	id := hooks.Identity{WorkerOwner: engine.Owner, Owner: e.userIdentity}
	if f, w, ok := workerOfBranch(currentBranch(s)); ok {
		id.Feature, id.Worker = f, w
	}
	return id
}

// hookSkipped: the hook has nothing to do. Commits and pushes git-zerg makes
// itself are checked by the command that makes them, and a repository
// without refs/zerg has nothing that could refuse anything; both are
// answered before anything is loaded.
func (e *env) hookSkipped() bool {
	return gitcmd.Internal() || hooks.ZergAbsent(e.workDir())
}

// workDir is the directory git-zerg runs in (-C).
func (e *env) workDir() string {
	if e.dir == "" {
		return "."
	}
	return e.dir
}

func runHookPreCommit(e *env) error {
	if e.hookSkipped() {
		return nil
	}
	hooks.DropRedundantGitDir(e.workDir())
	// The staged paths are asked from git right away, so that git works
	// while the state is read; cancelling stops it when it was not needed.
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	staged := hooks.StartStaged(ctx, e.workDir())
	s, err := e.Store()
	if err != nil {
		return err
	}
	ps, err := hooks.PreCommit(s, e.hookIdentity(s), e.now().UTC(), staged)
	if err != nil {
		return err
	}
	if len(ps) == 0 {
		return nil
	}
	for _, p := range ps {
		fmt.Fprintf(e.stderr, "git-zerg: %s\n", printable.String(p.String()))
	}
	return &cliError{code: exitFailed, what: "commit refused", why: nounCount(countPaths(ps), "staged path", "is", "are") + " not yours to commit",
		hint: "git zerg status and git zerg locks show who holds what"}
}

func runHookPrePush(e *env, remote, url string) error {
	if e.hookSkipped() {
		return nil
	}
	lines, err := hooks.ParsePush(e.stdin)
	if err != nil {
		return usageErr("%v", err)
	}
	hooks.DropRedundantGitDir(e.workDir())
	s, err := e.Store()
	if err != nil {
		return err
	}
	ps, err := hooks.PrePush(e.ctx, s, remote, url, lines, e.hookIdentity(s), e.gateSet(), e.now().UTC())
	if err != nil {
		return err
	}
	if len(ps) == 0 {
		return nil
	}
	for _, p := range ps {
		fmt.Fprintf(e.stderr, "git-zerg: %s\n", printable.String(p.String()))
	}
	to := remote
	if to == "" {
		to = "the remote"
	}
	return &cliError{code: exitFailed, what: "push to " + to + " refused", why: nounCount(len(ps), "problem", "", ""),
		hint: "git zerg locks shows who holds what"}
}

func countPaths(ps []hooks.Problem) int {
	seen := map[string]bool{}
	for _, p := range ps {
		seen[p.Path] = true
	}
	return len(seen)
}

// nounCount writes "1 path is" / "2 paths are" (verb optional).
func nounCount(n int, noun, one, many string) string {
	if n != 1 {
		one = many
	}
	return strings.TrimSpace(plural(n, noun) + " " + one)
}

// minGit is the oldest git git-zerg works with: `merge-tree --write-tree`,
// the level merge's conflict check, came in 2.38.
var minGit = [2]int{2, 38}

func runInit(e *env) error {
	s, err := e.Store()
	if err != nil {
		return err
	}
	if s.Top == "" {
		return usageErr("init needs a work tree (this is a bare repository)")
	}
	v, err := gitIn(s).Line(e.ctx, "version")
	if err != nil {
		return err
	}
	major, minor, ok := gitVersion(v)
	if !ok {
		return failed("cannot tell the version of git", v)
	}
	if major < minGit[0] || major == minGit[0] && minor < minGit[1] {
		return &cliError{code: exitFailed, what: fmt.Sprintf("git %d.%d or later is needed", minGit[0], minGit[1]),
			why: strings.TrimPrefix(v, "git version "), hint: "upgrade git, then run git zerg init again"}
	}
	if err := worktree.Supported(e.ctx, gitIn(s)); err != nil {
		return failed("git worktree does not work here", err.Error())
	}
	// A hooks directory that cannot serve every worktree refuses init
	// before it writes anything, not halfway through.
	if loc, err := hooks.Locate(e.ctx, gitIn(s)); err != nil {
		return err
	} else if loc.Relative {
		return hooksInstallError(&hooks.HooksPathError{HooksPath: loc.HooksPath, Dir: loc.Dir})
	}
	fmt.Fprintf(e.stdout, "%s: ok (%d.%d or later needed), worktrees: ok\n", v, minGit[0], minGit[1])
	name := filepath.Join(s.Top, ".zerg", "config.toml")
	switch _, err := os.Stat(name); {
	case err == nil:
		fmt.Fprintln(e.stdout, "kept .zerg/config.toml (already there)")
	case errors.Is(err, fs.ErrNotExist):
		if err := writeNew(name, []byte(config.Template)); err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, "wrote .zerg/config.toml (commit it to share the settings)")
	default:
		return err
	}
	if err := installHooks(e, ""); err != nil {
		return err
	}
	e.printHooksWarning(e.startHooksWarning(s)())
	if found, ok := manFinds(); ok && found == "" {
		fmt.Fprintln(e.stderr, "note: git zerg --help opens man git-zerg, not installed yet: git zerg install-man installs it")
	}
	return nil
}

// gitVersion parses "git version 2.39.5 (Apple Git-143)".
func gitVersion(v string) (major, minor int, ok bool) {
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

// writeNew creates name with data; it never replaces an existing file.
func writeNew(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
