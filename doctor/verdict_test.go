package doctor

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/engine/setup"
	"github.com/git-zerg/git-zerg/hooks"
	"github.com/git-zerg/git-zerg/state"
)

// want checks a verdict: ok or not, and words its detail and fix must hold.
func want(t *testing.T, c Check, ok bool, detail, fix string) {
	t.Helper()
	if c.OK != ok {
		t.Errorf("%s: ok = %v, want %v (%s)", c.Name, c.OK, ok, c.Line())
	}
	if !strings.Contains(c.Detail, detail) {
		t.Errorf("%s: detail %q lacks %q", c.Name, c.Detail, detail)
	}
	if !strings.Contains(c.Fix, fix) {
		t.Errorf("%s: fix %q lacks %q", c.Name, c.Fix, fix)
	}
	if ok != (c.Fix == "") {
		t.Errorf("%s: ok = %v with fix %q", c.Name, ok, c.Fix)
	}
}

func TestLine(t *testing.T) {
	if got := (Check{Name: "git", OK: true, Detail: "git 2.43"}).Line(); got != "ok  git: git 2.43" {
		t.Errorf("ok line = %q", got)
	}
	if got := (Check{Name: "hooks", Detail: "missing", Fix: "git zerg hooks install"}).Line(); got != "fix hooks: missing; fix: git zerg hooks install" {
		t.Errorf("fix line = %q", got)
	}
}

func TestGitVersion(t *testing.T) {
	min := setup.MinGit
	want(t, checkGitVersion("git version 2.43.0", min, setup.GitVersion), true, "2.43.0", "")
	want(t, checkGitVersion("git version 2.38.1", min, setup.GitVersion), true, "2.38.1", "")
	want(t, checkGitVersion("git version 2.37.9", min, setup.GitVersion), false, "older than 2.38", "upgrade git")
	want(t, checkGitVersion("git version 1.99.0", min, setup.GitVersion), false, "older", "upgrade git")
	want(t, checkGitVersion("nonsense", min, setup.GitVersion), false, "cannot tell", "install git 2.38")
}

func TestIdentity(t *testing.T) {
	want(t, checkIdentity("Ada", "ada@example.com"), true, "Ada <ada@example.com>", "")
	want(t, checkIdentity("", "ada@example.com"), false, "user.name not set", "git config user.name")
	want(t, checkIdentity("Ada", ""), false, "user.email not set", "git config user.email")
	want(t, checkIdentity("", ""), false, "user.name and user.email not set", "git config")
}

func TestConfig(t *testing.T) {
	want(t, checkConfig(true, ""), true, ".zerg/config.toml read", "")
	want(t, checkConfig(false, ""), true, "every setting at its default", "")
	want(t, checkConfig(true, "bad configuration (x: unknown key)"), false, "unknown key", "fix .zerg/config.toml")
}

func hookFiles(states ...hooks.State) []HookFile {
	var out []HookFile
	for i, st := range states {
		name := hooks.Names[i]
		out = append(out, HookFile{Name: name, Path: "/r/.git/hooks/" + name, State: st, Executable: st != hooks.Absent, Binary: "/bin/git-zerg", Runs: true})
	}
	return out
}

