package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	forgeapi "github.com/git-zerg/git-zerg/forge"
	"github.com/git-zerg/git-zerg/state"
)

// The forge side of the engine: which forge repository a feature's issues
// and pull requests live in, and its failures said as engine errors.

// ForgeRepo is the repository the configuration names (forge.repo), else
// the one the remote's URL names; ok is false when neither does.
func (g *Engine) ForgeRepo() (repo forgeapi.Repo, ok bool, err error) {
	if g.Config != nil && g.Config.Forge.Repo != "" {
		r, err := forgeapi.ParseRepo(g.Config.Forge.Repo)
		return r, err == nil, err
	}
	remote := g.remote()
	u, err := Git(g.Store).Line(g.Context(), "remote", "get-url", "--", remote)
	if err != nil || u == "" {
		return forgeapi.Repo{}, false, nil
	}
	r, err := forgeapi.RepoFromURL(u)
	if err != nil {
		return forgeapi.Repo{}, false, nil
	}
	return r, true, nil
}

func (g *Engine) remote() string {
	if g.Config != nil && g.Config.Sync.Remote != "" {
		return g.Config.Sync.Remote
	}
	return "origin"
}

// Forge is the client of the feature's forge repository. A command that
// needs the forge when none is configured gets a usage error: nothing was
// asked of anyone, and nothing is written.
func (g *Engine) Forge() (*forgeapi.Client, error) {
	repo, ok, err := g.ForgeRepo()
	if err != nil {
		return nil, &Error{Kind: Usage, What: "bad forge.repo", Why: err.Error()}
	}
	if !ok {
		return nil, &Error{Kind: Usage, What: "no forge configured",
			Why:  fmt.Sprintf("forge.repo is not set and the URL of remote %s names no forge repository", g.remote()),
			Hint: `set [forge] repo = "owner/name" in .zerg/config.toml`}
	}
	api := ""
	if g.Config != nil {
		api = g.Config.Forge.API
	}
	c, err := forgeapi.New(forgeapi.Options{Repo: repo, API: api, Token: forgeapi.Token()})
	if err != nil {
		return nil, &Error{Kind: Usage, What: "bad forge.api", Why: err.Error()}
	}
	return c, nil
}

// withheld is what a command git-zerg does not trust (a worker, a
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

// forgeErr says a forge failure as one line; the request failed, nothing
// was recorded.
func forgeErr(err error) error {
	var fe *forgeapi.Error
	if errors.As(err, &fe) {
		return &Error{Kind: Failed, What: "forge: " + fe.Error()}
	}
	return err
}

// closesLines is the "Closes #N" lines of a pull request body, one per issue.
func closesLines(issues []int) string {
	var b strings.Builder
	for _, n := range issues {
		fmt.Fprintf(&b, "Closes #%d\n", n)
	}
	return b.String()
}

// forgeTasks is the forge's client and the feature's tasks, what every
// command that reconciles the two starts from.
func (g *Engine) forgeTasks() (*forgeapi.Client, []*state.Task, error) {
	c, err := g.Forge()
	if err != nil {
		return nil, nil, err
	}
	tx, err := g.View()
	if err != nil {
		return nil, nil, err
	}
	if !tx.Exists() {
		return nil, nil, notPlanned(g.Feature)
	}
	tasks, err := tx.Tasks()
	if err != nil {
		return nil, nil, err
	}
	return c, tasks, nil
}
