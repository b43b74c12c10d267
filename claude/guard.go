package claude

import (
	"path"
	"strings"
)

// Guard checks the Bash commands of a Claude Code session before they run
// (the PreToolUse hook). It refuses what would get around git-zerg's rules:
// skipping the git hooks, writing the state under refs/zerg/ by hand,
// pushing or deleting state the way only `git zerg sync` may, moving the
// zerg/ branches, and a worker breaking someone else's lock.
type Guard struct {
	// Worker: the session is a worker's (ZERG_WORKER is set in its
	// environment, or it runs in a worker worktree).
	Worker bool
	// WorkerDir reports whether dir, as written in the command (relative
	// to the session's directory), is inside a worker worktree. nil: never.
	WorkerDir func(dir string) bool
}

// The reasons, one line each: they are what the agent reads.
const (
	reasonNoVerify     = "--no-verify skips git-zerg's hooks, which check file ownership and locks: commit or push without it, and fix what the hook refuses"
	reasonHooksPath    = "changing core.hooksPath turns off git-zerg's hooks: leave it as it is"
	reasonRefs         = "refs/zerg/ is git-zerg's state and changes only through git zerg commands (claim, done, fail, release, retry, sync): do not write it by hand"
	reasonBranches     = "zerg/ branches are git-zerg's worker and staging branches: only git zerg (rush, merge, cleanup) moves or deletes them"
	reasonWorkerPush   = "a worker does not push refs/zerg/: state is shared by the driver with git zerg sync"
	reasonForcePush    = "a forced push or a deletion of refs/zerg/ would overwrite the state other machines wrote: share state with git zerg sync, which merges it"
	reasonMirror       = "git push --mirror would force and prune refs/zerg/ on the remote: push branches by name, and share state with git zerg sync"
	reasonWorkerUnlock = "a worker may not break another owner's lock (git zerg unlock --force): report the conflict to the driver instead"
)

// Check returns why command must not run, "" when it may.
func (g Guard) Check(command string) string {
	st := &guardState{g: g, worker: g.Worker, text: command}
	return st.check(parseShell(command, 0), 0)
}

type guardState struct {
	g      Guard
	worker bool
	dir    string // where cd took the commands, relative to the session's directory
	text   string // the whole command line, for what comes in on stdin
}

func (st *guardState) check(cmds []simple, depth int) string {
	for _, c := range cmds {
		if r := st.simple(c, depth); r != "" {
			return r
		}
	}
	return ""
}

// reserved words that may start a simple command as we split them.
var reserved = map[string]bool{"if": true, "then": true, "else": true, "elif": true, "fi": true, "do": true,
	"done": true, "while": true, "until": true, "!": true, "{": true, "}": true, "time": true, "coproc": true}

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
	if !path.IsAbs(dir) && st.dir != "" {
		dir = path.Join(st.dir, dir)
	}
	return st.g.WorkerDir(dir)
}

func (st *guardState) simple(c simple, depth int) string {
	for _, r := range c.redirs {
		if refsFile(r) {
			return reasonRefs
		}
	}
	words := c.words
	for len(words) > 0 && reserved[words[0]] {
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
		if name == "ZERG_WORKER" {
			worker = value != ""
			if assignOnly {
				st.worker = worker
			}
		}
		words = words[1:]
	}
	words, worker = stripPrefixes(words, worker)
	if len(words) == 0 {
		return ""
	}
	args := words[1:]
	switch path.Base(words[0]) {
	case "export", "declare", "typeset", "readonly", "local":
		for _, a := range args {
			if name, value, ok := isAssign(a); ok && name == "ZERG_WORKER" {
				st.worker = value != ""
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
				if path.IsAbs(a) || st.dir == "" {
					st.dir = a
				} else {
					st.dir = path.Join(st.dir, a)
				}
				break
			}
		}
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox":
		if depth >= maxDepth {
			return ""
		}
		sub := &guardState{g: st.g, worker: worker, dir: st.dir, text: st.text}
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
			sub := &guardState{g: st.g, worker: worker, dir: st.dir, text: st.text}
			return sub.check(parseShell(strings.Join(args, " "), depth+1), depth+1)
		}
	case "git":
		return st.git(args, c, worker)
	case "git-zerg":
		return st.zerg(args, worker, nil)
	case "rm", "mv", "cp", "tee", "truncate", "ln", "dd", "install", "touch", "chmod", "sed", "perl":
		for _, a := range args {
			if refsFile(strings.TrimPrefix(a, "of=")) {
				return reasonRefs
			}
		}
	}
	return ""
}