func TestHooks(t *testing.T) {
	loc := hooks.Location{Dir: "/r/.git/hooks", Default: "/r/.git/hooks"}
	want(t, checkHooks("", HookFacts{Loc: loc, Files: hookFiles(hooks.Installed, hooks.Installed)}), true, "pre-commit and pre-push installed in /r/.git/hooks", "")
	want(t, checkHooks("", HookFacts{Loc: loc, Files: hookFiles(hooks.Absent, hooks.Absent)}), false,
		"pre-commit and pre-push are not installed in /r/.git/hooks", "git zerg hooks install")
	want(t, checkHooks("", HookFacts{Loc: loc, Files: hookFiles(hooks.Installed, hooks.Absent)}), false, "pre-push is not installed", "git zerg hooks install")
	want(t, checkHooks("", HookFacts{Loc: loc, Files: hookFiles(hooks.Other, hooks.Installed)}), false, "not git-zerg's hook", "keeps that hook")

	// Installed but not executable: git skips it.
	files := hookFiles(hooks.Installed, hooks.Installed)
	files[1].Executable = false
	want(t, checkHooks("", HookFacts{Loc: loc, Files: files}), false, "pre-push is not executable: git skips it", "chmod +x /r/.git/hooks/pre-push")

	// Its git-zerg gone, and none on PATH.
	files = hookFiles(hooks.Installed, hooks.Installed)
	files[0].Runs = false
	want(t, checkHooks("", HookFacts{Loc: loc, Files: files}), false, "pre-commit runs /bin/git-zerg, which is gone, and no git-zerg is on PATH",
		"git zerg hooks install --binary PATH")

	// Shadowed: installed where git looked before core.hooksPath.
	moved := hooks.Location{Dir: "/elsewhere", HooksPath: "/elsewhere", Default: "/r/.git/hooks"}
	want(t, checkHooks("", HookFacts{Loc: moved, Files: hookFiles(hooks.Absent, hooks.Absent), OursAtDefault: true}), false,
		"git-zerg's hooks are in /r/.git/hooks, but core.hooksPath (/elsewhere) has git run hooks from /elsewhere", "git zerg hooks install")

	rel := hooks.Location{Dir: "/r/hooks", HooksPath: "hooks", Relative: true, Default: "/r/.git/hooks"}
	want(t, checkHooks("", HookFacts{Loc: rel, Files: hookFiles(hooks.Installed, hooks.Installed)}), false,
		"core.hooksPath is relative (hooks) and git-zerg's hooks directory does not stand in for it here", "git zerg hooks install")

	c := checkHooks("/wt/worker-1", HookFacts{Loc: loc, Files: hookFiles(hooks.Absent, hooks.Installed)})
	want(t, c, false, "/wt/worker-1: pre-commit is not installed", "git -C /wt/worker-1 zerg hooks install")
	if c.Name != "worker-hooks" {
		t.Errorf("a worktree's check is named %q", c.Name)
	}
}

func TestWorkerHooks(t *testing.T) {
	c := checkWorkerHooks(nil)
	want(t, c, true, "no worker worktrees", "")
	if !c.Skipped {
		t.Error("no worktrees: not skipped")
	}
	good := checkHooks("/wt/1", HookFacts{Loc: hooks.Location{Dir: "/d", Default: "/d"}, Files: hookFiles(hooks.Installed, hooks.Installed)})
	bad := checkHooks("/wt/2", HookFacts{Loc: hooks.Location{Dir: "/d", Default: "/d"}, Files: hookFiles(hooks.Absent, hooks.Installed)})
	want(t, checkWorkerHooks([]Check{good, good}), true, "2 worker worktrees", "")
	want(t, checkWorkerHooks([]Check{good, bad}), false, "/wt/2", "git -C /wt/2 zerg hooks install")
}

func TestWorkerCommand(t *testing.T) {
	missing := errors.New(`exec: "claude": executable file not found in $PATH`)
	want(t, checkWorkerCommand(CommandFacts{Agent: "claude", Runs: "claude -p", Program: "/usr/bin/claude"}), true, "agent claude: /usr/bin/claude", "")
	want(t, checkWorkerCommand(CommandFacts{Agent: "claude", Runs: "claude -p", Err: missing}), false, "agent claude", "install claude")
	want(t, checkWorkerCommand(CommandFacts{Command: "zz run", Agent: "claude", Runs: "zz run", Err: missing}), false, "workers.command (zz run)", "fix workers.command")
	want(t, checkWorkerCommand(CommandFacts{Command: "$AGENT", Agent: "claude", Runs: "$AGENT"}), true, "known only when it runs", "")
	want(t, checkWorkerCommand(CommandFacts{Agent: "custom"}), false, "no worker command", "set workers.command")
}

