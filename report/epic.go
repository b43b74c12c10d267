package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/epic"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
)

// EpicPlan is what `epic plan --json` prints.
type EpicPlan struct {
	Epic     string     `json:"epic"`
	Version  int        `json:"version"`
	Levels   [][]string `json:"levels"`
	Features []Plan     `json:"features"`
	Warnings []Problem  `json:"warnings"`
	Commit   string     `json:"commit"`
}

// EpicPlanOf is the document of a stored epic plan; warns are the epic
// file's own warnings, each feature's are in its plan.
func EpicPlanOf(res *epic.PlanResult, plan *levels.EpicPlan, warns []levels.Problem) EpicPlan {
	out := EpicPlan{Epic: res.Epic.Name, Version: res.Epic.Version, Levels: plan.Levels, Features: []Plan{},
		Warnings: ProblemsOf(warns), Commit: res.Commit}
	for _, f := range res.Features {
		out.Features = append(out.Features, Plan{f.Feature, f.Tasks, f.Levels, ProblemsOf(plan.Plans[f.Feature].Warnings), f.Commit})
	}
	return out
}

// EpicPlanText says what `epic plan` planned, a line a feature, then the
// epic's order.
func EpicPlanText(w io.Writer, res *epic.PlanResult, plan *levels.EpicPlan) {
	for _, f := range res.Features {
		fmt.Fprintf(w, "planned %s: %s in %s\n", f.Feature, words.Plural(f.Tasks, "task"), words.Plural(len(f.Levels), "level"))
	}
	var lv []string
	for _, l := range plan.Levels {
		lv = append(lv, strings.Join(l, ", "))
	}
	fmt.Fprintf(w, "planned epic %s v%d: %s in order %s\n", res.Epic.Name, res.Epic.Version,
		words.Plural(len(res.Epic.Features), "feature"), strings.Join(lv, " | "))
}

// EpicFeature is a feature of an epic in its status.
type EpicFeature struct {
	Name             string         `json:"name"`
	Graph            string         `json:"graph"`
	Level            int            `json:"level"`
	State            string         `json:"state"`
	Dependencies     []string       `json:"dependencies"`
	SoftDependencies []string       `json:"soft_dependencies"`
	Progress         Progress       `json:"progress"`
	Counts           map[string]int `json:"counts"`
	NeedsReview      bool           `json:"needs_review"`
	ReviewSince      int            `json:"review_since_version,omitempty"`
	Staging          string         `json:"staging,omitempty"`
}

// EpicStatus is what `epic status --json` prints for one epic (and `dag
// --epic --json`, `epic bump --json`).
type EpicStatus struct {
	Epic     string        `json:"epic"`
	Version  int           `json:"version"`
	Complete bool          `json:"complete"`
	Progress Progress      `json:"progress"`
	Frozen   []string      `json:"frozen"`
	Levels   [][]string    `json:"levels"`
	Features []EpicFeature `json:"features"`
}

