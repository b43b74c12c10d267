package guard

import (
	"path"
	"strings"
)

// hidingArgs: git commands that write refs or settings from their
// arguments, which xargs would give out of sight.
var hidingArgs = &wordSet{list: `update-ref symbolic-ref branch push fetch pull checkout switch reset replace
	config worktree send-pack commit`}

// pathArgs: git commands whose words after "--" are paths alone.
var pathArgs = &wordSet{list: `checkout reset commit`}

// git checks a git command line; depth counts aliases and nested shells.
func (st *guardState) git(args []string, c simple, worker, hidden bool, depth int) string {
	gc := readGit(args)
	for _, cf := range gc.configs {
		if r := configKeyReason(cf.key); r != "" {
			return r
		}
		if cf.env && strings.HasPrefix(strings.ToLower(cf.key), "alias.") {
			return reasonAlias
		}
	}
	if gc.sub == "" {
		return ""
	}
	if opaque(gc.sub) {
		return reasonHidden
	}
	for _, d := range gc.dirs {
		if st.inWorkerDir(d) {
			worker = true
		}
	}
	if hidden && hidingArgs.words()[gc.sub] && !(pathArgs.words()[gc.sub] && contains(gc.rest, "--")) {
		return reasonHidden
	}
	dir := st.gitDir(gc.dirs)
	rest := gc.rest
	switch gc.sub {
	case "commit":
		if noVerify(rest, "mFcCt", "uS", commitValueOpts.words()) {
			return reasonNoVerify
		}
		return st.movesHead(dir)
	case "push":
		if noVerify(rest, "o", "", pushValueOpts.words()) {
			return reasonNoVerify
		}
		return pushCheck(rest, worker)
	case "fetch":
		return fetchCheck(rest)
	case "pull":
		if r := fetchCheck(rest); r != "" {
			return r
		}
		return st.movesHead(dir)
	case "rebase":
		// --update-refs moves every branch in the rebased range, staging
		// or a worker's among them; --exec runs shell commands.
		for i, a := range rest {
			switch {
			case a == "--update-refs":
				return reasonBranches
			case (a == "-x" || a == "--exec") && i+1 < len(rest):
				if r := st.sub(worker).check(parseShell(rest[i+1], depth+1), depth+1); r != "" {
					return r
				}
			case strings.HasPrefix(a, "--exec="):
				if r := st.sub(worker).check(parseShell(strings.TrimPrefix(a, "--exec="), depth+1), depth+1); r != "" {
					return r
				}
			}
		}
		return st.movesHead(dir)
	case "submodule", "bisect":
		// submodule foreach and bisect run run a command of their own.
		if len(rest) > 1 && (gc.sub == "submodule" && rest[0] == "foreach" || gc.sub == "bisect" && rest[0] == "run") {
			words := rest[1:]
			for len(words) > 0 && strings.HasPrefix(words[0], "-") {
				words = words[1:]
			}
			if gc.sub == "submodule" && len(words) == 1 {
				return st.sub(worker).check(parseShell(words[0], depth+1), depth+1)
			}
			return st.sub(worker).simple(simple{words: words}, depth+1)
		}
	case "merge", "am", "cherry-pick", "revert":
		return st.movesHead(dir)
	case "update-ref":
		return st.updateRefCheck(rest, c, dir)
	case "symbolic-ref":
		return symbolicRefCheck(rest)
	case "branch":
		return st.branchCheck(rest, dir)
	case "checkout", "switch":
		return st.checkoutCheck(gc.sub, rest)
	case "reset":
		return st.resetCheck(rest, dir)
	case "worktree":
		return worktreeCheck(rest)
	case "config":
		return st.configCheck(rest, worker, depth)
	case "replace":
		return replaceCheck(rest)
	case "fast-import":
		return stdinRefs(c, st.text)
	case "send-pack":
		// push's plumbing, with no pre-push hook: no refspec of it may
		// name git-zerg's refs, on either side.
		for _, a := range rest {
			if opaque(a) {
				return reasonHidden
			}
			src, dst, _ := strings.Cut(strings.TrimPrefix(a, "+"), ":")
			if r := protectedRef(src); r != "" {
				return r
			}
			if r := protectedRef(dst); r != "" {
				return r
			}
		}
	case "filter-branch":
		for _, a := range rest {
			if a == "--all" || zergRef(a) || zergBranch(a) || opaque(a) {
				return reasonRefs
			}
		}
	case "zerg":
		return st.zerg(rest, worker, gc.dirs)
	default:
		if !gitCommands.words()[gc.sub] {
			if value, ok := st.alias(gc, dir); ok {
				return st.runAlias(gc, value, c, worker, depth)
			}
		}
		// An alias cannot always be resolved; a literal --no-verify on a
		// command we do not know is refused all the same.
		if !knownGit.words()[gc.sub] && hasLong(rest, "no-verify") {
			return reasonNoVerify
		}
	}
	return ""
}

// gitDir is the directory a git command runs in, as written, after its -C
// options.
func (st *guardState) gitDir(dirs []string) string {
	d := st.dir
	for _, c := range dirs {
		if path.IsAbs(c) || d == "" {
			d = c
		} else {
			d = path.Join(d, c)
		}
	}
	return d
}

// onStaging reports whether the branch checked out in dir is a staging
// branch, or may be: an earlier command of the line switched to a branch
// the guard cannot name.
func (st *guardState) onStaging(dir string) bool {
	if st.switched {
		return st.switchedTo == "" || stagingBranch(st.switchedTo)
	}
	if st.g.Branch == nil {
		return false
	}
	b, ok := st.branches[dir]
	if !ok {
		b = st.g.Branch(dir)
		st.branches[dir] = b
	}
	return stagingBranch(b)
}

// movesHead refuses a command that moves the checked-out branch when that
// is staging.
func (st *guardState) movesHead(dir string) string {
	if st.onStaging(dir) {
		return reasonStaging
	}
	return ""
}
