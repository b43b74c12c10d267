package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/levels"
)

func epicCmd(e *env) *cli.Command {
	var force bool
	var frozen cli.StringSlice
	var unfreeze bool
	return &cli.Command{
		Name:  "epic",
		Usage: "features that depend on features, with frozen shared paths",
		Description: "An epic file names features (each its own task graph), the hard and soft\n" +
			"dependencies between them and the paths frozen for all of them (README \"Epics\").\n" +
			"git zerg rush --epic NAME runs it; dag --epic NAME draws it.",
		Subcommands: []*cli.Command{
			{
				Name:      "plan",
				Usage:     "validate an epic file and every graph it names, store the epic and plan its features",
				ArgsUsage: "FILE",
				Description: "Reports every error at once, each with its place, and writes nothing then (exit 2).\n" +
					"Graph paths are relative to the epic file. A planned epic or feature is refused (exit 3)\n" +
					"unless --force, which plans them again.",
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "force", Usage: "replace a planned epic and its features", Destination: &force}},
				Action: withArgs(1, 1, func(a []string) error { return runEpicPlan(e, a[0], force) }),
			},
			{
				Name:      "status",
				Usage:     "each feature's progress, dependencies and review",
				ArgsUsage: "[NAME]",
				Action:    withArgs(0, 1, func(a []string) error { return runEpicStatus(e, a) }),
			},
			{
				Name:      "bump",
				Usage:     "a new version of the epic; its complete features need review",
				ArgsUsage: "NAME",
				Description: "--frozen PATH (repeatable) replaces the frozen paths; --unfreeze-all empties them;\n" +
					"without either they stay. Every complete feature is marked as needing review\n" +
					"until git zerg epic approve NAME FEATURE.",
				Flags: []cli.Flag{
					&cli.StringSliceFlag{Name: "frozen", Usage: "a frozen `PATH` of the new version (repeatable)", Destination: &frozen},
					&cli.BoolFlag{Name: "unfreeze-all", Usage: "the new version freezes nothing", Destination: &unfreeze},
				},
				Action: func(c *cli.Context) error {
					a, err := args(c, 1, 1)
					if err != nil {
						return err
					}
					if unfreeze && len(frozen.Value()) > 0 {
						return usageErr("epic bump: --frozen and --unfreeze-all together")
					}
					return runEpicBump(e, a[0], frozen.Value(), unfreeze || c.IsSet("frozen"))
				},
			},
			{
				Name:      "approve",
				Usage:     "take reviewed features off the epic's review list",
				ArgsUsage: "NAME FEATURE...",
				Action:    withArgs(2, -1, func(a []string) error { return runEpicApprove(e, a[0], a[1:]) }),
			},
			{
				Name:      "log",
				Usage:     "the epic's history: plans, bumps, approvals",
				ArgsUsage: "NAME",
				Action:    withArgs(1, 1, func(a []string) error { return runEpicLog(e, a[0]) }),
			},
			{
				Name:  "schema",
				Usage: "print the JSON Schema of an epic file",
				Action: withArgs(0, 0, func([]string) error {
					_, err := e.stdout.Write(levels.EpicSchema())
					return err
				}),
			},
		},
	}
}

type epicPlanJSON struct {
	Epic     string        `json:"epic"`
	Version  int           `json:"version"`
	Levels   [][]string    `json:"levels"`
	Features []planJSON    `json:"features"`
	Warnings []problemJSON `json:"warnings"`
	Commit   string        `json:"commit"`
}