func TestWorkerScript(t *testing.T) {
	c := checkWorkerScript("", "", "")
	want(t, c, true, "runs no script", "")
	if !c.Skipped {
		t.Error("no script: not skipped")
	}
	want(t, checkWorkerScript("work.sh", "", ""), true, "work.sh is committed", "")
	want(t, checkWorkerScript("work.sh", "worker script work.sh is missing (not committed)", "git add work.sh && git commit"), false,
		"not committed", "git add work.sh")
}

func TestStaging(t *testing.T) {
	c := checkStaging(StagingFacts{})
	want(t, c, true, "no feature planned", "")
	if !c.Skipped {
		t.Error("no feature: not skipped")
	}
	want(t, checkStaging(StagingFacts{Feature: "f", Branch: "zerg/f/staging"}), true, "does not exist yet", "")
	want(t, checkStaging(StagingFacts{Feature: "f", Branch: "zerg/f/staging", Exists: true, Base: "main"}), true, "every commit of main", "")
	want(t, checkStaging(StagingFacts{Feature: "f", Branch: "zerg/f/staging", Exists: true, Base: "main", Behind: 1}), false,
		"zerg/f/staging is 1 commit behind main", "git zerg finish merges both")
	want(t, checkStaging(StagingFacts{Feature: "f", Branch: "zerg/f/staging", Exists: true, Base: "main", Behind: 3}), false, "3 commits behind", "finish")
	want(t, checkStaging(StagingFacts{Feature: "f", Branch: "zerg/f/staging", Exists: true}), true, "HEAD is detached", "")
	want(t, checkStaging(StagingFacts{Feature: "f", Branch: "zerg/f/staging", Exists: true, Base: "main", Behind: 2, Follows: true}), true,
		"2 commits behind main: the next rush merges them in first", "")
}

func TestStaleLocks(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	live := state.Lock{Path: "src/", Owner: "w1@h", Expires: now.Add(time.Hour)}
	expired := state.Lock{Path: "docs/", Owner: "alice@h", Expires: now.Add(-time.Hour)}
	orphan := state.Lock{Path: "lib/", Owner: "w2@h", Task: "T2", Expires: now.Add(time.Hour)}
	want(t, checkStaleLocks(nil, nil, now), true, "0 active, none stale", "")
	want(t, checkStaleLocks([]state.Lock{live, orphan}, nil, now), true, "none stale", "")
	want(t, checkStaleLocks([]state.Lock{live, expired}, nil, now), false, "1 stale lock: docs/ (alice@h, expired 1h0m0s ago)", "unlock --force")
	want(t, checkStaleLocks([]state.Lock{live, orphan}, map[string]bool{"w2@h": true}, now), false, "lib/ (w2@h, whose rush is gone)", "rush --resume")
	want(t, checkStaleLocks([]state.Lock{expired, orphan}, map[string]bool{"w2@h": true}, now), false, "2 stale locks", "rush --resume")
}

func TestTrust(t *testing.T) {
	c := checkTrust("", 0, 0)
	want(t, c, true, "no feature planned", "")
	if !c.Skipped {
		t.Error("no feature: not skipped")
	}
	want(t, checkTrust("f", 0, 0), true, "every task of f is trusted here", "")
	want(t, checkTrust("f", 2, 0), false, "2 tasks are not trusted here", "git zerg plan --accept")
	want(t, checkTrust("f", 0, 1), false, "1 task is not trusted", "plan --accept")
}

func TestForgeToken(t *testing.T) {
	reads := []string{"GITHUB_TOKEN", "GH_TOKEN"}
	c := checkForgeToken(ForgeFacts{Reads: reads})
	want(t, c, true, "no forge configured", "")
	if !c.Skipped {
		t.Error("no forge: not skipped")
	}
	want(t, checkForgeToken(ForgeFacts{Why: "forge.repo = o/r", Reads: reads}), false, "GITHUB_TOKEN and GH_TOKEN are not set", "export GITHUB_TOKEN")
	want(t, checkForgeToken(ForgeFacts{Why: "forge.repo = o/r", Reads: reads, Tokens: []string{"GH_TOKEN"}}), true, "GH_TOKEN set (forge.repo = o/r)", "")
}
