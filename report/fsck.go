package report

import (
	"fmt"
	"io"

	"github.com/git-zerg/git-zerg/fsck"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/printable"
)

// Fsck is what `fsck --json` prints.
type Fsck struct {
	OK       bool          `json:"ok"`
	Features []FsckFeature `json:"features"`
}

// FsckFeature is the replay of one feature's state history.
type FsckFeature struct {
	Feature  string        `json:"feature"`
	Tip      string        `json:"tip"`
	Commits  int           `json:"commits"`
	Problems []FsckProblem `json:"problems"`
}

// FsckProblem is a transition fsck found wrong.
type FsckProblem struct {
	Commit  string `json:"commit"`
	Task    string `json:"task,omitempty"`
	Message string `json:"message"`
}

// FsckOf is the document of the features' replays.
func FsckOf(rs []*fsck.Report) Fsck {
	out := Fsck{OK: true, Features: []FsckFeature{}}
	for _, r := range rs {
		fj := FsckFeature{Feature: r.Feature, Tip: r.Tip, Commits: r.Commits, Problems: []FsckProblem{}}
		for _, p := range r.Problems {
			fj.Problems = append(fj.Problems, FsckProblem{p.Commit, p.Task, p.Msg})
		}
		out.Features = append(out.Features, fj)
		if len(r.Problems) > 0 {
			out.OK = false
		}
	}
	return out
}

// FsckText prints a feature's problems, one a line, or that it has none
// (on w), and on hints what to do about them.
func FsckText(w, hints io.Writer, r *fsck.Report, asJSON bool) {
	if !asJSON {
		for _, p := range r.Problems {
			fmt.Fprintln(w, printable.String(p.String()))
		}
		if len(r.Problems) == 0 {
			fmt.Fprintf(w, "%s: %d state commits, every transition legal\n", r.Feature, r.Commits)
		}
	}
	if r.Moved {
		fmt.Fprintf(hints, "hint: if %s was moved on purpose, remove %s\n", gitstore.FeatureRef(r.Feature), r.SeenFile)
	}
	for _, p := range r.Problems {
		if p.Unchecked {
			fmt.Fprintln(hints, "hint: work done on another machine can be checked once its commits are fetched here")
			break
		}
	}
}
