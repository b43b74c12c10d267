package main

import (
	"fmt"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/printable"
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
	name := o.name
	for _, n := range []string{o.label, o.milestone} {
		if name == "" {
			name = n
		}
	}
	if name == "" {
		return usageErr("plan --from-issues: name the feature (plan --from-issues FEATURE, or --label / --milestone)")
	}
	if err := levels.ValidFeatureName(name); err != nil {
		return badFeatureName(name, err)
	}
	g := &engine.Engine{Ctx: e.ctx, Store: s, Config: cfg, Feature: name, Now: e.now}
	plan, probs, warns, err := g.IssueGraph(name, o.label, o.milestone)
	if err != nil {
		return err
	}
	for _, p := range probs {
		fmt.Fprintln(e.stderr, printable.String(p.String()))
	}
	for _, p := range warns {
		fmt.Fprintln(e.stderr, "warning: "+printable.String(p.String()))
	}
	if len(probs) > 0 {
		return &cliError{code: exitUsage, what: fmt.Sprintf("cannot plan %s from issues (%s)", name, plural(len(probs), "problem"))}
	}
	if o.strict && len(warns) > 0 {
		return &cliError{code: exitUsage, what: fmt.Sprintf("cannot plan %s from issues (%s under --strict)", name, plural(len(warns), "warning"))}
	}
	if err := e.storePlan(g, plan, o.force); err != nil {
		return err
	}
	if err := g.DistrustCommands(); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "note: the verification commands come from the issues: review them, then git zerg plan --accept %s\n", name)
	return nil
}
