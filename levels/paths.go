package levels

import (
	"fmt"
	"path"
	"strings"
)

// isGlob reports whether p contains glob syntax (*, ?, or [...]). Paths
// may not contain backslashes, so there is no escaping to account for.
func isGlob(p string) bool {
	return strings.ContainsAny(p, "*?[")
}

// ownerKey reduces an owned path to what ownership comparisons look at: a
// plain file (dir == false, key is the path), or a directory prefix that
// ends in "/" or is "" for the whole repository (dir == true). A glob is
// reduced to the directory holding its first wildcard, which may own more
// than the glob matches but never less; being too cautious only costs
// parallelism, being too bold costs a merge conflict.
func ownerKey(p string) (key string, dir bool) {
	if i := strings.IndexAny(p, "*?["); i >= 0 {
		return p[:strings.LastIndexByte(p[:i], '/')+1], true
	}
	if strings.HasSuffix(p, "/") {
		return p, true
	}
	return p, false
}

// Overlap reports whether two owned paths may name a common file, so that
// tasks owning them must not run side by side. Equal paths overlap, a
// directory ("src/") overlaps everything under it, and a glob counts as its
// literal directory prefix ("zerg/**/*.py" as "zerg/", "*.go" as the whole
// repository).
func Overlap(a, b string) bool {
	ka, da := ownerKey(a)
	kb, db := ownerKey(b)
	switch {
	case !da && !db:
		return ka == kb
	case da && db:
		return strings.HasPrefix(ka, kb) || strings.HasPrefix(kb, ka)
	case da:
		return strings.HasPrefix(kb, ka)
	default:
		return strings.HasPrefix(ka, kb)
	}
}

// Match reports whether the concrete file path file (no trailing slash) is
// owned by pattern: the same path, a file under a pattern ending in "/", or
// a glob match where * and ? stay within one path component, [...] is a
// character class, and a ** component spans any number of components,
// including none. A glob ending in "/" owns everything under the
// directories it matches.
func Match(pattern, file string) bool {
	if pattern == file {
		return true
	}
	dir := strings.HasSuffix(pattern, "/")
	if !isGlob(pattern) {
		return dir && strings.HasPrefix(file, pattern)
	}
	pc := strings.Split(strings.TrimSuffix(pattern, "/"), "/")
	fc := strings.Split(file, "/")
	return matchComponents(pc, fc, dir)
}

// matchComponents is a table-driven match, so a pattern with several **
// cannot make it backtrack exponentially. Row i of the table says, for
// each j, whether pc[i:] matches fc[j:]; only two rows are kept.
func matchComponents(pc, fc []string, dir bool) bool {
	nf := len(fc)
	next := make([]bool, nf+1) // row i+1
	cur := make([]bool, nf+1)  // row i
	for j := 0; j <= nf; j++ {
		// An exhausted directory pattern matches when something is left
		// below it; an exhausted file pattern only at the end.
		next[j] = (dir && j < nf) || (!dir && j == nf)
	}
	for i := len(pc) - 1; i >= 0; i-- {
		for j := nf; j >= 0; j-- {
			if pc[i] == "**" {
				cur[j] = next[j] || (j < nf && cur[j+1])
				continue
			}
			cur[j] = false
			if j < nf && next[j+1] {
				ok, err := path.Match(pc[i], fc[j])
				cur[j] = ok && err == nil
			}
		}
		next, cur = cur, next
	}
	return next[0]
}

// checkPath returns why p is not acceptable as a task path, or "".
func checkPath(p string) string {
	switch {
	case p == "":
		return "empty path"
	case strings.IndexByte(p, 0) >= 0:
		return fmt.Sprintf("path %q contains a NUL byte", p)
	case strings.Contains(p, `\`):
		return fmt.Sprintf("path %q contains a backslash; use \"/\" to separate directories", p)
	case strings.HasPrefix(p, "/"):
		return fmt.Sprintf("path %q is absolute; paths are relative to the repository root", p)
	}
	dir := strings.HasSuffix(p, "/")
	body := strings.TrimSuffix(p, "/")
	for c := range strings.SplitSeq(body, "/") {
		if c == ".." {
			return fmt.Sprintf("path %q contains \"..\"; paths must stay inside the repository", p)
		}
	}
	if body == "." {
		return fmt.Sprintf("path %q names the repository root; use \"**\" to own everything", p)
	}
	if clean := path.Clean(body); clean != body {
		if dir {
			clean += "/"
		}
		return fmt.Sprintf("path %q is not clean; write %q", p, clean)
	}
	first, _, _ := strings.Cut(body, "/")
	// Case-insensitive because on macOS and Windows ".GIT" is ".git".
	if strings.EqualFold(first, ".git") {
		return fmt.Sprintf("path %q is inside .git", p)
	}
	if isGlob(body) {
		for c := range strings.SplitSeq(body, "/") {
			if _, err := path.Match(c, ""); err != nil {
				return fmt.Sprintf("path %q is not a valid glob: %v", p, err)
			}
		}
	}
	return ""
}
