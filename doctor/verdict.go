// Package doctor is `git zerg doctor`: it gathers facts about the
// repository, its configuration and the current feature, and judges each
// with a plain function of those facts (this file), one Check per thing
// that would make a rush, a hook or a finish go wrong. It only reads:
// nothing it does writes a ref or a file.
package doctor

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/git-zerg/git-zerg/hooks"
	"github.com/git-zerg/git-zerg/state"
)

// Check is one line of the report. Its JSON is the documented output of
// `git zerg doctor --json`.
type Check struct {
	// Name is the check's stable identifier (git, identity, hooks, ...).
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	// Skipped: the check had nothing to look at (no feature planned, no
	// forge configured); OK is true.
	Skipped bool `json:"skipped"`
	// Detail says what was found.
	Detail string `json:"detail"`
	// Fix says what to do, "" when OK.
	Fix string `json:"fix,omitempty"`
}

// Line is the check as doctor prints it: `ok  NAME: DETAIL`, or
// `fix NAME: DETAIL; fix: HOW`.
func (c Check) Line() string {
	if c.OK {
		return "ok  " + c.Name + ": " + c.Detail
	}
	return "fix " + c.Name + ": " + c.Detail + "; fix: " + c.Fix
}

func ok(name, format string, args ...any) Check {
	return Check{Name: name, OK: true, Detail: fmt.Sprintf(format, args...)}
}

func skipped(name, why string) Check {
	return Check{Name: name, OK: true, Skipped: true, Detail: "skipped: " + why}
}

func fix(name, detail, how string) Check {
	return Check{Name: name, Detail: detail, Fix: how}
}

// checkGitVersion judges `git version`'s line against the oldest git that
// works, min; parse is setup.GitVersion.
func checkGitVersion(line string, min [2]int, parse func(string) (int, int, bool)) Check {
	v := strings.TrimPrefix(line, "git version ")
	major, minor, good := parse(line)
	switch {
	case !good:
		return fix("git", fmt.Sprintf("cannot tell the version of git from %q", line), fmt.Sprintf("install git %d.%d or later", min[0], min[1]))
	case major < min[0] || major == min[0] && minor < min[1]:
		return fix("git", fmt.Sprintf("git %s is older than %d.%d (merge-tree --write-tree)", v, min[0], min[1]),
			fmt.Sprintf("upgrade git to %d.%d or later", min[0], min[1]))
	}
	return ok("git", "git %s (%d.%d or later needed)", v, min[0], min[1])
}

// checkIdentity judges the identity commits are made with: name and email as
// git would take them (configuration or environment), "" when unset.
func checkIdentity(name, email string) Check {
	var missing []string
	if name == "" {
		missing = append(missing, "user.name")
	}
	if email == "" {
		missing = append(missing, "user.email")
	}
	if len(missing) > 0 {
		return fix("identity", strings.Join(missing, " and ")+" not set: the workers' commits and finish's merge commit need them",
			`git config user.name "Your Name" && git config user.email you@example.com`)
	}
	return ok("identity", "%s <%s>", name, email)
}

// checkConfig judges .zerg/config.toml: present or not (the defaults), and
// readable; problem is the reason it cannot be read, "" when it can.
func checkConfig(present bool, problem string) Check {
	switch {
	case problem != "":
		return fix("config", ".zerg/config.toml: "+problem, "fix .zerg/config.toml (git zerg init writes every key with its default)")
	case !present:
		return ok("config", "no .zerg/config.toml: every setting at its default (git zerg init writes one)")
	}
	return ok("config", ".zerg/config.toml read")
}

// HookFile is one hook file where git looks for it.
type HookFile struct {
	Name  string
	Path  string
	State hooks.State
	// Executable: git runs the file (it skips one that is not, with only
	// a hint).
	Executable bool
	// Binary is the git-zerg the hook runs; Runs says whether it, or a
	// git-zerg on PATH, is there (a hook that finds none lets everything
	// through with a warning).
	Binary string
	Runs   bool
}

// HookFacts are where git runs hooks from in one work tree, and what it
// finds there.
type HookFacts struct {
	Loc   hooks.Location
	Files []HookFile
	// OursAtDefault: git-zerg's hooks are in Loc.Default, where git looked
	// before core.hooksPath sent it elsewhere.
	OursAtDefault bool
}

