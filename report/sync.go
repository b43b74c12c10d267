package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/forge/flow"
	"github.com/git-zerg/git-zerg/printable"
	"github.com/git-zerg/git-zerg/words"
)

// Sync is what `sync --json` prints: the remote, the rounds it took, what
// became of each feature and the refs pushed.
type Sync struct {
	Remote   string        `json:"remote"`
	Rounds   int           `json:"rounds"`
	Features []SyncFeature `json:"features"`
	Pushed   []string      `json:"pushed"`
}

// SyncFeature is one feature's merge in a sync.
type SyncFeature struct {
	Feature   string   `json:"feature"`
	Result    string   `json:"result"`
	Conflicts []string `json:"conflicts"`
}

// SyncOf is the document of a sync.
func SyncOf(res *engine.SyncResult) Sync {
	out := Sync{Remote: res.Remote, Rounds: res.Rounds, Features: []SyncFeature{}, Pushed: res.Pushed}
	for _, f := range res.Features {
		out.Features = append(out.Features, SyncFeature(f))
	}
	return out
}

// SyncText says in a line what became of each feature, and in the last
// how many refs were pushed.
func SyncText(w io.Writer, res *engine.SyncResult) {
	for _, f := range res.Features {
		line := fmt.Sprintf("%s: %s", f.Feature, f.Result)
		if len(f.Conflicts) > 0 {
			line += "; " + strings.Join(f.Conflicts, "; ")
		}
		fmt.Fprintln(w, printable.String(line))
	}
	fmt.Fprintf(w, "synced with %s: %s pushed\n", res.Remote, words.Plural(len(res.Pushed), "ref"))
}

// SyncForgeText says each task `sync --forge` moved on stdout, and each
// issue or pull request it left alone on stderr.
func SyncForgeText(stdout, stderr io.Writer, res *flow.SyncResult) {
	for _, c := range res.Changes {
		fmt.Fprintf(stdout, "%s %s: %s\n", c.Task, c.To, printable.String(c.Reason))
	}
	for _, s := range res.Skipped {
		fmt.Fprintln(stderr, "skipped "+printable.String(s))
	}
	fmt.Fprintf(stdout, "synced %s with the forge: %s\n", res.Feature, words.Plural(len(res.Changes), "change"))
}