// EpicStatusOf is the document of an epic's status.
func EpicStatusOf(st *epic.Status) EpicStatus {
	out := EpicStatus{Epic: st.Epic.Name, Version: st.Epic.Version, Complete: st.Complete, Frozen: nonNil(st.Epic.Frozen),
		Levels: st.Levels, Features: []EpicFeature{}}
	for _, f := range st.Features {
		fj := EpicFeature{Name: f.Name, Graph: f.Graph, Level: f.Level, State: f.State, Dependencies: nonNil(f.Dependencies),
			SoftDependencies: nonNil(f.SoftDependencies), Progress: Progress{Done: f.Done, Total: f.Total}, Counts: f.Counts,
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

// WriteEpicStatuses prints the status of the epics asked for: as JSON, the
// one epic named (one) or all of them under "epics"; as text, one after
// the other.
func WriteEpicStatuses(w io.Writer, sts []*epic.Status, asJSON, one bool) error {
	var all []EpicStatus
	for _, st := range sts {
		all = append(all, EpicStatusOf(st))
	}
	if asJSON {
		if one {
			return WriteJSON(w, all[0])
		}
		return WriteJSON(w, struct {
			Epics []EpicStatus `json:"epics"`
		}{all})
	}
	for i, st := range all {
		if i > 0 {
			fmt.Fprintln(w)
		}
		epicStatusText(w, st)
	}
	return nil
}

// epicStatusText is the text of `epic status` for one epic.
func epicStatusText(w io.Writer, st EpicStatus) {
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

// EpicLogEntry is a commit of an epic's history in `epic log --json`.
type EpicLogEntry struct {
	Commit  string   `json:"commit"`
	At      string   `json:"at"`
	Op      state.Op `json:"op"`
	Subject string   `json:"subject"`
}

// WriteEpicLog prints an epic's history, a line a commit (or as JSON).
func WriteEpicLog(w io.Writer, log []gitstore.Entry, asJSON bool) error {
	if asJSON {
		out := []EpicLogEntry{}
		for _, l := range log {
			out = append(out, EpicLogEntry{l.Hash.String(), l.When.UTC().Format("2006-01-02T15:04:05Z"), l.Message.Op, l.Message.Subject})
		}
		return WriteJSON(w, out)
	}
	for _, l := range log {
		fmt.Fprintf(w, "%s %s %s\n", words.ShortHash(l.Hash.String()), l.When.UTC().Format("2006-01-02 15:04:05"), l.Message.Subject)
	}
	return nil
}

// WriteEpicDag draws an epic's features, level by level, with their
// dependencies: format is json, mermaid, dot, or anything else for text.
func WriteEpicDag(w io.Writer, st *epic.Status, format string) error {
	switch format {
	case "json":
		return WriteJSON(w, EpicStatusOf(st))
	case "mermaid":
		fmt.Fprintln(w, "flowchart TD")
		for i, names := range st.Levels {
			fmt.Fprintf(w, "  subgraph E%d[\"level %d\"]\n", i+1, i+1)
			for _, n := range names {
				f := st.Feature(n)
				fmt.Fprintf(w, "    %s[\"%s (%s, %d/%d)\"]\n", mermaidID(n), n, f.State, f.Done, f.Total)
			}
			fmt.Fprintln(w, "  end")
		}
		for _, f := range st.Features {
			for _, d := range f.Dependencies {
				fmt.Fprintf(w, "  %s --> %s\n", mermaidID(d), mermaidID(f.Name))
			}
			for _, d := range f.SoftDependencies {
				fmt.Fprintf(w, "  %s -.-> %s\n", mermaidID(d), mermaidID(f.Name))
			}
		}
	case "dot":
		fmt.Fprintf(w, "digraph %q {\n  rankdir=LR;\n", "epic "+st.Epic.Name)
		for i, names := range st.Levels {
			fmt.Fprintf(w, "  subgraph \"cluster_%d\" {\n    label=\"level %d\";\n", i+1, i+1)
			for _, n := range names {
				f := st.Feature(n)
				fmt.Fprintf(w, "    %q [label=%q];\n", n, fmt.Sprintf("%s\n%s %d/%d", n, f.State, f.Done, f.Total))
			}
			fmt.Fprintln(w, "  }")
		}
		for _, f := range st.Features {
			for _, d := range f.Dependencies {
				fmt.Fprintf(w, "  %q -> %q;\n", d, f.Name)
			}
			for _, d := range f.SoftDependencies {
				fmt.Fprintf(w, "  %q -> %q [style=dashed];\n", d, f.Name)
			}
		}
		fmt.Fprintln(w, "}")
	default:
		fmt.Fprintf(w, "epic %s v%d\n", st.Epic.Name, st.Epic.Version)
		for i, names := range st.Levels {
			fmt.Fprintf(w, "level %d\n", i+1)
			for _, n := range names {
				f := st.Feature(n)
				deps := ""
				if len(f.Dependencies) > 0 {
					deps = " <- " + strings.Join(f.Dependencies, ", ")
				}
				if len(f.SoftDependencies) > 0 {
					deps += " (soft: " + strings.Join(f.SoftDependencies, ", ") + ")"
				}
				fmt.Fprintf(w, "  %-11s %s %d/%d%s\n", f.State, n, f.Done, f.Total, deps)
			}
		}
	}
	return nil
}

// EpicRushText says how each feature of an epic's rush ended, then the
// rush.
func EpicRushText(w io.Writer, res *epic.RushResult) {
	done := 0
	for _, f := range res.Features {
		switch {
		case f.Already:
			done++
			fmt.Fprintf(w, "feature %s: already complete\n", f.Feature)
		case f.Result != nil && f.Result.Complete:
			done++
			fmt.Fprintf(w, "feature %s complete: %s done, staging %s at %s\n", f.Feature, words.Plural(f.Result.Tasks, "task"),
				f.Result.Staging, words.ShortHash(f.Result.Tip))
		case f.Result != nil:
			fmt.Fprintf(w, "feature %s ended: %s\n", f.Feature, words.CountsLine(f.Result.Counts))
		case f.Skipped != "":
			fmt.Fprintf(w, "feature %s not run: %s\n", f.Feature, f.Skipped)
		case f.Err != nil:
			fmt.Fprintf(w, "feature %s not run: %v\n", f.Feature, f.Err)
		}
	}
	if res.Complete {
		fmt.Fprintf(w, "rush of epic %s complete: %s done\n", res.Epic, words.Plural(done, "feature"))
	} else {
		fmt.Fprintf(w, "rush of epic %s ended: %d/%d features done\n", res.Epic, done, len(res.Features))
	}
}

// EpicBumpText says what `epic bump` did: the new version and the
// features it sent back to review.
func EpicBumpText(w io.Writer, name string, res *epic.BumpResult) {
	fmt.Fprintf(w, "epic %s is now v%d", name, res.Epic.Version)
	if len(res.Review) > 0 {
		fmt.Fprintf(w, "; needs review: %s", strings.Join(res.Review, ", "))
	}
	fmt.Fprintln(w)
}

// EpicApproveText says what `epic approve` did, and what is left to review.
func EpicApproveText(w io.Writer, name string, ep *state.Epic, features []string) {
	fmt.Fprintf(w, "approved %s in epic %s v%d", strings.Join(features, ", "), name, ep.Version)
	if len(ep.Review) > 0 {
		var left []string
		for _, r := range ep.Review {
			left = append(left, r.Feature)
		}
		fmt.Fprintf(w, "; still to review: %s", strings.Join(left, ", "))
	}
	fmt.Fprintln(w)
}

// EpicEvents prints a rush of an epic's events on p. Several features run
// at once: every line says whose it is, and the live line, which can only
// show one level, is left out.
func EpicEvents(p *Live) func(engine.Event) {
	return func(ev engine.Event) {
		switch ev.Type {
		case engine.EvProgress:
			return
		case engine.EvTransition:
			ev.Task = ev.Feature + "/" + ev.Task
		case engine.EvLevelEnd:
			return
		case engine.EvLevelMerged:
			p.Note("%s: level %d merged: staging at %s", ev.Feature, ev.Level, words.ShortHash(ev.Text))
			return
		case engine.EvNote, engine.EvLevelStart:
			if ev.Feature != "" {
				ev.Text = ev.Feature + ": " + ev.Text
			}
		}
		p.Event(ev)
	}
}
