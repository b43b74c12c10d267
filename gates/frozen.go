package gates

import (
	"sort"

	"github.com/git-zerg/git-zerg/levels"
)

// FrozenTouched returns the touched paths that a frozen path covers: the
// same file, a file under a frozen directory, or a glob's match.
func FrozenTouched(frozen, touched []string) []string {
	var out []string
	for _, f := range touched {
		for _, p := range frozen {
			if levels.Match(p, f) {
				out = append(out, f)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}
