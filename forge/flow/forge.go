// Package flow is what git-zerg does with a forge: plan a feature from
// its issues, ship verified work for review as pull requests, land those
// merged, and follow issues closed or reopened there. It asks the forge
// through package forge, which knows nothing of git-zerg's state, and
// records each transition through the engine (Engine.RecordShip and the
// like), whose gates decide what the answers allow.
package flow

import (
	"errors"
	"fmt"
	"strings"

	"github.com/git-zerg/git-zerg/engine"
	forgeapi "github.com/git-zerg/git-zerg/forge"
	"github.com/git-zerg/git-zerg/state"
)

// Which forge repository a feature's issues and pull requests live in,
// and its failures said as engine errors.

// forgeRepo is the repository the configuration names (forge.repo), else
// the one the remote's URL names; ok is false when neither does.
func forgeRepo(g *engine.Engine) (repo forgeapi.Repo, ok bool, err error) {
	if g.Config != nil && g.Config.Forge.Repo != "" {
		r, err := forgeapi.ParseRepo(g.Config.Forge.Repo)
		return r, err == nil, err
	}
	remote := forgeRemote(g)
	u, err := engine.Git(g.Store).Line(g.Context(), "remote", "get-url", "--", remote)
	if err != nil || u == "" {
		return forgeapi.Repo{}, false, nil
	}
	r, err := forgeapi.RepoFromURL(u)
	if err != nil {
		return forgeapi.Repo{}, false, nil
	}
	return r, true, nil
}

func forgeRemote(g *engine.Engine) string {
	if g.Config != nil && g.Config.Sync.Remote != "" {
		return g.Config.Sync.Remote
	}
	return "origin"
}

// forgeClient is the client of the feature's forge repository. A command that
// needs the forge when none is configured gets a usage error: nothing was
// asked of anyone, and nothing is written.
func forgeClient(g *engine.Engine) (*forgeapi.Client, error) {
	repo, ok, err := forgeRepo(g)
	if err != nil {
		return nil, &engine.Error{Kind: engine.Usage, What: "bad forge.repo", Why: err.Error()}
	}
	if !ok {
		return nil, &engine.Error{Kind: engine.Usage, What: "no forge configured",
			Why:  fmt.Sprintf("forge.repo is not set and the URL of remote %s names no forge repository", forgeRemote(g)),
			Hint: `set [forge] repo = "owner/name" in .zerg/config.toml`}
	}
	api := ""
	if g.Config != nil {
		api = g.Config.Forge.API
	}
	c, err := forgeapi.New(forgeapi.Options{Repo: repo, API: api, Token: forgeapi.Token()})
	if err != nil {
		return nil, &engine.Error{Kind: engine.Usage, What: "bad forge.api", Why: err.Error()}
	}
	return c, nil
}

// forgeErr says a forge failure as one line; the request failed, nothing
// was recorded.
func forgeErr(err error) error {
	var fe *forgeapi.Error
	if errors.As(err, &fe) {
		return &engine.Error{Kind: engine.Failed, What: "forge: " + fe.Error()}
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
func forgeTasks(g *engine.Engine) (*forgeapi.Client, []*state.Task, error) {
	c, err := forgeClient(g)
	if err != nil {
		return nil, nil, err
	}
	tx, err := g.View()
	if err != nil {
		return nil, nil, err
	}
	if !tx.Exists() {
		return nil, nil, engine.NotPlanned(g.Feature)
	}
	tasks, err := tx.Tasks()
	if err != nil {
		return nil, nil, err
	}
	return c, tasks, nil
}