// stripPrefixes takes off commands that run the rest of their words as a
// command: env (whose assignments count), command, exec, nohup, sudo, ...
func stripPrefixes(words []string, worker bool) ([]string, bool) {
	for len(words) > 0 {
		switch path.Base(words[0]) {
		case "env":
			words = words[1:]
			for len(words) > 0 {
				w := words[0]
				if name, value, ok := isAssign(w); ok {
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
			words = words[1:]
			for len(words) > 0 && strings.HasPrefix(words[0], "-") {
				w := words[0]
				words = words[1:]
				if len(w) == 2 && strings.ContainsRune("IinLlPsdEa", rune(w[1])) && len(words) > 0 {
					words = words[1:]
				}
			}
		default:
			return words, worker
		}
	}
	return words, worker
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

// refsFile: a path into the state refs of a repository.
func refsFile(p string) bool {
	if !strings.Contains(p, "refs/zerg") {
		return false
	}
	return strings.Contains(p, ".git") || strings.HasPrefix(p, "refs/zerg")
}

// zergRef: a ref name (as given to update-ref or in a refspec) in git-zerg's
// state namespace. Short names count: git resolves zerg/features/x to
// refs/zerg/features/x.
func zergRef(r string) bool {
	r = strings.TrimPrefix(r, "+")
	return r == "refs/zerg" || strings.HasPrefix(r, "refs/zerg/") || strings.HasPrefix(r, "refs/zerg*") ||
		strings.HasPrefix(r, "zerg/features/") || r == "zerg/locks" || strings.HasPrefix(r, "zerg/gates/")
}

// zergBranch: a worker or staging branch name.
func zergBranch(b string) bool {
	return strings.HasPrefix(b, "zerg/") || strings.HasPrefix(b, "refs/heads/zerg/") || strings.HasPrefix(b, "heads/zerg/")
}

// gitGlobal reads git's options before the subcommand: -C dirs and -c
// settings. It returns the index of the subcommand.
func gitGlobal(args []string) (i int, dirs, configs []string) {
	for i < len(args) {
		a := args[i]
		switch {
		case a == "-C" || a == "-c":
			if i+1 < len(args) {
				if a == "-C" {
					dirs = append(dirs, args[i+1])
				} else {
					configs = append(configs, args[i+1])
				}
			}
			i += 2
		case a == "--git-dir" || a == "--work-tree" || a == "--namespace" || a == "--config-env" ||
			a == "--super-prefix" || a == "--list-cmds" || a == "--attr-source":
			if a == "--config-env" && i+1 < len(args) {
				configs = append(configs, args[i+1])
			}
			i += 2
		case strings.HasPrefix(a, "--config-env="):
			configs = append(configs, strings.TrimPrefix(a, "--config-env="))
			i++
		case strings.HasPrefix(a, "-"):
			i++
		default:
			return i, dirs, configs
		}
	}
	return i, dirs, configs
}

func hooksPathConfig(configs []string) bool {
	for _, c := range configs {
		k, _, _ := strings.Cut(c, "=")
		if strings.EqualFold(k, "core.hooksPath") {
			return true
		}
	}
	return false
}

func (st *guardState) git(args []string, c simple, worker bool) string {
	i, dirs, configs := gitGlobal(args)
	if i >= len(args) {
		return ""
	}
	sub, rest := args[i], args[i+1:]
	hooksOff := hooksPathConfig(configs)
	switch sub {
	case "commit":
		if hooksOff {
			return reasonHooksPath
		}
		if noVerify(rest, "mFcCt", "uS", commitValueOpts) {
			return reasonNoVerify
		}
	case "push":
		if hooksOff {
			return reasonHooksPath
		}
		if noVerify(rest, "o", "", pushValueOpts) {
			return reasonNoVerify
		}
		for _, d := range dirs {
			if st.inWorkerDir(d) {
				worker = true
			}
		}
		return pushCheck(rest, worker)
	case "merge", "am", "rebase", "cherry-pick", "revert", "pull":
		if hooksOff {
			return reasonHooksPath
		}
	case "update-ref":
		return updateRefCheck(rest, c, st.text)
	case "branch":
		return branchCheck(rest)
	case "config":
		return configCheck(rest)
	case "zerg":
		return st.zerg(rest, worker, dirs)
	default:
		// An alias (git ci = commit) cannot be told from here; a literal
		// --no-verify on a command we do not know is refused all the same.
		if !knownGit[sub] && hasLong(rest, "no-verify") {
			return reasonNoVerify
		}
	}
	return ""
}

// knownGit are git commands other than commit and push, whose --no-verify
// (if any) skips none of git-zerg's hooks.
var knownGit = map[string]bool{"merge": true, "pull": true, "rebase": true, "am": true, "cherry-pick": true,
	"revert": true, "worktree": true, "fetch": true, "checkout": true, "switch": true, "status": true, "log": true,
	"diff": true, "add": true, "show": true}

var commitValueOpts = map[string]bool{"message": true, "file": true, "author": true, "date": true,
	"reuse-message": true, "reedit-message": true, "fixup": true, "squash": true, "cleanup": true,
	"template": true, "trailer": true, "pathspec-from-file": true}

var pushValueOpts = map[string]bool{"repo": true, "push-option": true, "receive-pack": true, "exec": true}

// longName splits --name[=value]; ok is false for anything else.
func longName(a string) (name string, hasValue, ok bool) {
	if !strings.HasPrefix(a, "--") || a == "--" {
		return "", false, false
	}
	name, _, hasValue = strings.Cut(a[2:], "=")
	return name, hasValue, true
}

// abbrev: git takes a unique prefix of a long option; "no-veri" is the
// shortest that only --no-verify has.
func isNoVerify(name string) bool {
	return len(name) >= len("no-veri") && strings.HasPrefix("no-verify", name)
}

func hasLong(args []string, want string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if name, _, ok := longName(a); ok && (name == want || want == "no-verify" && isNoVerify(name)) {
			return true
		}
	}
	return false
}

// noVerify reports whether a commit or push skips the hooks: --no-verify
// (or an abbreviation; a later --verify undoes it) or, for commit, -n,
// also inside a cluster such as -anm. valueShort are the short options
// taking a value (the rest of the cluster, or the next word), optShort
// those taking an attached value only.
func noVerify(args []string, valueShort, optShort string, valueLong map[string]bool) bool {
	skip := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if name, hasValue, ok := longName(a); ok {
			switch {
			case isNoVerify(name):
				skip = true
			case name == "verify":
				skip = false
			case valueLong[name] && !hasValue:
				i++
			}
			continue
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		for j := 1; j < len(a); j++ {
			ch := a[j]
			if ch == 'n' && valueShort == "mFcCt" { // commit -n is --no-verify
				skip = true
				continue
			}
			if strings.IndexByte(valueShort, ch) >= 0 {
				if j == len(a)-1 {
					i++
				}
				break
			}
			if strings.IndexByte(optShort, ch) >= 0 {
				break
			}
		}
	}
	return skip
}

// pushCheck looks at the refspecs of a push.
func pushCheck(args []string, worker bool) string {
	var pos []string
	force, del, mirror, prune := false, false, false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if name, hasValue, ok := longName(a); ok {
			switch {
			case name == "force":
				force = true
			case name == "delete":
				del = true
			case name == "mirror":
				mirror = true
			case name == "prune":
				prune = true
			case pushValueOpts[name] && !hasValue:
				i++
			}
			continue
		}
		if len(a) > 1 && a[0] == '-' {
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 'f':
					force = true
				case 'd':
					del = true
				case 'o':
					if j == len(a)-1 {
						i++
					}
					j = len(a)
				}
			}
			continue
		}
		pos = append(pos, a)
	}
	if mirror {
		return reasonMirror
	}
	if len(pos) < 2 {
		return ""
	}
	for _, spec := range pos[1:] {
		plus := strings.HasPrefix(spec, "+")
		src, dst, hasDst := strings.Cut(strings.TrimPrefix(spec, "+"), ":")
		if !zergRef(src) && !(hasDst && zergRef(dst)) {
			continue
		}
		switch {
		case worker:
			return reasonWorkerPush
		case plus || force || del || prune || hasDst && src == "":
			return reasonForcePush
		}
	}
	return ""
}

