package engine

import (
	"slices"

	forgeapi "github.com/git-zerg/git-zerg/forge"
)

// Withheld is what a command git-zerg does not trust (a worker, a
// verification, a gate, a worktree's setup) does not get of the
// environment: the forge credentials, but those the configuration passes
// through. With them a worker could push, merge or open pull requests as
// the user, outside every check.
func Withheld(pass []string) []string {
	var out []string
	for _, name := range forgeapi.CredentialVars {
		if !slices.Contains(pass, name) {
			out = append(out, name)
		}
	}
	return out
}
