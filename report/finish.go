package report

import (
	"fmt"
	"io"

	"github.com/git-zerg/git-zerg/printable"
	"github.com/git-zerg/git-zerg/rush/finish"
	"github.com/git-zerg/git-zerg/words"
)

// Finish is what `finish --json` prints for one feature (`finish --epic
// --json`: an array of them, in the order they were finished).
type Finish struct {
	Feature string `json:"feature"`
	Staging string `json:"staging"`
	Tip     string `json:"tip"`
	Branch  string `json:"branch"`
	// How: "fast-forward", "merge" or "up to date".
	How     string   `json:"how"`
	From    string   `json:"from"`
	To      string   `json:"to"`
	Cleanup *Cleanup `json:"cleanup"`
}

// FinishOf is the document of one finished feature.
func FinishOf(f *finish.Finished) Finish {
	out := Finish{Feature: f.Feature, Staging: f.Staging, Tip: f.Tip, Branch: f.Merged.Branch, How: f.Merged.How,
		From: f.Merged.From, To: f.Merged.To}
	if f.Cleaned != nil {
		c := CleanupOf(f.Feature, f.Cleaned)
		out.Cleanup = &c
	}
	return out
}

// FinishText says in a line what finish did to the branch, and in another
// what its cleanup removed.
func FinishText(w io.Writer, f *finish.Finished) {
	m := f.Merged
	switch m.How {
	case "fast-forward":
		fmt.Fprintf(w, "finished %s: fast-forward %s to %s\n", f.Feature, printable.String(m.Branch), words.ShortHash(m.To))
	case "merge":
		fmt.Fprintf(w, "finished %s: merged %s into %s, merge commit %s\n", f.Feature, f.Staging, printable.String(m.Branch), words.ShortHash(m.To))
	default:
		fmt.Fprintf(w, "finished %s: %s already has %s (%s)\n", f.Feature, printable.String(m.Branch), f.Staging, words.ShortHash(f.Tip))
	}
	if f.Cleaned != nil {
		CleanupText(w, f.Feature, f.Cleaned)
	}
}
