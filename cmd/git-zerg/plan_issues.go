package main

import (
	"fmt"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/forge/flow"
	"github.com/git-zerg/git-zerg/report"
)

// runPlanFromIssues plans a feature from the forge's open issues: every
// problem is printed with its issue number, and with any, nothing is
// written (exit 2), as for a graph file.
func runPlanFromIssues(e *env, o *planOptions) error {
	s, err := e.Store()
	if err != nil {
		return err
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	name, err := flow.IssuesFeature(o.name, o.label, o.milestone)
	if err != nil {
		return err
	}
	g := &engine.Engine{Ctx: e.ctx, Store: s, Config: cfg, Feature: name, Now: e.now}
	plan, probs, warns, err := flow.IssueGraph(g, name, o.label, o.milestone)
	if err != nil {
		return err
	}
	report.ProblemsText(e.stderr, "", probs, warns)
	if err := flow.IssuesVerdict(name, probs, warns, o.strict); err != nil {
		return err
	}
	if err := e.storePlan(g, plan, o.force, true); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "note: the tasks come from the issues: review them, then git zerg plan --accept %s\n", name)
	return nil
}
