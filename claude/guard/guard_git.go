package guard

import (
	"path"
	"strings"

	"github.com/git-zerg/git-zerg/lazy"
)

// zergRef: a ref name (as given to update-ref or in a refspec) in git-zerg's
// state namespace. Short names count: git resolves zerg/features/x to
// refs/zerg/features/x.
func zergRef(r string) bool {
	r = strings.ToLower(strings.TrimPrefix(r, "+")) // loose refs on a case-insensitive file system
	return r == "refs/zerg" || strings.HasPrefix(r, "refs/zerg/") || strings.HasPrefix(r, "refs/zerg*") ||
		strings.HasPrefix(r, "zerg/features/") || r == "zerg/locks" || strings.HasPrefix(r, "zerg/gates/")
}

// replaceRef: a ref that makes git show another object in place of one.
func replaceRef(r string) bool {
	r = strings.ToLower(strings.TrimPrefix(r, "+"))
	return r == "refs/replace" || strings.HasPrefix(r, "refs/replace/") || strings.HasPrefix(r, "refs/replace*")
}

// zergBranch: a worker or staging branch name.
func zergBranch(b string) bool {
	b = strings.ToLower(strings.TrimPrefix(b, "+"))
	return strings.HasPrefix(b, "zerg/") || strings.HasPrefix(b, "refs/heads/zerg/") || strings.HasPrefix(b, "heads/zerg/")
}

// stagingBranch: zerg/<feature>/staging, however it is spelled.
func stagingBranch(b string) bool {
	b = strings.ToLower(strings.TrimPrefix(b, "+"))
	b = strings.TrimPrefix(strings.TrimPrefix(b, "refs/"), "heads/")
	f, ok := strings.CutPrefix(b, "zerg/")
	return ok && strings.HasSuffix(f, "/staging") && len(f) > len("/staging")
}

// protectedRef is why writing ref r is refused, "" when it may be written.
func protectedRef(r string) string {
	switch {
	case zergRef(r):
		return reasonRefs
	case replaceRef(r):
		return reasonReplace
	case stagingBranch(r):
		return reasonStaging
	case zergBranch(r):
		return reasonBranches
	}
	return ""
}

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

// riskyConfigKey: a setting that turns off the hooks or changes what a git
// command runs, out of sight of a check of that command.
func riskyConfigKey(k string) bool {
	k = strings.ToLower(k)
	return k == "core.hookspath" || strings.HasPrefix(k, "alias.") || k == "include.path" || strings.HasPrefix(k, "includeif.")
}

// configKeyReason is why a setting given on the command line (-c), in
// the environment or in git config is refused, "" when it may be (an
// alias is checked by its value).
func configKeyReason(k string) string {
	k = strings.ToLower(k)
	switch {
	case k == "core.hookspath":
		return reasonHooksPath
	case k == "include.path" || strings.HasPrefix(k, "includeif."):
		return reasonConfigInclude
	case k == "rebase.updaterefs":
		return reasonBranches
	}
	return ""
}

// storedKeyReason is why a setting may not be written to a config file,
// where it outlives the command: which files git sees, and the programs
// git runs later, for the user and for git-zerg alike.
func storedKeyReason(k string) string {
	if r := configKeyReason(k); r != "" {
		return r
	}
	k = strings.ToLower(k)
	switch {
	case k == "core.excludesfile":
		return reasonExcludes
	case programKeys.words()[k]:
		return reasonConfigProgram
	}
	section, rest, _ := strings.Cut(k, ".")
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		if programSubkeys.words()[section+".*."+rest[i+1:]] {
			return reasonConfigProgram
		}
	}
	return ""
}

var programKeys = &wordSet{list: `core.fsmonitor core.sshcommand core.pager core.editor core.askpass
	diff.external gpg.program credential.helper sequence.editor uploadpack.packobjectshook core.gitproxy`}

