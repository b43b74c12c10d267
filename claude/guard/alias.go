package guard

import (
	"path"
	"strings"
)

// refWriters are the git commands whose very job is to write refs: an
// alias to one of them is refused when it is set.
var refWriters = &wordSet{list: `update-ref symbolic-ref replace fast-import filter-branch send-pack`}

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
