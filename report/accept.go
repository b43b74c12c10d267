package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/git-zerg/git-zerg/engine/trust"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/printable"
	"github.com/git-zerg/git-zerg/view"
	"github.com/git-zerg/git-zerg/words"
)

// AcceptReviewText is what plan --accept shows before it asks: each task
// this machine does not trust as it now is, as a diff of its spec against
// the one accepted here (the whole spec when it is new here).
func AcceptReviewText(w io.Writer, rv *trust.Review) {
	if rv.Old {
		fmt.Fprintf(w, "note: the trust recorded here for %s was written by an older git-zerg and covered verification commands only: every task is shown\n", rv.Feature)
	}
	for _, rt := range rv.Changed {
		id := printable.String(rt.Task.ID())
		before := ""
		if rt.Accepted != nil {
			fmt.Fprintf(w, "%s: changed since accepted here\n", id)
			before = specText(rt.Accepted)
		} else {
			fmt.Fprintf(w, "%s: new here\n", id)
		}
		io.WriteString(w, view.LineDiff(before, specText(rt.Task.Spec)))
		if rt.ApprovedElsewhere {
			fmt.Fprintf(w, "%s: approved by %s in the shared state, not here: it needs git zerg approve %s on this machine too\n",
				id, printable.String(rt.Task.Approved), id)
		}
	}
	if len(rv.Removed) > 0 {
		fmt.Fprintf(w, "removed since accepted here: %s\n", printable.String(strings.Join(rv.Removed, ", ")))
	}
}

// AcceptQuestion asks for the yes that trusts the tasks of a review.
func AcceptQuestion(rv *trust.Review) string {
	return fmt.Sprintf("accept %s on this machine (its workers get them as shown)? [y/N] ", acceptCounts(rv))
}

// AcceptedText says what plan --accept trusted.
func AcceptedText(w io.Writer, rv *trust.Review) {
	fmt.Fprintf(w, "accepted %s of %s\n", acceptCounts(rv), rv.Feature)
}

func acceptCounts(rv *trust.Review) string {
	changed := 0
	for _, rt := range rv.Changed {
		if rt.Accepted != nil {
			changed++
		}
	}
	return fmt.Sprintf("%s (%d changed, %d new)", words.Plural(len(rv.Changed), "task"), changed, len(rv.Changed)-changed)
}

// specText is a task's spec as a reviewer reads it: indented JSON with
// sorted keys, a key a line, so that a diff names what changed.
func specText(sp *levels.Task) string {
	b, err := sp.MarshalJSON()
	if err != nil {
		return fmt.Sprintf("(%s: %v)\n", sp.ID, err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return string(b) + "\n"
	}
	out.WriteByte('\n')
	return out.String()
}