func updateRefCheck(args []string, c simple, text string) string {
	stdin := false
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-m":
			i++
		case a == "--stdin":
			stdin = true
		case a == "--":
			pos = append(pos, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-"):
		default:
			pos = append(pos, a)
		}
	}
	if len(pos) > 0 {
		if zergRef(pos[0]) {
			return reasonRefs
		}
		if zergBranch(strings.TrimPrefix(pos[0], "refs/")) && strings.HasPrefix(pos[0], "refs/heads/zerg/") {
			return reasonBranches
		}
	}
	if stdin {
		for _, in := range c.stdin {
			if strings.Contains(in, "refs/zerg/") {
				return reasonRefs
			}
		}
		// Fed by a pipe: whatever the line holds.
		if strings.Contains(text, "refs/zerg/") {
			return reasonRefs
		}
	}
	return ""
}

func branchCheck(args []string) string {
	moving := false
	var names []string
	for _, a := range args {
		if name, _, ok := longName(a); ok {
			switch name {
			case "delete", "force", "move", "copy":
				moving = true
			}
			continue
		}
		if len(a) > 1 && a[0] == '-' {
			if strings.ContainsAny(a[1:], "dDfmMcC") {
				moving = true
			}
			continue
		}
		names = append(names, a)
	}
	if !moving {
		return ""
	}
	for _, n := range names {
		if zergBranch(n) {
			return reasonBranches
		}
	}
	return ""
}

