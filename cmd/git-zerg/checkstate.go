package main

import (
	"github.com/git-zerg/git-zerg/engine"
)

// checkState refuses to report on a feature whose state was changed
// outside git-zerg into something illegal: status would call a forged
// "done" complete. fsck, log and export still show it as it is.
func (e *env) checkState() error {
	feature, err := e.resolveFeature()
	if err != nil {
		return err
	}
	s, err := e.Store()
	if err != nil {
		return err
	}
	// An unplanned feature passes: it is the snapshot's to report.
	return (&engine.Engine{Ctx: e.ctx, Store: s, Feature: feature}).CheckState()
}
