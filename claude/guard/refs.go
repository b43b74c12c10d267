package guard

import (
	"strings"
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

// hiddenRef: a ref or branch name built from what the guard does not see
// (as opaque, or a glob or brace expansion, which no valid ref name holds)
// whose visible start leaves it free to name one of git-zerg's refs:
// refs/heads/$B may be staging, refs/tags/$T may not.
func hiddenRef(w string) bool {
	i := strings.IndexAny(w, "$`*?[{")
	if i < 0 {
		return false
	}
	lit := strings.TrimPrefix(w[:i], "+")
	for _, p := range []string{"refs/zerg/", "refs/replace/", "refs/heads/zerg/", "heads/zerg/", "zerg/"} {
		if strings.HasPrefix(lit, p) || strings.HasPrefix(p, lit) {
			return true
		}
	}
	return false
}

// hiddenSpec: a refspec the guard cannot read: what the shell puts before
// its colon may bring a colon and a destination of its own.
func hiddenSpec(spec string) bool {
	i := strings.IndexAny(spec, "$`")
	if i < 0 {
		return false
	}
	c := strings.IndexByte(spec, ':')
	if c < 0 || i < c {
		return true
	}
	return hiddenRef(spec[c+1:])
}