// checkHooks judges whether git runs git-zerg's hooks in the work tree the
// facts are of; where names it in the report ("" for this one).
func checkHooks(where string, f HookFacts) Check {
	name, in, install := "hooks", "", "git zerg hooks install"
	if where != "" {
		// A worktree may have a core.hooksPath of its own
		// (extensions.worktreeConfig): the install must run there.
		name, in, install = "worker-hooks", where+": ", "git -C "+where+" zerg hooks install"
	}
	if f.Loc.Relative {
		return fix(name, fmt.Sprintf("%score.hooksPath is relative (%s) and git-zerg's hooks directory does not stand in for it here: git-zerg's checks do not run", in, f.Loc.HooksPath), install)
	}
	var names, absent []string
	for _, h := range f.Files {
		names = append(names, h.Name)
		switch {
		case h.State == hooks.Other:
			return fix(name, fmt.Sprintf("%s%s is not git-zerg's hook: its checks do not run", in, h.Path),
				install+" (it keeps that hook and runs it first)")
		case h.State == hooks.Absent:
			absent = append(absent, h.Name)
		case !h.Executable:
			return fix(name, fmt.Sprintf("%s%s is not executable: git skips it", in, h.Path), "chmod +x "+h.Path)
		case h.State == hooks.Installed && !h.Runs:
			return fix(name, fmt.Sprintf("%s%s runs %s, which is gone, and no git-zerg is on PATH: the hook lets everything through", in, h.Path, h.Binary),
				"put git-zerg on PATH, or "+install+" --binary PATH")
		}
	}
	switch {
	case len(absent) > 0 && f.OursAtDefault && f.Loc.Dir != f.Loc.Default:
		return fix(name, fmt.Sprintf("%sgit-zerg's hooks are in %s, but core.hooksPath (%s) has git run hooks from %s", in, f.Loc.Default, f.Loc.HooksPath, f.Loc.Dir),
			install)
	case len(absent) > 0:
		return fix(name, fmt.Sprintf("%s%s %s not installed in %s, where git runs hooks", in, strings.Join(absent, " and "),
			plural(len(absent), "is", "are"), f.Loc.Dir), install)
	}
	return ok(name, "%s%s installed in %s, where git runs hooks", in, strings.Join(names, " and "), f.Loc.Dir)
}

// checkWorkerHooks folds the hooks checks of the worker worktrees into one:
// the first that needs a fix, else how many were looked at.
func checkWorkerHooks(checks []Check) Check {
	for _, c := range checks {
		if !c.OK {
			return c
		}
	}
	if len(checks) == 0 {
		return skipped("worker-hooks", "no worker worktrees")
	}
	return ok("worker-hooks", "git runs git-zerg's hooks in %d worker %s", len(checks), plural(len(checks), "worktree", "worktrees"))
}

// CommandFacts are the worker command and what PATH makes of it.
type CommandFacts struct {
	Command string // workers.command as configured, "" for the agent's preset
	Agent   string // workers.agent
	Runs    string // what a worker runs: Command, else the preset's command line
	Program string // the program found on PATH, "" when it cannot be told before it runs
	Err     error  // the program is not on PATH (proc.LookProgram)
}

// checkWorkerCommand judges whether each worker's program will start.
func checkWorkerCommand(f CommandFacts) Check {
	const name = "worker-command"
	what := "workers.command (" + f.Runs + ")"
	if f.Command == "" {
		// A preset's command line is long and the same for everyone.
		what = "agent " + f.Agent
	}
	switch {
	case f.Runs == "":
		return fix(name, "no worker command: workers.agent = "+f.Agent+" has no preset and workers.command is empty",
			"set workers.command in .zerg/config.toml, or workers.agent to claude, codex, gemini or aider")
	case f.Err != nil && f.Command == "":
		return fix(name, what+": "+f.Err.Error(),
			"install "+f.Agent+" (see the README's Agents), or set workers.agent or workers.command in .zerg/config.toml")
	case f.Err != nil:
		return fix(name, what+": "+f.Err.Error(), "install it, or fix workers.command in .zerg/config.toml")
	case f.Program == "":
		return ok(name, "%s: its program is known only when it runs", what)
	}
	return ok(name, "%s: %s", what, f.Program)
}

// checkWorkerScript judges the script the worker command runs (sh work.sh):
// refusal is engine.ScriptCommitted's answer, split into its sentence and
// its hint.
func checkWorkerScript(script, refusal, hint string) Check {
	const name = "worker-script"
	switch {
	case script == "":
		return skipped(name, "the worker command runs no script of the repository")
	case refusal != "":
		return fix(name, refusal, hint)
	}
	return ok(name, "%s is committed: fresh worker worktrees have it", script)
}

