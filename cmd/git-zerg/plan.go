package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/printable"
	"github.com/git-zerg/git-zerg/worktree"
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

type validateJSON struct {
	File     string        `json:"file"`
	Valid    bool          `json:"valid"`
	Feature  string        `json:"feature"`
	Tasks    int           `json:"tasks"`
	Levels   [][]string    `json:"levels"`
	Errors   []problemJSON `json:"errors"`
	Warnings []problemJSON `json:"warnings"`
}

func runValidate(e *env, o *validateOptions) error {
	file, err := e.graphFile(o.file, "")
	if err != nil {
		return err
	}
	// Without a FEATURE argument, as plan has, the graph's name is the
	// feature's: validate refuses what plan would.
	plan, err := e.checkGraph(file, o.strict, !e.json, true)
	if e.json {
		out := validateJSON{File: file, Valid: err == nil, Levels: [][]string{}, Errors: []problemJSON{}, Warnings: []problemJSON{}}
		var ge *graphError
		if errors.As(err, &ge) {
			out.Errors, out.Warnings = problemsOut(ge.errs), problemsOut(ge.warnings)
		} else if err != nil {
			return err
		}
		if plan != nil {
			out.Feature, out.Tasks, out.Levels = plan.Graph.Feature, len(plan.Graph.Tasks), plan.Levels
			if ge == nil {
				out.Warnings = problemsOut(plan.Warnings)
			}
		}
		if werr := writeJSON(e.stdout, out); werr != nil {
			return werr
		}
		if err != nil {
			return &cliError{code: exitUsage, what: err.Error()}
		}
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s: ok, feature %s, %s in %s\n", graphName(file), plan.Graph.Feature, plural(len(plan.Graph.Tasks), "task"), plural(len(plan.Levels), "level"))
	return nil
}

// graphError is an invalid graph; its problems were printed (or go into
// JSON) one per line before the one-line error.
type graphError struct {
	file           string
	errs, warnings []levels.Problem
	strict         bool
}

func (g *graphError) Error() string {
	n := len(g.errs)
	what := "errors"
	if n == 1 {
		what = "error"
	}
	if g.strict && len(g.warnings) > 0 {
		return fmt.Sprintf("invalid task graph %s (%d %s, %d warnings under --strict)", g.file, n, what, len(g.warnings))
	}
	return fmt.Sprintf("invalid task graph %s (%d %s)", g.file, n, what)
}

// As makes an invalid graph a usage error (exit 2) wherever errors become
// exit codes: the graph is the user's input, and nothing was written.
func (g *graphError) As(target any) bool {
	ce, ok := target.(**cliError)
	if !ok {
		return false
	}
	*ce = &cliError{code: exitUsage, what: g.Error()}
	return true
}

// graphFile finds the task graph: the file given, else the feature's
// .gsd/specs/<feature>/task-graph.json, else the only graph under .gsd/specs.
func (e *env) graphFile(file, feature string) (string, error) {
	if file != "" {
		return file, nil
	}
	base := "."
	if s, err := e.Store(); err == nil && s.Top != "" {
		base = s.Top
	} else if e.dir != "" {
		base = e.dir
	}
	if feature == "" {
		feature = e.feature
	}
	if feature != "" {
		return filepath.Join(base, ".gsd", "specs", feature, "task-graph.json"), nil
	}
	found, _ := filepath.Glob(filepath.Join(base, ".gsd", "specs", "*", "task-graph.json"))
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", &cliError{code: exitUsage, what: "no task graph given", why: "none under .gsd/specs/*/task-graph.json",
			hint: "give the file: git zerg validate FILE"}
	}
	return "", &cliError{code: exitUsage, what: "several task graphs under .gsd/specs", why: strings.Join(found, ", "),
		hint: "name one with -f FEATURE or give the file"}
}

// graphName is how messages name the graph file; "-" is standard input.
func graphName(file string) string {
	if file == "-" {
		return "<stdin>"
	}
	return file
}

// loadGraph reads, validates and levels a graph. Problems are printed on
// stderr, one per line with their place, unless quiet.
func (e *env) loadGraph(file string, strict, print bool) (*levels.Plan, error) {
	return e.checkGraph(file, strict, print, false)
}

// checkGraph is loadGraph; with namesFeature the graph's "feature" must be
// a usable feature name, since no other name will be given.
func (e *env) checkGraph(file string, strict, print, namesFeature bool) (*levels.Plan, error) {
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(e.stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	file = graphName(file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &cliError{code: exitUsage, what: "cannot read task graph " + file, why: "no such file"}
		}
		return nil, &cliError{code: exitUsage, what: "cannot read task graph " + file, why: err.Error()}
	}
	plan, errs, warnings := levels.Check(data)
	if namesFeature {
		errs, warnings = featureNameError(errs, warnings)
	}
	if print {
		for _, p := range errs {
			fmt.Fprintf(e.stderr, "%s: %s\n", file, printable.String(p.String()))
		}
		for _, p := range warnings {
			fmt.Fprintf(e.stderr, "%s: warning: %s\n", file, printable.String(p.String()))
		}
	}
	if len(errs) > 0 || (strict && len(warnings) > 0) {
		return plan, &graphError{file: file, errs: errs, warnings: warnings, strict: strict}
	}
	return plan, nil
}

// featureNameError makes the warning about an unusable feature name an
// error. levels warns only, because plan FEATURE can name it otherwise.
func featureNameError(errs, warnings []levels.Problem) ([]levels.Problem, []levels.Problem) {
	keep := warnings[:0:0]
	var moved []levels.Problem
	for _, w := range warnings {
		if w.Place == "feature" {
			moved = append(moved, w)
		} else {
			keep = append(keep, w)
		}
	}
	if len(moved) == 0 {
		return errs, warnings
	}
	// Top-level problems come first, as levels orders them.
	return append(moved, errs...), keep
}

// badFeatureName is the usage error for a name ValidFeatureName refused;
// its message already names the name, so it is said once.
func badFeatureName(name string, err error) *cliError {
	why := strings.TrimPrefix(err.Error(), fmt.Sprintf("feature name %q ", name))
	return &cliError{code: exitUsage, what: fmt.Sprintf("bad feature name %q", name), why: why}
}

type planOptions struct {
	graph  string
	force  bool
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
			"unless --force, which starts it over and keeps the old history in its log.\n" +
			"--accept trusts the verification commands of a feature that arrived by sync:\n" +
			"it shows them and asks first (--yes accepts without asking, for scripts).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "graph", Aliases: []string{"g"}, Usage: "task graph `FILE`", Destination: &o.graph},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing feature", Destination: &o.force},
			&cli.BoolFlag{Name: "accept", Usage: "trust the commands of a synced feature", Destination: &o.accept},
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

type planJSON struct {
	Feature  string        `json:"feature"`
	Tasks    int           `json:"tasks"`
	Levels   [][]string    `json:"levels"`
	Warnings []problemJSON `json:"warnings"`
	Commit   string        `json:"commit"`
}

func runPlan(e *env, o *planOptions) error {
	s, err := e.Store()
	if err != nil {
		return err
	}
	if o.name != "" {
		if err := levels.ValidFeatureName(o.name); err != nil {
			return badFeatureName(o.name, err)
		}
	}
	if o.yes && !o.accept {
		return usageErr("plan: --yes goes with --accept")
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
	plan, err := e.loadGraph(file, o.strict, true)
	if err != nil {
		return err
	}
	if err := e.requireIssues(graphName(file), plan); err != nil {
		return err
	}
	name := o.name
	if name == "" {
		name = plan.Graph.Feature
	}
	if err := levels.ValidFeatureName(name); err != nil {
		return badFeatureName(name, err)
	}
	return e.storePlan(&engine.Engine{Ctx: e.ctx, Store: s, Feature: name, Now: e.now}, plan, o.force)
}

// storePlan stores a checked plan as the feature's first state and says so.
func (e *env) storePlan(g *engine.Engine, plan *levels.Plan, force bool) error {
	s, name := g.Store, g.Feature
	res, err := g.Plan(plan, force)
	if err != nil {
		return err
	}
	if err := s.SetCurrentFeature(name); err != nil {
		return err
	}
	// A staging branch left by an earlier plan of this name is where the
	// rush will build: say so, since HEAD is what one would expect.
	if tip, _ := s.ReadRef("refs/heads/" + worktree.StagingBranch(name)); !tip.IsZero() {
		fmt.Fprintf(e.stderr, "note: %s exists (%s): the rush builds on it, not on HEAD; git branch -D %s starts afresh\n",
			worktree.StagingBranch(name), shortHash(tip.String()), worktree.StagingBranch(name))
	}
	if e.json {
		return writeJSON(e.stdout, planJSON{name, res.Tasks, plan.Levels, problemsOut(plan.Warnings), res.Commit})
	}
	fmt.Fprintf(e.stdout, "planned %s: %s in %s\n", name, plural(res.Tasks, "task"), plural(len(plan.Levels), "level"))
	return nil
}

// requireIssues refuses a plan whose tasks lack an issue when the
// configuration asks for one, naming every such task.
func (e *env) requireIssues(file string, plan *levels.Plan) error {
	// A configuration plan cannot read is reported by the commands that
	// run on it; plan itself never needed one, and still plans.
	cfg, err := e.config()
	if err != nil || !cfg.Forge.RequireIssue {
		return nil
	}
	missing := levels.MissingIssues(plan.Graph)
	if len(missing) == 0 {
		return nil
	}
	for _, p := range missing {
		fmt.Fprintf(e.stderr, "%s: %s\n", file, printable.String(p.String()))
	}
	return &graphError{file: file, errs: missing}
}

func runAccept(e *env, s *gitstore.Store, o *planOptions) error {
	name := o.name
	if name == "" {
		var err error
		if name, err = e.resolveFeature(); err != nil {
			return err
		}
	}
	tx, err := s.View(name)
	if err != nil {
		return err
	}
	tasks, err := tx.Tasks()
	if err != nil {
		return err
	}
	for _, t := range tasks {
		fmt.Fprintf(e.stderr, "accept %s: %s\n", t.ID(), printable.String(t.Spec.Verification.Command))
	}
	if !o.yes && !e.inTTY {
		// Accepting lets these commands run here: never by default when
		// no one is there to read them.
		return &cliError{code: exitUsage, what: "plan --accept asks before trusting commands, and stdin is not a terminal",
			hint: "review the commands above, then git zerg plan --accept --yes " + name}
	}
	if !o.yes {
		fmt.Fprintf(e.stderr, "run these %s on this machine? [y/N] ", plural(len(tasks), "command"))
		answer, _ := bufio.NewReader(e.stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			return &cliError{code: exitRefused, what: "nothing accepted", why: "the answer was not yes"}
		}
	}
	if err := engine.Trust(s, name, tasks); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "accepted the commands of %s (%s)\n", name, plural(len(tasks), "task"))
	return nil
}
