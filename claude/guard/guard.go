// Package guard is the check of git-zerg's Claude Code mode before a Bash
// command of a session runs (the PreToolUse hook): whether the command may
// run, and when not, the one line the agent reads why.
//
// It is a pure function of the command line and of what a Guard's
// functions answer: it runs no git and reads no file, no environment and
// no clock. What only the repository knows (whether a directory is in a
// worker worktree, a git alias's value, the branch checked out) comes in
// through those functions, asked only when the decision depends on it:
// package claude's hook backs them with git and the files of the git
// directory, a test with tables.
package guard

import (
	"path"
	"strings"
	"sync"
)

// Guard checks the Bash commands of a Claude Code session before they run
// (the PreToolUse hook). It refuses what would get around git-zerg's rules:
// skipping the git hooks, writing the state under refs/zerg/ by hand,
// pushing or deleting state the way only `git zerg sync` may, moving the
// zerg/ branches, writing the git directory with the shell, and a worker
// breaking someone else's lock.
//
// It reads the command as a shell would parse it, and evaluates nothing: a
// ref or a path given through a variable or a command substitution is one it
// cannot see, so where such a word could name git-zerg's state the command
// is refused. It is defence in depth: a session can always run a program
// the guard does not read (a script, python). What holds whatever the
// session runs is elsewhere: state commits git-zerg did not make are not
// acted on, staging moves only by git-zerg's compare-and-swap, and a
// verification judges the commit that was recorded.
type Guard struct {
	// Worker: the session is a worker's (ZERG_WORKER is set in its
	// environment, or it runs in a worker worktree).
	Worker bool
	// WorkerDir reports whether dir, as written in the command (relative
	// to the session's directory), is inside a worker worktree. nil: never.
	WorkerDir func(dir string) bool
	// Alias is the value of git alias name as git would read it in dir
	// (as written in the command); ok is false when there is none. It is
	// asked only for a git subcommand that is none of git's own, so an
	// ordinary command costs nothing. nil: only aliases given with -c are
	// seen.
	Alias func(dir, name string) (value string, ok bool)
	// Branch is the branch checked out in dir (as written in the command),
	// "" when detached or unknown. nil: never staging.
	Branch func(dir string) string
}

// The reasons, one line each: they are what the agent reads.
const (
	reasonNoVerify      = "--no-verify skips git-zerg's hooks, which check file ownership and locks: commit or push without it, and fix what the hook refuses"
	reasonHooksPath     = "changing core.hooksPath turns off git-zerg's hooks: leave it as it is"
	reasonRefs          = "refs/zerg/ is git-zerg's state and changes only through git zerg commands (claim, done, fail, release, retry, sync): do not write it by hand"
	reasonBranches      = "zerg/ branches are git-zerg's worker and staging branches: only git zerg (rush, merge, cleanup) moves or deletes them"
	reasonStaging       = "zerg/<feature>/staging moves only by git-zerg's compare-and-swap: do not check it out, commit on it, reset or recreate it (git switch --detach zerg/<feature>/staging to look at it)"
	reasonWorkerPush    = "a worker does not push refs/zerg/: state is shared by the driver with git zerg sync"
	reasonForcePush     = "a forced push or a deletion of refs/zerg/ would overwrite the state other machines wrote: share state with git zerg sync, which merges it"
	reasonMirror        = "git push --mirror would force and prune refs/zerg/ on the remote: push branches by name, and share state with git zerg sync"
	reasonWorkerUnlock  = "a worker may not break another owner's lock (git zerg unlock --force): report the conflict to the driver instead"
	reasonAlias         = "a git alias to update-ref, symbolic-ref, replace or another command that writes refs gets around these checks: run the git command itself"
	reasonHidden        = "a ref, refspec, config key or git command given through a variable, a command substitution, a glob or xargs cannot be checked before it runs: write it out"
	reasonHiddenInput   = "refs fed to update-ref --stdin or fast-import from a pipe or a file cannot be checked before they run: give them in a here-document, or run git update-ref REF VALUE"
	reasonGitDir        = "the git directory (refs, hooks, info/exclude, config, zerg/) and git's config files change only through git and git zerg commands: do not write them with the shell"
	reasonConfigEnv     = "GIT_CONFIG_* in the environment can turn off git-zerg's hooks or define aliases out of sight: leave it unset"
	reasonConfigInclude = "a config include can set core.hooksPath or aliases out of sight: do not add one"
	reasonReplace       = "replace refs change what git shows for a commit, the gated ones too: leave refs/replace/ alone"
	reasonExcludes      = "info/exclude and core.excludesFile change which files git sees, for git-zerg's checks too: leave them to the user"
	reasonConfigProgram = "this setting makes git run a program later, for the user and for git-zerg: leave it to the user"
)

