package guard

import (
	"strings"
)

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