var programSubkeys = &wordSet{list: `filter.*.clean filter.*.smudge filter.*.process merge.*.driver
	diff.*.textconv diff.*.command gpg.*.program remote.*.uploadpack remote.*.receivepack
	credential.*.helper`}

// refWriters are the git commands whose very job is to write refs: an
// alias to one of them is refused when it is set.
var refWriters = &wordSet{list: `update-ref symbolic-ref replace fast-import filter-branch send-pack`}

// hidingArgs: git commands that write refs or settings from their
// arguments, which xargs would give out of sight.
var hidingArgs = &wordSet{list: `update-ref symbolic-ref branch push fetch pull checkout switch reset replace
	config worktree send-pack commit`}

// pathArgs: git commands whose words after "--" are paths alone.
var pathArgs = &wordSet{list: `checkout reset commit`}

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

// alias is the value of the alias gc.sub: from -c on the command line (the
// last one wins, as in git), else from the repository's config.
func (st *guardState) alias(gc gitCall, dir string) (string, bool) {
	key := "alias." + strings.ToLower(gc.sub)
	for i := len(gc.configs) - 1; i >= 0; i-- {
		if strings.ToLower(gc.configs[i].key) == key {
			return gc.configs[i].value, true
		}
	}
	if st.g.Alias == nil {
		return "", false
	}
	return st.g.Alias(dir, gc.sub)
}

// runAlias checks what an alias runs: a shell alias (!...) as a shell
// command, any other as the git command it expands to, with the options
// before it and the arguments after it.
func (st *guardState) runAlias(gc gitCall, value string, c simple, worker bool, depth int) string {
	if depth >= maxDepth {
		return reasonAlias
	}
	if script, ok := strings.CutPrefix(value, "!"); ok {
		return st.sub(worker).check(parseShell(script, depth+1), depth+1)
	}
	cmds := parseShell(value, depth+1)
	if len(cmds) == 0 {
		return ""
	}
	args := append(append(append([]string(nil), gc.globals...), cmds[0].words...), gc.rest...)
	return st.git(args, c, worker, false, depth+1)
}

// aliasCheck is why an alias may not be set to value.
func (st *guardState) aliasCheck(value string, worker bool, depth int) string {
	if script, ok := strings.CutPrefix(value, "!"); ok {
		if depth >= maxDepth {
			return reasonAlias
		}
		return st.sub(worker).check(parseShell(script, depth+1), depth+1)
	}
	if opaque(value) {
		return reasonHidden
	}
	cmds := parseShell(value, depth+1)
	if len(cmds) == 0 || len(cmds[0].words) == 0 {
		return ""
	}
	if gc := readGit(cmds[0].words); refWriters.words()[gc.sub] || refWriters.words()[strings.TrimPrefix(path.Base(cmds[0].words[0]), "git-")] {
		return reasonAlias
	}
	if depth >= maxDepth {
		return reasonAlias
	}
	return st.git(cmds[0].words, simple{}, worker, false, depth+1)
}

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

