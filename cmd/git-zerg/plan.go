package main

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/cmdline"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/engine/graphfile"
	"github.com/git-zerg/git-zerg/engine/trust"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/report"
	"github.com/git-zerg/git-zerg/words"
)

type validateOptions struct {
	strict bool
	file   string
}

func validateCmd(e *env) *cli.Command {
	var o validateOptions
	return &cli.Command{
		Name:      "validate",
		Usage:     "validate a task graph",
		ArgsUsage: "[FILE|-]",
		Description: "Reports every error and warning at once, each with its place in the file;\n" +
			"\"-\" reads the graph from standard input.\n" +
			"Exit 2 when the graph is invalid (or has warnings, with --strict).",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "strict", Usage: "treat warnings as errors", Destination: &o.strict},
		},
		Action: func(c *cli.Context) error {
			a, err := args(c, 0, 1)
			if err != nil {
				return err
			}
			if len(a) == 1 {
				o.file = a[0]
			}
			return runValidate(e, &o)
		},
	}
}

func runValidate(e *env, o *validateOptions) error {
	file, err := e.graphFile(o.file, "")
	if err != nil {
		return err
	}
	// Without a FEATURE argument, as plan has, the graph's name is the
	// feature's: validate refuses what plan would.
	plan, errs, warns, err := graphfile.Check(e.stdin, file, o.strict, true, false)
	var ge *graphfile.Error
	if err != nil && !errors.As(err, &ge) {
		return err
	}
	if e.json {
		if werr := report.WriteJSON(e.stdout, report.ValidateOf(file, plan, errs, warns, err == nil)); werr != nil {
			return werr
		}
		if err != nil {
			return &cliError{code: exitUsage, what: err.Error()}
		}
		return nil
	}
	report.ProblemsText(e.stderr, graphfile.Name(file), errs, warns)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s: ok, feature %s, %s in %s\n", graphfile.Name(file), plan.Graph.Feature, words.Plural(len(plan.Graph.Tasks), "task"), words.Plural(len(plan.Levels), "level"))
	return nil
}

// graphFile finds the task graph: the file given, else the feature's
// (-f by default) under the top of the work tree, else the only one.
func (e *env) graphFile(file, feature string) (string, error) {
	base := "."
	if s, err := e.Store(); err == nil && s.Top != "" {
		base = s.Top
	} else if e.dir != "" {
		base = e.dir
	}
	if feature == "" {
		feature = e.feature
	}
	return graphfile.Find(base, file, feature)
}

// loadGraph reads, validates and levels a graph; its problems are printed
// on stderr, one a line with its place.
// keepMisspelt (plan --force) plans keys that look misspelt as they are.
func (e *env) loadGraph(file string, strict, keepMisspelt bool) (*levels.Plan, error) {
	plan, errs, warns, err := graphfile.Check(e.stdin, file, strict, false, keepMisspelt)
	report.ProblemsText(e.stderr, graphfile.Name(file), errs, warns)
	return plan, err
}

type planOptions struct {
	graph  string
	force  bool
	update bool
	accept bool
	yes    bool
	strict bool
	name   string
	// fromIssues builds the graph from the forge's open issues, with the
	// label and milestone given.
	fromIssues       bool
	label, milestone string
}

func planCmd(e *env) *cli.Command {
	var o planOptions
	return &cli.Command{
		Name:      "plan",
		Usage:     "validate a task graph and store it as the feature's initial state",
		ArgsUsage: "[FEATURE]",
		Description: "FEATURE defaults to the graph's \"feature\". An existing feature is refused (exit 3)\n" +
			"unless --force, which starts it over and keeps the old history in its log, or\n" +
			"--update, which amends it: unchanged tasks keep their state and history, a changed\n" +
			"task starts again with its merged work taken out of staging, added tasks are pending.\n" +
			"--accept trusts, on this machine, the tasks of a feature that arrived by sync (or\n" +
			"from the forge's issues): it shows each task that is new here, or changed since it\n" +
			"was accepted here, as a diff, and asks first; --yes accepts without asking (for\n" +
			"scripts); without a terminal and without --yes it shows them and exits 3.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "graph", Aliases: []string{"g"}, Usage: "task graph `FILE`", Destination: &o.graph},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing feature", Destination: &o.force},
			&cli.BoolFlag{Name: "update", Usage: "amend the planned feature: unchanged tasks keep their state, changed ones start again", Destination: &o.update},
			&cli.BoolFlag{Name: "accept", Usage: "review and trust the tasks of a synced feature", Destination: &o.accept},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "with --accept: accept without asking", Destination: &o.yes},
			&cli.BoolFlag{Name: "strict", Usage: "treat warnings as errors", Destination: &o.strict},
			&cli.BoolFlag{Name: "from-issues", Usage: "build the graph from the forge's open issues", Destination: &o.fromIssues},
			&cli.StringFlag{Name: "label", Usage: "with --from-issues: only issues with `LABEL`", Destination: &o.label},
			&cli.StringFlag{Name: "milestone", Usage: "with --from-issues: only issues in `MILESTONE` (title or number)", Destination: &o.milestone},
		},
		Action: func(c *cli.Context) error {
			a, err := args(c, 0, 1)
			if err != nil {
				return err
			}
			if len(a) == 1 {
				o.name = a[0]
			}
			return runPlan(e, &o)
		},
	}
}

