package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/forge/flow"
	"github.com/git-zerg/git-zerg/printable"
	"github.com/git-zerg/git-zerg/words"
)

// Feature is a planned feature in `features --json`.
type Feature struct {
	Feature  string         `json:"feature"`
	Current  bool           `json:"current"`
	Tasks    int            `json:"tasks"`
	Done     int            `json:"done"`
	Complete bool           `json:"complete"`
	Counts   map[string]int `json:"counts"`
}

// WriteFeatures prints the planned features, a line each, the current one
// marked (or as JSON).
func WriteFeatures(w io.Writer, fs []engine.FeatureSummary, asJSON bool) error {
	if asJSON {
		out := []Feature{}
		for _, f := range fs {
			out = append(out, Feature{f.Name, f.Current, f.Tasks, f.Done, f.Complete, f.Counts})
		}
		return WriteJSON(w, out)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range fs {
		mark := " "
		if f.Current {
			mark = "*"
		}
		fmt.Fprintf(tw, "%s %s\t%d/%d done\t%s\n", mark, printable.String(f.Name), f.Done, f.Tasks, words.CountsLine(f.Counts))
	}
	return tw.Flush()
}

// Ship is what `ship --json` prints.
type Ship struct {
	Feature string         `json:"feature"`
	Shipped []flow.Shipped `json:"shipped"`
	Landed  []flow.Shipped `json:"landed"`
	Waiting []flow.Shipped `json:"waiting"`
	Refused []string       `json:"refused"`
}

// ShipOf is the document of a ship.
func ShipOf(res *flow.ShipResult) Ship {
	return Ship{res.Feature, nonNilOf(res.Shipped), nonNilOf(res.Landed), nonNilOf(res.Waiting), nonNil(res.Refused)}
}

// ShipText says what ship did, a line a task; the refusals go to refusals.
func ShipText(w, refusals io.Writer, res *flow.ShipResult) {
	for _, s := range res.Landed {
		fmt.Fprintf(w, "%s done: pull request #%d merged\n", s.Task, s.PR)
	}
	for _, s := range res.Shipped {
		verb := "updated"
		if s.Opened {
			verb = "opened"
		}
		fmt.Fprintf(w, "%s in review: pull request #%d %s (%s)\n", s.Task, s.PR, verb, printable.String(s.Branch))
	}
	for _, s := range res.Waiting {
		fmt.Fprintf(w, "%s waits for pull request #%d\n", s.Task, s.PR)
	}
	for _, r := range res.Refused {
		fmt.Fprintln(refusals, printable.String(r))
	}
}

// nonNilOf is s, or an empty list for JSON's [] instead of null.
func nonNilOf[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