func runEpicPlan(e *env, file string, force bool) error {
	if err := e.checkWorkTree("epic plan"); err != nil {
		return err
	}
	g, err := e.repoEngine()
	if err != nil {
		return err
	}
	plan, errs, warns, err := engine.ReadEpicFile(file)
	if err != nil {
		return err
	}
	for _, p := range errs {
		fmt.Fprintf(e.stderr, "%s: %s\n", file, p)
	}
	for _, p := range warns {
		fmt.Fprintf(e.stderr, "%s: warning: %s\n", file, p)
	}
	if len(errs) > 0 {
		return usageErr("invalid epic %s (%s)", file, plural(len(errs), "error"))
	}
	res, err := g.PlanEpic(plan, force)
	if err != nil {
		return err
	}
	if e.json {
		out := epicPlanJSON{Epic: res.Epic.Name, Version: res.Epic.Version, Levels: plan.Levels, Features: []planJSON{},
			Warnings: problemsOut(warns), Commit: res.Commit}
		for _, f := range res.Features {
			out.Features = append(out.Features, planJSON{f.Feature, f.Tasks, f.Levels, problemsOut(plan.Plans[f.Feature].Warnings), f.Commit})
		}
		return writeJSON(e.stdout, out)
	}
	for _, f := range res.Features {
		fmt.Fprintf(e.stdout, "planned %s: %s in %s\n", f.Feature, plural(f.Tasks, "task"), plural(len(f.Levels), "level"))
	}
	var lv []string
	for _, l := range plan.Levels {
		lv = append(lv, strings.Join(l, ", "))
	}
	fmt.Fprintf(e.stdout, "planned epic %s v%d: %s in order %s\n", res.Epic.Name, res.Epic.Version,
		plural(len(res.Epic.Features), "feature"), strings.Join(lv, " | "))
	return nil
}

type epicFeatureJSON struct {
	Name             string         `json:"name"`
	Graph            string         `json:"graph"`
	Level            int            `json:"level"`
	State            string         `json:"state"`
	Dependencies     []string       `json:"dependencies"`
	SoftDependencies []string       `json:"soft_dependencies"`
	Progress         progressJSON   `json:"progress"`
	Counts           map[string]int `json:"counts"`
	NeedsReview      bool           `json:"needs_review"`
	ReviewSince      int            `json:"review_since_version,omitempty"`
	Staging          string         `json:"staging,omitempty"`
}

type epicStatusJSON struct {
	Epic     string            `json:"epic"`
	Version  int               `json:"version"`
	Complete bool              `json:"complete"`
	Progress progressJSON      `json:"progress"`
	Frozen   []string          `json:"frozen"`
	Levels   [][]string        `json:"levels"`
	Features []epicFeatureJSON `json:"features"`
}

func epicStatusOut(st *engine.EpicStatus) epicStatusJSON {
	out := epicStatusJSON{Epic: st.Epic.Name, Version: st.Epic.Version, Complete: st.Complete, Frozen: nonNil(st.Epic.Frozen),
		Levels: st.Levels, Features: []epicFeatureJSON{}}
	for _, f := range st.Features {
		fj := epicFeatureJSON{Name: f.Name, Graph: f.Graph, Level: f.Level, State: f.State, Dependencies: nonNil(f.Dependencies),
			SoftDependencies: nonNil(f.SoftDependencies), Progress: progressJSON{Done: f.Done, Total: f.Total}, Counts: f.Counts,
			NeedsReview: f.Review != nil, Staging: f.Staging}
		if f.Total > 0 {
			fj.Progress.Percent = f.Done * 100 / f.Total
		}
		if f.Review != nil {
			fj.ReviewSince = f.Review.Version
		}
		out.Features = append(out.Features, fj)
	}
	out.Progress.Done, out.Progress.Total = st.FeaturesDone(), len(st.Features)
	if out.Progress.Total > 0 {
		out.Progress.Percent = out.Progress.Done * 100 / out.Progress.Total
	}
	return out
}

func runEpicStatus(e *env, a []string) error {
	g, err := e.repoEngine()
	if err != nil {
		return err
	}
	sts, err := g.EpicStatuses(a...)
	if err != nil {
		return err
	}
	var all []epicStatusJSON
	for _, st := range sts {
		all = append(all, epicStatusOut(st))
	}
	if e.json {
		if len(a) == 1 {
			return writeJSON(e.stdout, all[0])
		}
		return writeJSON(e.stdout, struct {
			Epics []epicStatusJSON `json:"epics"`
		}{all})
	}
	for i, st := range all {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		printEpicStatus(e.stdout, st)
	}
	return nil
}