func runPlan(e *env, o *planOptions) error {
	s, err := e.Store()
	if err != nil {
		return err
	}
	if o.name != "" {
		if err := engine.CheckFeatureName(o.name); err != nil {
			return err
		}
	}
	if o.yes && !o.accept {
		return usageErr("plan: --yes goes with --accept")
	}
	if o.update && (o.force || o.accept || o.fromIssues) {
		return usageErr("plan: --update takes no --force, --accept or --from-issues")
	}
	if (o.label != "" || o.milestone != "") && !o.fromIssues {
		return usageErr("plan: --label and --milestone go with --from-issues")
	}
	if o.fromIssues {
		if o.graph != "" || o.accept {
			return usageErr("plan: --from-issues takes no --graph or --accept")
		}
		return runPlanFromIssues(e, o)
	}
	if o.accept && o.graph == "" {
		return runAccept(e, s, o)
	}
	file, err := e.graphFile(o.graph, o.name)
	if err != nil {
		return err
	}
	plan, err := e.loadGraph(file, o.strict, o.force)
	if err != nil {
		return err
	}
	// Tasks without the issue the configuration asks for are named, each
	// with its place, as the graph's own problems are.
	if missing := engine.RequiredIssues(s, plan); len(missing) > 0 {
		report.ProblemsText(e.stderr, graphfile.Name(file), missing, nil)
		return &graphfile.Error{File: graphfile.Name(file), Errs: missing}
	}
	name := o.name
	if name == "" {
		name = plan.Graph.Feature
	}
	if err := engine.CheckFeatureName(name); err != nil {
		return err
	}
	g := &engine.Engine{Ctx: e.ctx, Store: s, Feature: name, Now: e.now}
	if o.update {
		return e.updatePlan(g, plan)
	}
	return e.storePlan(g, plan, o.force, false)
}

// updatePlan amends the planned feature and says what changed.
func (e *env) updatePlan(g *engine.Engine, plan *levels.Plan) error {
	res, err := g.Update(plan)
	if err != nil {
		return err
	}
	report.WarmStatusJSON(g.Store, res.Feature, e.now())
	doc := report.UpdateOf(report.Update{Feature: res.Feature, Tasks: res.Tasks, Levels: res.Levels, Kept: res.Kept,
		Changed: res.Changed, Added: res.Added, Removed: res.Removed, TakenOut: res.TakenOut, Commit: res.StateCommit})
	if e.json {
		return report.WriteJSON(e.stdout, doc)
	}
	report.UpdateText(e.stdout, e.stderr, doc, res.StagingTip)
	return nil
}

// storePlan stores a checked plan as the feature's first state and says so.
// An untrusted plan (from the forge's issues) trusts nothing of it here.
func (e *env) storePlan(g *engine.Engine, plan *levels.Plan, force, untrusted bool) error {
	planCurrent := g.PlanCurrent
	if untrusted {
		planCurrent = g.PlanCurrentUntrusted
	}
	res, err := planCurrent(plan, force)
	if err != nil {
		return err
	}
	report.WarmStatusJSON(g.Store, res.Feature, e.now())
	// A staging branch left by an earlier plan of this name is where the
	// rush will build: say so, since HEAD is what one would expect.
	if res.StagingTip != "" {
		fmt.Fprintf(e.stderr, "note: %s exists (%s): the rush builds on it, not on HEAD; git branch -D %s starts afresh\n",
			res.Staging, words.ShortHash(res.StagingTip), res.Staging)
	}
	if e.json {
		return report.WriteJSON(e.stdout, report.Plan{Feature: res.Feature, Tasks: res.Tasks, Levels: plan.Levels, Warnings: report.ProblemsOf(plan.Warnings), Commit: res.Commit})
	}
	fmt.Fprintf(e.stdout, "planned %s: %s in %s\n", res.Feature, words.Plural(res.Tasks, "task"), words.Plural(len(plan.Levels), "level"))
	return nil
}

func runAccept(e *env, s *gitstore.Store, o *planOptions) error {
	// The feature named, else the current one.
	name, err := engine.ResolveFeature(cmp.Or(o.name, e.feature), e.Store)
	if err != nil {
		return err
	}
	rv, err := engine.ReviewTrust(s, name)
	if err != nil {
		return err
	}
	if len(rv.Changed) == 0 {
		fmt.Fprintf(e.stdout, "nothing to accept: every task of %s is accepted here as it is\n", name)
		return nil
	}
	report.AcceptReviewText(e.stdout, rv)
	if !o.yes && !e.inTTY {
		// Accepting lets these tasks reach workers and their commands run
		// here: never by default when no one is there to read them.
		return &cliError{code: exitRefused, what: "nothing accepted", why: "plan --accept asks before trusting tasks, and stdin is not a terminal",
			hint: "review the changes above, then git zerg plan --accept --yes " + name}
	}
	if !o.yes {
		fmt.Fprint(e.stderr, report.AcceptQuestion(rv))
		if !cmdline.Yes(e.stdin) {
			return &cliError{code: exitRefused, what: "nothing accepted", why: "the answer was not yes"}
		}
	}
	if err := trust.Record(s, name, rv.Tasks); err != nil {
		return err
	}
	report.AcceptedText(e.stdout, rv)
	return nil
}