// StagingFacts are the feature's staging branch against the branch it
// will be finished into.
type StagingFacts struct {
	Feature string
	Branch  string // the staging branch
	Exists  bool
	Base    string // the branch staging follows, else the current one; "" when none
	Behind  int    // commits of Base that staging lacks
	// Follows: the next rush merges Base's new commits into staging
	// (rush.follow_base).
	Follows bool
}

// checkStaging judges whether the staging branch has what its base has.
func checkStaging(f StagingFacts) Check {
	const name = "staging"
	switch {
	case f.Feature == "":
		return skipped(name, "no feature planned")
	case !f.Exists:
		return ok(name, "%s does not exist yet: the first rush makes it from HEAD", f.Branch)
	case f.Base == "":
		return skipped(name, "HEAD is detached: no branch to compare "+f.Branch+" with")
	case f.Behind > 0 && f.Follows:
		return ok(name, "%s is %d %s behind %s: the next rush merges %s in first", f.Branch, f.Behind,
			plural(f.Behind, "commit", "commits"), f.Base, plural(f.Behind, "it", "them"))
	case f.Behind > 0:
		return fix(name, fmt.Sprintf("%s is %d %s behind %s: tasks still to run do not see %s", f.Branch, f.Behind,
			plural(f.Behind, "commit", "commits"), f.Base, plural(f.Behind, "it", "them")),
			"rush.follow_base = false pins staging: set it true for the next rush to merge them in, or git zerg finish merges both (a merge commit) once the feature is complete")
	}
	return ok(name, "%s has every commit of %s", f.Branch, f.Base)
}

// checkStaleLocks judges the stored locks: expired ones (their TTL ran out) and
// those of claims whose worker is gone (dead names the owners of claims
// whose rush no longer runs on this host) hold paths for nobody.
func checkStaleLocks(locks []state.Lock, dead map[string]bool, now time.Time) Check {
	const name = "locks"
	var stale []string
	expired, orphaned := 0, 0
	for _, l := range locks {
		switch {
		case !l.Active(now):
			expired++
			stale = append(stale, fmt.Sprintf("%s (%s, expired %s ago)", l.Path, l.Owner, now.Sub(l.Expires).Round(time.Second)))
		case dead[l.Owner]:
			orphaned++
			stale = append(stale, fmt.Sprintf("%s (%s, whose rush is gone)", l.Path, l.Owner))
		}
	}
	if len(stale) == 0 {
		return ok(name, "%d active, none stale", len(locks))
	}
	sort.Strings(stale)
	how := "the next command that writes state drops expired locks; git zerg unlock --force PATH drops one now"
	if orphaned > 0 {
		how = "git zerg rush --resume takes the dead workers' claims back; git zerg unlock --force PATH drops a lock"
	}
	return fix(name, fmt.Sprintf("%d stale %s: %s", len(stale), plural(len(stale), "lock", "locks"), strings.Join(stale, ", ")), how)
}

// checkTrust judges whether the feature's tasks are trusted here: changed are
// tasks whose spec arrived (by sync) unlike what was accepted here,
// removed those accepted here that the feature no longer has.
func checkTrust(feature string, changed, removed int) Check {
	const name = "trust"
	switch {
	case feature == "":
		return skipped(name, "no feature planned")
	case changed+removed > 0:
		return fix(name, fmt.Sprintf("%s: %d %s not trusted here (synced from elsewhere, waiting for acceptance): no worker runs them",
			feature, changed+removed, plural(changed+removed, "task is", "tasks are")), "git zerg plan --accept")
	}
	return ok(name, "every task of %s is trusted here", feature)
}

// ForgeFacts are whether a forge is configured (why: the setting that
// says so) and which of the token variables the forge client reads are set.
type ForgeFacts struct {
	Why    string   // "" when no forge is configured
	Tokens []string // names of the variables set, never their values
	Reads  []string // the variables the forge client reads
}

// checkForgeToken judges whether the forge client has a token.
func checkForgeToken(f ForgeFacts) Check {
	const name = "forge-token"
	switch {
	case f.Why == "":
		return skipped(name, "no forge configured")
	case len(f.Tokens) == 0:
		return fix(name, "a forge is configured ("+f.Why+") but "+strings.Join(f.Reads, " and ")+" "+plural(len(f.Reads), "is", "are")+" not set",
			"export GITHUB_TOKEN with a token that can read and write the repository (or GH_TOKEN=$(gh auth token))")
	}
	return ok(name, "%s set (%s)", strings.Join(f.Tokens, " and "), f.Why)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
