package main

import (
	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitstore"
)

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
