package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/git-zerg/git-zerg/hooks"
)

// HooksText is the text of `hooks status`: where the hooks are, and a line
// a hook.
func HooksText(w io.Writer, r hooks.Report) error {
	fmt.Fprintf(w, "hooks directory: %s\n", r.Dir)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, h := range r.Hooks {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", h.Name, h.State, h.Summary())
	}
	return tw.Flush()
}
