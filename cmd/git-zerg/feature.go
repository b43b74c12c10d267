package main

import (
	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/worktree"
)

// currentBranch reads HEAD of the work tree we run in without starting git:
// this runs on every command and in every hook.
func currentBranch(s *gitstore.Store) string { return engine.CurrentBranch(s) }

// workerOfBranch returns the feature and worker name of a worker branch
// (zerg/<feature>/worker-<n>).
func workerOfBranch(branch string) (feature, worker string, ok bool) {
	return worktree.WorkerOf(branch)
}

// resolveFeature picks the feature: -f, else the worker branch we are on,
// else the one chosen with `use` or planned last, else the only one.
func (e *env) resolveFeature() (string, error) { return engine.ResolveFeature(e.feature, e.Store) }

// view opens a read-only snapshot of the current feature.
func (e *env) view() (*gitstore.Store, *gitstore.Tx, string, error) {
	feature, err := e.resolveFeature()
	if err != nil {
		return nil, nil, "", err
	}
	s, err := e.Store()
	if err != nil {
		return nil, nil, "", err
	}
	tx, err := engine.ViewFeature(s, feature)
	return s, tx, feature, err
}

// open resolves the feature and opens the store and configuration: what
// every state-changing command needs first.
func (e *env) open() (feature string, s *gitstore.Store, cfg *config.Config, err error) {
	if feature, err = e.resolveFeature(); err != nil {
		return "", nil, nil, err
	}
	if s, err = e.Store(); err != nil {
		return "", nil, nil, err
	}
	if cfg, err = e.config(); err != nil {
		return "", nil, nil, err
	}
	return feature, s, cfg, nil
}

// repoEngine is the engine of the repository, for no feature in
// particular: epics and locks name their features and paths themselves.
func (e *env) repoEngine() (*engine.Engine, error) {
	s, err := e.Store()
	if err != nil {
		return nil, err
	}
	cfg, err := e.config()
	if err != nil {
		return nil, err
	}
	return &engine.Engine{Ctx: e.ctx, Store: s, Config: cfg, Now: e.now}, nil
}

// config reads .zerg/config.toml of the work tree we run in.
func (e *env) config() (*config.Config, error) {
	s, err := e.Store()
	if err != nil {
		return nil, err
	}
	return engine.LoadConfig(s)
}

// userIdentity is who owns manual locks and approvals.
func (e *env) userIdentity() string {
	s, _ := e.Store()
	return (&engine.Engine{Ctx: e.ctx, Store: s}).UserIdentity()
}

// checkWorker validates a --worker value.
func checkWorker(w string) error { return engine.CheckWorker(w) }

// gitIn runs git in the store's repository (what hooks need to ask git:
// its version, where it looks for hooks).
func gitIn(s *gitstore.Store) *gitcmd.Runner { return &gitcmd.Runner{Dir: s.Dir()} }