// currentBranch are command substitutions whose value is the current
// branch's name, which a push may name as well as HEAD.
var currentBranch = &lazy.Value[*strings.Replacer]{Build: func() *strings.Replacer {
	return strings.NewReplacer(
		"$(git branch --show-current)", "HEAD", "`git branch --show-current`", "HEAD",
		"$(git rev-parse --abbrev-ref HEAD)", "HEAD", "`git rev-parse --abbrev-ref HEAD`", "HEAD",
		"$(git symbolic-ref --short HEAD)", "HEAD", "`git symbolic-ref --short HEAD`", "HEAD")
}}

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
			case name == "force" || name == "force-with-lease" || name == "force-if-includes":
				force = true
			case name == "delete":
				del = true
			case name == "mirror":
				mirror = true
			case name == "prune":
				prune = true
			case pushValueOpts.words()[name] && !hasValue:
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
	// A push to "." (or to a repository the guard cannot name) updates
	// this repository's own refs.
	local := pos[0] == "." || opaque(pos[0])
	for _, spec := range pos[1:] {
		spec = currentBranch.Get().Replace(spec)
		if hiddenSpec(spec) {
			return reasonHidden
		}
		plus := strings.HasPrefix(spec, "+")
		src, dst, hasDst := strings.Cut(strings.TrimPrefix(spec, "+"), ":")
		if !hasDst {
			dst = src
		}
		if stagingBranch(dst) || replaceRef(dst) || local && protectedRef(dst) != "" {
			return protectedRef(dst)
		}
		if !zergRef(src) && !zergRef(dst) {
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

// fetchCheck refuses a fetch (or pull) whose refspecs write git-zerg's
// refs here: `git fetch . x:refs/zerg/...` is update-ref under another
// name.
func fetchCheck(args []string) string {
	var pos, specs []string
	multiple := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if name, hasValue, ok := longName(a); ok {
			switch {
			case name == "multiple" || name == "all":
				multiple = true
			case name == "refmap":
				v, _ := strings.CutPrefix(a, "--refmap=")
				if !hasValue && i+1 < len(args) {
					i++
					v = args[i]
				}
				specs = append(specs, v)
			case fetchValueOpts.words()[name] && !hasValue:
				i++
			}
			continue
		}
		if len(a) > 1 && a[0] == '-' {
			if strings.ContainsAny(a[len(a)-1:], "jo") { // -j N, -o OPTION
				i++
			}
			continue
		}
		pos = append(pos, a)
	}
	if !multiple && len(pos) > 1 {
		specs = append(specs, pos[1:]...)
	}
	for _, spec := range specs {
		if hiddenSpec(spec) {
			return reasonHidden
		}
		_, dst, hasDst := strings.Cut(strings.TrimPrefix(spec, "+"), ":")
		if hasDst {
			if r := protectedRef(dst); r != "" {
				return r
			}
		}
	}
	return ""
}

func (st *guardState) updateRefCheck(args []string, c simple, dir string) string {
	stdin, noDeref := false, false
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-m":
			i++
		case a == "--stdin":
			stdin = true
		case a == "--no-deref":
			noDeref = true
		case a == "--":
			pos = append(pos, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-"):
		default:
			pos = append(pos, a)
		}
	}
	if len(pos) > 0 {
		switch ref := pos[0]; {
		case hiddenRef(ref):
			return reasonHidden
		case protectedRef(ref) != "":
			return protectedRef(ref)
		case ref == "HEAD" && !noDeref:
			return st.movesHead(dir)
		}
	}
	if stdin {
		return stdinRefs(c, st.text)
	}
	return ""
}

// stdinRefs checks the refs that update-ref --stdin or fast-import read:
// only a here-document or here-string can be read before they run.
func stdinRefs(c simple, text string) string {
	if strings.Contains(text, "refs/zerg/") {
		return reasonRefs // fed by a pipe: whatever the line holds
	}
	if len(c.stdin) == 0 {
		return reasonHiddenInput
	}
	for _, in := range c.stdin {
		for _, f := range strings.Fields(in) {
			if opaque(f) {
				return reasonHidden
			}
			if r := protectedRef(f); r != "" {
				return r
			}
		}
	}
	return ""
}

// symbolicRefCheck: `symbolic-ref NAME REF` and `-d NAME` write NAME;
// HEAD pointed at staging or at the state would move them on the next
// commit.
func symbolicRefCheck(args []string) string {
	del := false
	var pos []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-m":
			i++
		case a == "-d" || a == "--delete":
			del = true
		case strings.HasPrefix(a, "-"):
		default:
			pos = append(pos, a)
		}
	}
	if len(pos) == 0 || len(pos) == 1 && !del {
		return ""
	}
	for _, r := range pos[:min(2, len(pos))] {
		if hiddenRef(r) {
			return reasonHidden
		}
		if why := protectedRef(r); why != "" {
			return why
		}
	}
	return ""
}

