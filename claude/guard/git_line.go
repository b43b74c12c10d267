package guard

import (
	"strings"
)

// gitCall is a git command line read up to its subcommand.
type gitCall struct {
	globals []string // the words before the subcommand
	dirs    []string // -C
	configs []gitConfig
	sub     string
	rest    []string
}

// gitConfig is a -c key=value, or a --config-env key=ENVVAR (env set: the
// value is out of sight).
type gitConfig struct {
	key, value string
	env        bool
}

// readGit reads git's options before the subcommand: -C dirs and -c
// settings.
func readGit(args []string) gitCall {
	var gc gitCall
	config := func(kv string, env bool) {
		k, v, _ := strings.Cut(kv, "=")
		gc.configs = append(gc.configs, gitConfig{key: k, value: v, env: env})
	}
	i := 0
	for i < len(args) {
		a := args[i]
		switch {
		case a == "-C" || a == "-c":
			if i+1 < len(args) {
				if a == "-C" {
					gc.dirs = append(gc.dirs, args[i+1])
				} else {
					config(args[i+1], false)
				}
			}
			i += 2
		case a == "--git-dir" || a == "--work-tree" || a == "--namespace" || a == "--config-env" ||
			a == "--super-prefix" || a == "--list-cmds" || a == "--attr-source":
			if a == "--config-env" && i+1 < len(args) {
				config(args[i+1], true)
			}
			i += 2
		case strings.HasPrefix(a, "--config-env="):
			config(strings.TrimPrefix(a, "--config-env="), true)
			i++
		case strings.HasPrefix(a, "-"):
			i++
		default:
			gc.globals, gc.sub, gc.rest = args[:i], a, args[i+1:]
			return gc
		}
	}
	gc.globals = args
	return gc
}

func contains(words []string, w string) bool {
	for _, x := range words {
		if x == w {
			return true
		}
	}
	return false
}

// gitCommands are git's own commands (builtins and the scripts shipped with
// it): git never lets an alias stand for one, so only another name is
// looked up as an alias.
var gitCommands = &wordSet{list: `add am annotate apply archive backfill bisect blame branch bugreport bundle
		cat-file check-attr check-ignore check-mailmap check-ref-format checkout checkout-index cherry
		cherry-pick citool clean clone column commit commit-graph commit-tree config count-objects credential
		credential-cache credential-store describe diagnose diff diff-files diff-index diff-tree difftool
		fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg for-each-ref for-each-repo
		format-patch fsck fsck-objects gc get-tar-commit-id grep gui hash-object help hook index-pack init
		init-db instaweb interpret-trailers last-modified log ls-files ls-remote ls-tree mailinfo mailsplit
		maintenance merge merge-base merge-file merge-index merge-one-file merge-tree mergetool mktag mktree
		multi-pack-index mv name-rev notes p4 pack-objects pack-redundant pack-refs patch-id prune
		prune-packed pull push quiltimport range-diff read-tree rebase receive-pack reflog refs remote repack
		replace replay repo request-pull rerere reset restore rev-list rev-parse revert rm scalar send-email
		send-pack shortlog show show-branch show-index show-ref sparse-checkout stage stash status
		stripspace submodule subtree svn switch symbolic-ref tag unpack-file unpack-objects update-index
		update-ref update-server-info upload-archive upload-pack var verify-commit verify-pack verify-tag
		version web--browse whatchanged worktree write-tree zerg lfs`}

// knownGit are git commands other than commit and push, whose --no-verify
// (if any) skips none of git-zerg's hooks.
var knownGit = &wordSet{list: `merge pull rebase am cherry-pick revert worktree fetch checkout switch status
	log diff add show`}

var commitValueOpts = &wordSet{list: `message file author date reuse-message reedit-message fixup squash
	cleanup template trailer pathspec-from-file`}

var pushValueOpts = &wordSet{list: `repo push-option receive-pack exec`}

var fetchValueOpts = &wordSet{list: `depth deepen shallow-since shallow-exclude upload-pack jobs server-option
	negotiation-tip filter refmap recurse-submodules-default submodule-prefix`}

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
