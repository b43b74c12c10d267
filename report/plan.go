package report

import (
	"fmt"
	"io"

	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/printable"
)

// Plan is what `plan --json` prints, and each feature of `epic plan --json`.
type Plan struct {
	Feature  string     `json:"feature"`
	Tasks    int        `json:"tasks"`
	Levels   [][]string `json:"levels"`
	Warnings []Problem  `json:"warnings"`
	Commit   string     `json:"commit"`
}

// Validate is what `validate --json` prints.
type Validate struct {
	File     string     `json:"file"`
	Valid    bool       `json:"valid"`
	Feature  string     `json:"feature"`
	Tasks    int        `json:"tasks"`
	Levels   [][]string `json:"levels"`
	Errors   []Problem  `json:"errors"`
	Warnings []Problem  `json:"warnings"`
}

// ProblemsText prints the problems of a file one a line, each with its
// place, errors first; file "" leaves the file's name out (an issue's
// problems name their issue).
func ProblemsText[P fmt.Stringer](w io.Writer, file string, errs, warns []P) {
	pre := ""
	if file != "" {
		pre = file + ": "
	}
	for _, p := range errs {
		fmt.Fprintf(w, "%s%s\n", pre, printable.String(p.String()))
	}
	for _, p := range warns {
		fmt.Fprintf(w, "%swarning: %s\n", pre, printable.String(p.String()))
	}
}

// ValidateOf is the document of `validate --json` on file: plan is nil when
// the graph could not be levelled.
func ValidateOf(file string, plan *levels.Plan, errs, warns []levels.Problem, valid bool) Validate {
	out := Validate{File: file, Valid: valid, Levels: [][]string{}, Errors: ProblemsOf(errs), Warnings: ProblemsOf(warns)}
	if plan != nil {
		out.Feature, out.Tasks, out.Levels = plan.Graph.Feature, len(plan.Graph.Tasks), plan.Levels
	}
	return out
}