// Check returns why command must not run, "" when it may.
func (g Guard) Check(command string) string {
	st := &guardState{g: g, worker: g.Worker, text: command, branches: map[string]string{}}
	return st.check(parseShell(command, 0), 0)
}

type guardState struct {
	g      Guard
	worker bool
	dir    string // where cd took the commands, relative to the session's directory
	text   string // the whole command line, for what comes in on stdin
	// switched: an earlier command of the line checked out switchedTo
	// ("" when it cannot be seen which branch).
	switched   bool
	switchedTo string
	branches   map[string]string // Branch answers, by directory
}

func (st *guardState) check(cmds []simple, depth int) string {
	for i, c := range cmds {
		// What echo or printf pipes into a shell is a script to read too.
		if c.piped && i > 0 {
			if w := cmds[i-1].words; len(w) > 1 && (w[0] == "echo" || w[0] == "printf") {
				c.stdin = append(c.stdin, strings.Join(w[1:], " "))
			}
		}
		if r := st.simple(c, depth); r != "" {
			return r
		}
	}
	return ""
}

// sub is the state of a nested shell (sh -c, eval, a shell alias).
func (st *guardState) sub(worker bool) *guardState {
	return &guardState{g: st.g, worker: worker, dir: st.dir, text: st.text, switched: st.switched, switchedTo: st.switchedTo, branches: st.branches}
}

// reserved words that may start a simple command as we split them.
var reserved = &wordSet{list: `if then else elif fi do done while until ! { } time coproc`}

func isAssign(w string) (name, value string, ok bool) {
	name, value, ok = strings.Cut(w, "=")
	if !ok || name == "" {
		return "", "", false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return "", "", false
		}
	}
	return name, value, true
}

func (st *guardState) inWorkerDir(dir string) bool {
	if st.g.WorkerDir == nil || dir == "" {
		return false
	}
	return st.g.WorkerDir(st.join(dir))
}

// join is dir as seen from the session's directory, after the cds so far.
func (st *guardState) join(dir string) string {
	if dir == "" {
		return st.dir
	}
	if !path.IsAbs(dir) && st.dir != "" {
		return path.Join(st.dir, dir)
	}
	return dir
}

// assign checks an environment assignment, whether it prefixes a command,
// is exported or given to env.
func (st *guardState) assign(name, value string) string {
	switch {
	case name == "GIT_CONFIG_PARAMETERS", name == "GIT_CONFIG_GLOBAL", name == "GIT_CONFIG_SYSTEM",
		name == "GIT_CONFIG_NOSYSTEM", name == "GIT_CONFIG":
		return reasonConfigEnv
	case strings.HasPrefix(name, "GIT_CONFIG_KEY_"):
		if opaque(value) || riskyConfigKey(value) {
			return reasonConfigEnv
		}
	}
	return ""
}

