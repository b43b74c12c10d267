package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/git-zerg/git-zerg/rush/finish"
	"github.com/git-zerg/git-zerg/words"
)

// Cleanup is what `cleanup --json` prints.
type Cleanup struct {
	Feature     string   `json:"feature"`
	Worktrees   []string `json:"worktrees"`
	Branches    []string `json:"branches"`
	Staging     string   `json:"staging_checkout,omitempty"`
	Directories []string `json:"directories"`
}

// CleanupOf is the document of what cleanup removed.
func CleanupOf(feature string, c *finish.Cleaned) Cleanup {
	return Cleanup{feature, nonNil(c.Worktrees), nonNil(c.Branches), c.Staging, nonNil(c.Dirs)}
}

// CleanupText says in one line what cleanup removed.
func CleanupText(w io.Writer, feature string, c *finish.Cleaned) {
	var parts []string
	if n := len(c.Worktrees); n > 0 {
		parts = append(parts, words.Plural(n, "worktree"))
	}
	if n := len(c.Branches); n > 0 {
		parts = append(parts, words.Plural(n, "worker branch"))
	}
	if c.Staging != "" {
		parts = append(parts, "the gates' staging checkout")
	}
	if n := len(c.Dirs); n > 0 {
		parts = append(parts, words.Plural(n, "empty directory"))
	}
	if len(parts) == 0 {
		fmt.Fprintf(w, "cleaned up %s: nothing to remove\n", feature)
		return
	}
	fmt.Fprintf(w, "cleaned up %s: removed %s\n", feature, joinAnd(parts))
}

// joinAnd is "a, b and c".
func joinAnd(parts []string) string {
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