func (st *guardState) branchCheck(args []string, dir string) string {
	moving, rename, create := false, false, true
	var names []string
	for _, a := range args {
		if name, _, ok := longName(a); ok {
			switch name {
			case "delete", "force", "move", "copy":
				moving = true
				rename = rename || name == "move"
			case "track", "no-track", "quiet", "create-reflog", "recurse-submodules":
			default:
				create = false // a listing, an upstream, a description
			}
			continue
		}
		if len(a) > 1 && a[0] == '-' {
			if strings.ContainsAny(a[1:], "dDfmMcC") {
				moving = true
			}
			rename = rename || strings.ContainsAny(a[1:], "mM")
			create = create && strings.Trim(a[1:], "tq") == ""
			continue
		}
		names = append(names, a)
	}
	if !moving {
		// Creating a branch is fine, but not one named as staging: git-zerg
		// would take it for the feature's.
		if create && len(names) > 0 && stagingBranch(names[0]) {
			return reasonStaging
		}
		return ""
	}
	for _, n := range names {
		if hiddenRef(n) {
			return reasonHidden
		}
		if zergBranch(n) {
			return reasonBranches
		}
	}
	if rename && len(names) == 1 {
		return st.movesHead(dir) // the current branch renamed
	}
	return ""
}

// checkoutCheck: checkout -B / switch -C of a zerg branch moves it;
// switching onto staging lets the next commit or reset move it; creating a
// branch named as staging makes one git-zerg would take for the feature's.
// A switch to a branch the guard cannot name is remembered, for what
// follows on the line.
func (st *guardState) checkoutCheck(sub string, args []string) string {
	detach, paths := false, false
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			paths = true
			break
		}
		name, hasValue, long := longName(a)
		flag := ""
		switch {
		case long && (name == "force-create" || name == "create" || name == "orphan"):
			flag = map[string]string{"force-create": "-C", "create": "-c", "orphan": "--orphan"}[name]
		case long && name == "detach":
			detach = true
			continue
		case long:
			continue
		case len(a) > 1 && a[0] == '-':
			// A cluster such as -fB, whose value is the rest of it or
			// the next word.
			j := strings.IndexAny(a[1:], "bBcC") + 1
			if j == 0 {
				detach = detach || sub == "switch" && strings.ContainsRune(a, 'd')
				continue
			}
			flag = "-" + a[j:j+1]
			if j+1 < len(a) {
				a, long, hasValue = "="+a[j+1:], true, true
			}
		default:
			pos = append(pos, a)
			continue
		}
		v := ""
		if long && hasValue {
			v = a[strings.IndexByte(a, '=')+1:]
		} else if i+1 < len(args) {
			i++
			v = args[i]
		}
		if sub == "checkout" && flag == "-c" || sub == "checkout" && flag == "-C" {
			continue // checkout has no -c/-C of its own
		}
		force := flag == "-B" || flag == "-C" && sub == "switch"
		switch {
		case hiddenRef(v):
			return reasonHidden
		case stagingBranch(v):
			return reasonStaging
		case force && zergBranch(v):
			return reasonBranches
		}
		st.switched, st.switchedTo = true, v
		return ""
	}
	if detach || paths || len(pos) != 1 {
		return "" // a look at a commit, or files taken from one
	}
	switch {
	case stagingBranch(pos[0]):
		return reasonStaging
	case hiddenRef(pos[0]) || pos[0] == "-" || strings.HasPrefix(pos[0], "@{-"): // the branch before: unknown here
		st.switched, st.switchedTo = true, ""
	default:
		st.switched, st.switchedTo = true, pos[0]
	}
	return ""
}

// resetCheck: a reset to a commit moves the checked-out branch; with
// paths it moves nothing.
func (st *guardState) resetCheck(args []string, dir string) string {
	var pos []string
	for _, a := range args {
		switch {
		case a == "--" || a == "-p" || a == "--patch" || strings.HasPrefix(a, "--pathspec-from-file"):
			return ""
		case strings.HasPrefix(a, "-"):
		default:
			pos = append(pos, a)
		}
	}
	if len(pos) != 1 {
		return ""
	}
	return st.movesHead(dir)
}

