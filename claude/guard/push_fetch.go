package guard

import (
	"strings"

	"github.com/git-zerg/git-zerg/lazy"
)

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
