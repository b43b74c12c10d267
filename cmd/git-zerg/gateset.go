package main

import "github.com/git-zerg/git-zerg/hooks"

// gateSet is the gate set of the configuration the hook runs under: a pass
// recorded for another set does not let staging out. An unreadable
// configuration matches no record, so the push is refused rather than let
// through on gates nobody can name.
func (e *env) gateSet() string {
	cfg, err := e.config()
	if err != nil {
		return ""
	}
	return hooks.GateSet(cfg.Gates)
}
