package main

import (
	"github.com/git-zerg/git-zerg/engine"
)

// engine builds the engine of the current feature: what every command that
// changes state runs on.
func (e *env) engine() (*engine.Engine, error) {
	feature, s, cfg, err := e.open()
	if err != nil {
		return nil, err
	}
	return &engine.Engine{Ctx: e.ctx, Store: s, Config: cfg, Feature: feature, Now: e.now}, nil
}
