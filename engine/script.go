package engine

import (
	"os"
	"path/filepath"

	"github.com/git-zerg/git-zerg/worktree"
)

// ScriptCommitted refuses a worker command's script (sh work.sh, see
// proc.LocalScript) that the workers' worktrees will not have: they are
// made from commits, the staging branch's or HEAD's, so a script present
// only in the user's checkout fails every task the same way, with the
// shell's "cannot open". The rush's preflight and doctor both ask it, so
// that they never disagree on what a fresh worktree holds.
func ScriptCommitted(g *Engine, script string) error {
	if script == "" {
		return nil
	}
	git := Git(g.Store)
	for _, rev := range []string{"refs/heads/" + worktree.StagingBranch(g.Feature), "HEAD"} {
		if _, err := git.Line(g.Context(), "rev-parse", "--verify", "-q", rev+":"+script); err == nil {
			return nil
		}
	}
	why := "not committed: the workers start from commits and will not see it"
	hint := "git add " + script + " && git commit"
	if _, err := os.Lstat(filepath.Join(g.Store.Top, filepath.FromSlash(script))); err != nil {
		why, hint = "no such file in the repository", "fix workers.command in .zerg/config.toml, or add the script"
	}
	return &Error{Kind: Usage, What: "worker script " + script + " is missing", Why: why, Hint: hint}
}