// worktreeCheck: `worktree add` creates or moves a branch (-b, -B) or
// checks one out.
func worktreeCheck(args []string) string {
	if len(args) == 0 || args[0] != "add" {
		return ""
	}
	detach := false
	var pos []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		if len(a) > 2 && (a[:2] == "-b" || a[:2] == "-B") { // -Bname
			args = append(append(append([]string(nil), args[:i]...), a[:2], a[2:]), args[i+1:]...)
			a = a[:2]
		}
		switch {
		case a == "-b" || a == "-B" || a == "--orphan":
			if i+1 < len(args) {
				i++
				v := args[i]
				switch {
				case hiddenRef(v):
					return reasonHidden
				case stagingBranch(v):
					return reasonStaging
				case a == "-B" && zergBranch(v):
					return reasonBranches
				}
			}
			return ""
		case a == "--detach" || a == "-d":
			detach = true
		case a == "--reason":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			pos = append(pos, a)
		}
	}
	if !detach && len(pos) == 2 && stagingBranch(pos[1]) {
		return reasonStaging
	}
	return ""
}

// replaceCheck refuses every git replace but a listing.
func replaceCheck(args []string) string {
	for _, a := range args {
		if a == "-l" || a == "--list" {
			return ""
		}
		if !strings.HasPrefix(a, "--format") {
			return reasonReplace
		}
	}
	return ""
}

// configCheck refuses writing the settings that turn off the hooks or
// change what a command runs out of sight: core.hooksPath, includes, an
// alias to a command that writes refs (or that the guard would refuse),
// a remote's refspecs into refs/zerg/. Reading any of them is fine.
func (st *guardState) configCheck(args []string, worker bool, depth int) string {
	write, read := false, false
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		// As git, options end at the key (a value may start with "-"),
		// or at the word after a subcommand (git config set ...).
		if len(pos) > 1 || len(pos) == 1 && !configSubcommands.words()[pos[0]] {
			pos = append(pos, a)
			continue
		}
		name, hasValue, long := longName(a)
		switch {
		case a == "--unset" || a == "--unset-all" || a == "--replace-all" || a == "--add" ||
			a == "--rename-section" || a == "--remove-section":
			write = true
		case a == "--get" || a == "--get-all" || a == "--get-regexp" || a == "--get-urlmatch" || a == "-l" ||
			a == "--list" || a == "--get-color" || a == "--get-colorbool":
			read = true
		case a == "-f" || long && !hasValue && (name == "file" || name == "blob" || name == "type" || name == "default" ||
			name == "comment" || name == "value"):
			i++
		case strings.HasPrefix(a, "-"):
		default:
			pos = append(pos, a)
		}
	}
	if len(pos) > 0 {
		switch pos[0] {
		case "set", "unset", "rename-section", "remove-section":
			write, pos = true, pos[1:]
		case "get", "list", "edit":
			return ""
		}
	}
	if len(pos) == 0 || read || !write && len(pos) < 2 {
		return ""
	}
	key, value := pos[0], ""
	if len(pos) > 1 {
		value = pos[1]
	}
	if opaque(key) {
		return reasonHidden
	}
	if r := storedKeyReason(key); r != "" {
		return r
	}
	lower := strings.ToLower(key)
	switch {
	case strings.HasPrefix(lower, "alias.") && value != "":
		if r := st.aliasCheck(value, worker, depth); r != "" {
			return r
		}
	case strings.HasPrefix(lower, "remote.") && (strings.HasSuffix(lower, ".fetch") || strings.HasSuffix(lower, ".push")):
		if opaque(value) {
			return reasonHidden
		}
		_, dst, _ := strings.Cut(strings.TrimPrefix(value, "+"), ":")
		if r := protectedRef(dst); r != "" {
			return r
		}
	}
	return ""
}

var configSubcommands = &wordSet{list: `set unset get list edit rename-section remove-section`}

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