func (st *guardState) simple(c simple, depth int) string {
	for _, r := range c.redirs {
		if refsFile(r) {
			return reasonRefs
		}
		if st.gitPath(r) && !noteFile(r) {
			return reasonGitDir
		}
	}
	words := c.words
	for len(words) > 0 && reserved.words()[words[0]] {
		words = words[1:]
	}
	worker := st.worker
	assignOnly := true
	for _, w := range words {
		if _, _, ok := isAssign(w); !ok {
			assignOnly = false
			break
		}
	}
	for len(words) > 0 {
		name, value, ok := isAssign(words[0])
		if !ok {
			break
		}
		if r := st.assign(name, value); r != "" {
			return r
		}
		if name == "ZERG_WORKER" {
			worker = value != ""
			if assignOnly {
				st.worker = worker
			}
		}
		words = words[1:]
	}
	var reason string
	words, worker, hidden := stripPrefixes(words, worker, func(name, value string) {
		if reason == "" {
			reason = st.assign(name, value)
		}
	})
	if reason != "" {
		return reason
	}
	if len(words) == 0 {
		return ""
	}
	args := words[1:]
	name := path.Base(words[0])
	switch name {
	case "export", "declare", "typeset", "readonly", "local":
		for _, a := range args {
			if name, value, ok := isAssign(a); ok {
				if r := st.assign(name, value); r != "" {
					return r
				}
				if name == "ZERG_WORKER" {
					st.worker = value != ""
				}
			}
		}
	case "unset":
		for _, a := range args {
			if a == "ZERG_WORKER" {
				st.worker = false
			}
		}
	case "cd", "pushd":
		for _, a := range args {
			if !strings.HasPrefix(a, "-") {
				if st.inWorkerDir(a) {
					st.worker = true
				}
				st.dir = st.join(a)
				break
			}
		}
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox":
		if depth >= maxDepth {
			return ""
		}
		sub := st.sub(worker)
		if script, ok := shellScript(args); ok {
			return sub.check(parseShell(script, depth+1), depth+1)
		}
		if !hasOperand(args) {
			for _, in := range c.stdin {
				if r := sub.check(parseShell(in, depth+1), depth+1); r != "" {
					return r
				}
			}
		}
	case "eval":
		if depth < maxDepth {
			return st.sub(worker).check(parseShell(strings.Join(args, " "), depth+1), depth+1)
		}
	case "git":
		return st.git(args, c, worker, hidden, depth)
	case "git-zerg":
		return st.zerg(args, worker, nil)
	case "find":
		if contains(args, "-delete") {
			for _, a := range args {
				if strings.HasPrefix(a, "-") || a == "(" || a == "!" {
					break
				}
				if refsFile(a) || st.gitPath(a) {
					return reasonGitDir
				}
			}
		}
		for _, cmd := range findCommands(args) {
			if r := st.sub(worker).simple(simple{words: cmd}, depth+1); r != "" {
				return r
			}
		}
	default:
		if sub, ok := strings.CutPrefix(name, "git-"); ok && gitCommands.words()[sub] {
			return st.git(append([]string{sub}, args...), c, worker, hidden, depth)
		}
		return st.fileWrites(name, args)
	}
	return ""
}

// findCommands are the commands find runs (-exec, -execdir, -ok, -okdir),
// each up to its ";" or "+".
func findCommands(args []string) [][]string {
	var out [][]string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j] != ";" && args[j] != "+" {
				j++
			}
			out = append(out, args[i+1:j])
			i = j
		}
	}
	return out
}

