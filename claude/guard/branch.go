package guard

import (
	"strings"
)

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
