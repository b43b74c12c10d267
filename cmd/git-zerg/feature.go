package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
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
func (e *env) resolveFeature() (string, error) {
	if e.feature != "" {
		if err := levels.ValidFeatureName(e.feature); err != nil {
			return "", usageErr("bad feature name %q (%v)", e.feature, err)
		}
		return e.feature, nil
	}
	s, err := e.Store()
	if err != nil {
		return "", err
	}
	if f, _, ok := workerOfBranch(currentBranch(s)); ok {
		return f, nil
	}
	if f := s.CurrentFeature(); f != "" {
		return f, nil
	}
	fs, err := s.Features()
	if err != nil {
		return "", err
	}
	if len(fs) == 1 {
		return fs[0], nil
	}
	if len(fs) == 0 {
		return "", &cliError{code: exitUsage, what: "no feature planned", hint: "git zerg plan --graph task-graph.json"}
	}
	return "", &cliError{code: exitUsage, what: "no feature chosen", why: strings.Join(fs, ", "),
		hint: "git zerg use FEATURE, or -f FEATURE"}
}

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
	tx, err := s.View(feature)
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, nil, "", &cliError{code: exitUsage, what: fmt.Sprintf("feature %q is not planned", feature),
			hint: "git zerg features lists the planned ones"}
	}
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

// config reads .zerg/config.toml of the work tree we run in.
func (e *env) config() (*config.Config, error) {
	s, err := e.Store()
	if err != nil {
		return nil, err
	}
	if s.Top == "" {
		return config.Default(), nil
	}
	c, err := config.Load(filepath.Join(s.Top, ".zerg", "config.toml"))
	if err != nil {
		return nil, &cliError{code: exitUsage, what: "bad configuration", why: err.Error()}
	}
	if c.Sync.Arbiter != "" {
		s.SetArbiter(c.Sync.Arbiter)
	}
	return c, nil
}

// userIdentity is who owns manual locks and approvals.
func (e *env) userIdentity() string {
	s, _ := e.Store()
	return (&engine.Engine{Ctx: e.ctx, Store: s}).UserIdentity()
}

// checkWorker validates a --worker value: it names a tree entry and a
// branch, so it is as strict as a task id.
func checkWorker(w string) error {
	if w == "" {
		return usageErr("--worker is required")
	}
	if !levels.ValidID(w) {
		return usageErr("bad worker name %q (letters, digits, '.', '_' and '-', at most 64)", w)
	}
	return nil
}

// gitIn runs git in the store's repository (what hooks need to ask git:
// its version, where it looks for hooks).
func gitIn(s *gitstore.Store) *gitcmd.Runner { return &gitcmd.Runner{Dir: s.Dir()} }