// configCheck refuses setting or unsetting core.hooksPath; reading it is
// fine.
func configCheck(args []string) string {
	write := false
	for i, a := range args {
		switch a {
		case "--unset", "--unset-all", "--replace-all", "--add", "set", "unset":
			write = true
		}
		if strings.EqualFold(a, "core.hooksPath") {
			if write {
				return reasonHooksPath
			}
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				return reasonHooksPath
			}
		}
	}
	return ""
}

// zerg checks a git zerg command line.
func (st *guardState) zerg(args []string, worker bool, dirs []string) string {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		a := args[i]
		i++
		switch a {
		case "-C", "--C", "-f", "--feature", "-feature":
			if a == "-C" || a == "--C" {
				if i < len(args) {
					dirs = append(dirs, args[i])
				}
			}
			i++
		}
	}
	if i >= len(args) || args[i] != "unlock" {
		return ""
	}
	force := false
	for _, a := range args[i+1:] {
		if a == "--" {
			break
		}
		name, value, ok := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "force" && (!ok || value != "false" && value != "0") {
			force = true
		}
	}
	if !force {
		return ""
	}
	for _, d := range dirs {
		if st.inWorkerDir(d) {
			worker = true
		}
	}
	if worker {
		return reasonWorkerUnlock
	}
	return ""
}