func printEpicStatus(w io.Writer, st epicStatusJSON) {
	fmt.Fprintf(w, "epic %s v%d: %d/%d features done (%d%%)\n", st.Epic, st.Version, st.Progress.Done, st.Progress.Total, st.Progress.Percent)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range st.Features {
		var extra []string
		if len(f.Dependencies) > 0 {
			extra = append(extra, "after "+strings.Join(f.Dependencies, ", "))
		}
		if len(f.SoftDependencies) > 0 {
			extra = append(extra, "soft after "+strings.Join(f.SoftDependencies, ", "))
		}
		if f.NeedsReview {
			extra = append(extra, fmt.Sprintf("needs review (v%d): git zerg epic approve %s %s", f.ReviewSince, st.Epic, f.Name))
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d/%d tasks\t%s\n", f.Name, f.State, f.Progress.Done, f.Progress.Total, strings.Join(extra, "; "))
	}
	tw.Flush()
	if len(st.Frozen) > 0 {
		fmt.Fprintf(w, "frozen: %s\n", strings.Join(st.Frozen, ", "))
	}
}

func runEpicBump(e *env, name string, frozen []string, set bool) error {
	g, err := e.repoEngine()
	if err != nil {
		return err
	}
	res, err := g.BumpEpic(name, frozen, set)
	if err != nil {
		return err
	}
	if e.json {
		st, err := g.StatusOfEpic(name)
		if err != nil {
			return err
		}
		return writeJSON(e.stdout, epicStatusOut(st))
	}
	fmt.Fprintf(e.stdout, "epic %s is now v%d", name, res.Epic.Version)
	if len(res.Review) > 0 {
		fmt.Fprintf(e.stdout, "; needs review: %s", strings.Join(res.Review, ", "))
	}
	fmt.Fprintln(e.stdout)
	return nil
}

func runEpicApprove(e *env, name string, features []string) error {
	g, err := e.repoEngine()
	if err != nil {
		return err
	}
	ep, err := g.ApproveEpic(name, features)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "approved %s in epic %s v%d", strings.Join(features, ", "), name, ep.Version)
	if len(ep.Review) > 0 {
		var left []string
		for _, r := range ep.Review {
			left = append(left, r.Feature)
		}
		fmt.Fprintf(e.stdout, "; still to review: %s", strings.Join(left, ", "))
	}
	fmt.Fprintln(e.stdout)
	return nil
}

func runEpicLog(e *env, name string) error {
	s, err := e.Store()
	if err != nil {
		return err
	}
	log, err := (&engine.Engine{Ctx: e.ctx, Store: s}).EpicLog(name)
	if err != nil {
		return err
	}
	if e.json {
		type entry struct {
			Commit  string `json:"commit"`
			At      string `json:"at"`
			Op      string `json:"op"`
			Subject string `json:"subject"`
		}
		out := []entry{}
		for _, l := range log {
			out = append(out, entry{l.Hash.String(), l.When.UTC().Format("2006-01-02T15:04:05Z"), l.Message.Op, l.Message.Subject})
		}
		return writeJSON(e.stdout, out)
	}
	for _, l := range log {
		fmt.Fprintf(e.stdout, "%s %s %s\n", shortHash(l.Hash.String()), l.When.UTC().Format("2006-01-02 15:04:05"), l.Message.Subject)
	}
	return nil
}

// printEpicReview tells, under a feature's status, that a version bump of
// its epic sent it back to review.
func (e *env) printEpicReview(feature string) {
	s, err := e.Store()
	if err != nil {
		return
	}
	if ep, r := engine.EpicReview(s, feature); r != nil {
		fmt.Fprintf(e.stdout, "needs review: epic %s is v%d since this feature was done; git zerg epic approve %s %s\n",
			ep.Name, r.Version, ep.Name, feature)
	}
}