// stripPrefixes takes off commands that run the rest of their words as a
// command: env (whose assignments go to assign, ZERG_WORKER counted),
// command, exec, nohup, sudo, ... hidden: xargs adds words nobody can see.
func stripPrefixes(words []string, worker bool, assign func(name, value string)) (_ []string, _ bool, hidden bool) {
	for len(words) > 0 {
		switch path.Base(words[0]) {
		case "env":
			words = words[1:]
			for len(words) > 0 {
				w := words[0]
				if name, value, ok := isAssign(w); ok {
					assign(name, value)
					if name == "ZERG_WORKER" {
						worker = value != ""
					}
					words = words[1:]
					continue
				}
				if w == "-u" || w == "--unset" || w == "-C" || w == "--chdir" || w == "-S" || w == "--split-string" {
					if (w == "-u" || w == "--unset") && len(words) > 1 && words[1] == "ZERG_WORKER" {
						worker = false
					}
					if (w == "-S" || w == "--split-string") && len(words) > 1 {
						words = append(strings.Fields(words[1]), words[2:]...)
						continue
					}
					words = words[min(2, len(words)):]
					continue
				}
				if strings.HasPrefix(w, "-") {
					words = words[1:]
					continue
				}
				break
			}
		case "command", "builtin", "exec", "nohup", "setsid", "time", "doas", "stdbuf", "chronic", "caffeinate":
			words = words[1:]
			for len(words) > 0 && strings.HasPrefix(words[0], "-") {
				words = words[1:]
			}
		case "sudo":
			words = words[1:]
			for len(words) > 0 && strings.HasPrefix(words[0], "-") {
				w := words[0]
				words = words[1:]
				if (w == "-u" || w == "-g" || w == "-C" || w == "-D" || w == "-h" || w == "-p" || w == "-U" || w == "-r" || w == "-t") && len(words) > 0 {
					words = words[1:]
				}
			}
		case "nice", "ionice":
			words = words[1:]
			for len(words) > 0 && strings.HasPrefix(words[0], "-") {
				w := words[0]
				words = words[1:]
				if (w == "-n" || w == "-c") && len(words) > 0 {
					words = words[1:]
				}
			}
		case "timeout":
			words = words[1:]
			for len(words) > 0 && strings.HasPrefix(words[0], "-") {
				w := words[0]
				words = words[1:]
				if (w == "-s" || w == "-k" || w == "--signal" || w == "--kill-after") && len(words) > 0 {
					words = words[1:]
				}
			}
			if len(words) > 0 {
				words = words[1:] // the duration
			}
		case "xargs":
			hidden = true
			words = words[1:]
			for len(words) > 0 && strings.HasPrefix(words[0], "-") {
				w := words[0]
				words = words[1:]
				if len(w) == 2 && strings.ContainsRune("IinLlPsdEa", rune(w[1])) && len(words) > 0 {
					words = words[1:]
				}
			}
		default:
			return words, worker, hidden
		}
	}
	return words, worker, hidden
}

// shellScript finds the command string of `sh -c STRING` (also -ec, -lc...).
func shellScript(args []string) (string, bool) {
	if len(args) > 0 && args[0] == "sh" { // busybox sh
		args = args[1:]
	}
	for i, a := range args {
		if a == "--" || !strings.HasPrefix(a, "-") {
			return "", false
		}
		if !strings.HasPrefix(a, "--") && strings.ContainsRune(a[1:], 'c') {
			if i+1 < len(args) {
				return args[i+1], true
			}
			return "", false
		}
	}
	return "", false
}

// hasOperand: the shell was given a script file to run.
func hasOperand(args []string) bool {
	for _, a := range args {
		if a == "sh" {
			continue
		}
		if !strings.HasPrefix(a, "-") {
			return true
		}
	}
	return false
}

// opaque: the shell makes the word's value from something the guard does
// not see: a variable, a command substitution.
func opaque(w string) bool { return strings.ContainsAny(w, "$`") }

// wordSet is the set of the words of list, made on first use: the guard's
// tables are read by the PreToolUse hook alone, and a map literal would be
// built at every start of every command. Written as &wordSet{list: ...},
// it needs no code at start either.
type wordSet struct {
	list string
	once sync.Once
	m    map[string]bool
}

// words is the set.
func (s *wordSet) words() map[string]bool {
	s.once.Do(func() {
		s.m = map[string]bool{}
		for _, w := range strings.Fields(s.list) {
			s.m[w] = true
		}
	})
	return s.m
}
