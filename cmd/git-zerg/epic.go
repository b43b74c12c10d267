package main

import (
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/epic"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/report"
	"github.com/git-zerg/git-zerg/words"
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

func runEpicPlan(e *env, file string, force bool) error {
	if err := e.checkWorkTree("epic plan"); err != nil {
		return err
	}
	g, err := e.repoEngine()
	if err != nil {
		return err
	}
	plan, errs, warns, err := epic.ReadFile(file, force)
	if err != nil {
		return err
	}
	report.ProblemsText(e.stderr, file, errs, warns)
	if len(errs) > 0 {
		ce := usageErr("invalid epic %s (%s)", file, words.Plural(len(errs), "error"))
		if slices.ContainsFunc(errs, func(p levels.Problem) bool { return p.Meant != "" }) {
			ce.hint = "fix the keys, or epic plan --force to plan them as they are (not read)"
		}
		return ce
	}
	res, err := epic.Plan(g, plan, force)
	if err != nil {
		return err
	}
	if e.json {
		return report.WriteJSON(e.stdout, report.EpicPlanOf(res, plan, warns))
	}
	report.EpicPlanText(e.stdout, res, plan)
	return nil
}

func runEpicStatus(e *env, a []string) error {
	g, err := e.repoEngine()
	if err != nil {
		return err
	}
	sts, err := epic.Statuses(g, a...)
	if err != nil {
		return err
	}
	return report.WriteEpicStatuses(e.stdout, sts, e.json, len(a) == 1)
}

func runEpicBump(e *env, name string, frozen []string, set bool) error {
	g, err := e.repoEngine()
	if err != nil {
		return err
	}
	res, err := epic.Bump(g, name, frozen, set)
	if err != nil {
		return err
	}
	if e.json {
		st, err := epic.StatusOf(g, name)
		if err != nil {
			return err
		}
		return report.WriteJSON(e.stdout, report.EpicStatusOf(st))
	}
	report.EpicBumpText(e.stdout, name, res)
	return nil
}

func runEpicApprove(e *env, name string, features []string) error {
	g, err := e.repoEngine()
	if err != nil {
		return err
	}
	ep, err := epic.Approve(g, name, features)
	if err != nil {
		return err
	}
	report.EpicApproveText(e.stdout, name, ep, features)
	return nil
}

func runEpicLog(e *env, name string) error {
	s, err := e.Store()
	if err != nil {
		return err
	}
	log, err := epic.Log(&engine.Engine{Ctx: e.ctx, Store: s}, name)
	if err != nil {
		return err
	}
	return report.WriteEpicLog(e.stdout, log, e.json)
}

// printEpicReview tells, under a feature's status, that a version bump of
// its epic sent it back to review.
func (e *env) printEpicReview(feature string) {
	s, err := e.Store()
	if err != nil {
		return
	}
	if ep, r := epic.Review(s, feature); r != nil {
		fmt.Fprintf(e.stdout, "needs review: epic %s is v%d since this feature was done; git zerg epic approve %s %s\n",
			ep.Name, r.Version, ep.Name, feature)
	}
}
