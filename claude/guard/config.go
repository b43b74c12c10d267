package guard

import (
	"strings"
)

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
