package engine

import (
	"context"
	"time"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/gitstore/remotes"
)

// BackgroundSync is an engine that syncs next to a view of the same
// repository: on a store of its own, so that the view's reads never wait
// for a fetch, and with its notes ("the remote moved, trying again") kept
// for the sync command's own output.
func BackgroundSync(ctx context.Context, main *gitstore.Store, cfg *config.Config, now func() time.Time) (*Engine, error) {
	dir := main.Top
	if dir == "" {
		dir = main.CommonDir
	}
	s, err := main.Repo().Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	if cfg.Sync.Arbiter != "" {
		remotes.SetArbiter(s, cfg.Sync.Arbiter, CheckCaughtUp)
	}
	return &Engine{Ctx: ctx, Store: s, Config: cfg, Now: now, Events: func(Event) {}}, nil
}
