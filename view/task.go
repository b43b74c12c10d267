package view

import (
	"errors"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/printable"
	"github.com/git-zerg/git-zerg/proc"
	"github.com/git-zerg/git-zerg/state"
)

// Change is a state commit that changed a task, with the diff of the
// task's stored state it made (what `git zerg log -p` prints).
type Change struct {
	Commit  string    `json:"commit"`
	At      time.Time `json:"at"`
	Subject string    `json:"subject"`
	Diff    string    `json:"diff"`
}

// Detail is everything the views show of one task.
type Detail struct {
	Task     *state.Task `json:"task"`
	Changes  []Change    `json:"changes"`  // newest first
	Attempts []int       `json:"attempts"` // attempt logs present on this machine
	// Partial: the walk stopped before the task's oldest change (see
	// walkLimit); `git zerg log -p` has them all.
	Partial bool `json:"partial,omitempty"`
}

// walkLimit bounds the commits a task's page reads: every task's history
// starts at the plan, so without it a task of a long rush would read the
// feature's whole log on each visit.
const walkLimit = 5000

// loadDetail reads a task, the commits that changed it and the attempt
// logs this machine has of it.
func loadDetail(s *gitstore.Store, feature, id string) (*Detail, error) {
	tx, err := s.View(feature)
	if err != nil {
		return nil, err
	}
	return detailOf(s, tx, id)
}

// detailOf reads a task's detail as of tx's tip.
func detailOf(s *gitstore.Store, tx *gitstore.Tx, id string) (*Detail, error) {
	feature := tx.Feature()
	t, err := tx.Task(id)
	if err != nil {
		return nil, err
	}
	d := &Detail{Task: t, Changes: []Change{}, Attempts: taskAttempts(s, feature, id)}
	clocks := map[uint64]bool{}
	low := ^uint64(0)
	for _, ev := range t.History {
		clocks[ev.Clock] = true
		low = min(low, ev.Clock)
	}
	tip := tx.Tip()
	// A transition stamps the task's events with its commit's clock, so
	// the commits that changed the task are those whose clocks its history
	// holds; the walk stops below the oldest of them.
	for h, walked := tip, 0; !h.IsZero(); walked++ {
		if walked == walkLimit {
			d.Partial = true
			break
		}
		c, err := s.ReadCommit(h)
		if err != nil {
			return nil, err
		}
		m := gitstore.ParseMessage(c.Message)
		var parent plumbing.Hash
		if len(c.ParentHashes) > 0 {
			parent = c.ParentHashes[0]
		}
		if clocks[m.Clock] {
			en := gitstore.Entry{Hash: h, Parent: parent, When: c.Committer.When, Message: m}
			diff, err := TaskDiff(s, en, id)
			if err != nil {
				return nil, err
			}
			if diff != "" {
				d.Changes = append(d.Changes, Change{Commit: h.String(), At: en.When, Subject: m.Subject, Diff: diff})
			}
		}
		if m.Clock != 0 && m.Clock <= low {
			break
		}
		h = parent
	}
	return d, nil
}

// TaskDiff is the diff of a task's stored state that a state commit made.
func TaskDiff(s *gitstore.Store, en gitstore.Entry, id string) (string, error) {
	before, err := s.TaskAt(en.Parent, id)
	if err != nil {
		return "", err
	}
	after, err := s.TaskAt(en.Hash, id)
	if err != nil {
		return "", err
	}
	return LineDiff(string(before), string(after)), nil
}

// LineDiff renders a line diff of two stored states: changed lines with
// -/+ and one line of context around them.
func LineDiff(a, b string) string {
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToChars(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)
	type line struct {
		op   diffmatchpatch.Operation
		text string
	}
	var all []line
	for _, d := range diffs {
		for _, l := range strings.SplitAfter(d.Text, "\n") {
			if l != "" {
				all = append(all, line{d.Type, strings.TrimSuffix(l, "\n")})
			}
		}
	}
	near := func(i int) bool {
		for j := i - 1; j <= i+1; j++ {
			if j >= 0 && j < len(all) && all[j].op != diffmatchpatch.DiffEqual {
				return true
			}
		}
		return false
	}
	var b2 strings.Builder
	skipped := false
	for i, l := range all {
		if !near(i) {
			skipped = true
			continue
		}
		if skipped {
			b2.WriteString("  ...\n")
			skipped = false
		}
		switch l.op {
		case diffmatchpatch.DiffInsert:
			b2.WriteString("+ ")
		case diffmatchpatch.DiffDelete:
			b2.WriteString("- ")
		default:
			b2.WriteString("  ")
		}
		b2.WriteString(printable.String(l.text))
		b2.WriteString("\n")
	}
	return b2.String()
}

// runDir is where a rush keeps a task's prompts and attempt logs. The
// names come from requests too, so they are checked before they make a
// path.
func runDir(s *gitstore.Store, feature, id string) (string, bool) {
	if levels.ValidFeatureName(feature) != nil || !levels.ValidID(id) {
		return "", false
	}
	return s.Layout().RunDir(feature, id), true
}

// taskAttempts lists the attempts whose logs this machine has, in order. A
// task worked on another host has none here.
func taskAttempts(s *gitstore.Store, feature, id string) []int {
	dir, ok := runDir(s, feature, id)
	out := []int{}
	if !ok {
		return out
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if n, ok := gitstore.AttemptOf(e.Name()); ok {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

// logFile is the path of an attempt's log on this machine.
func logFile(s *gitstore.Store, feature, id string, attempt int) (string, bool) {
	if _, ok := runDir(s, feature, id); !ok || attempt <= 0 {
		return "", false
	}
	return s.Layout().AttemptLog(feature, id, attempt), true
}

// Output is the end of an attempt's log: at most max bytes, cut at a line
// start when cut at all. attempt 0 means the last one.
type Output struct {
	Attempt   int    `json:"attempt"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`
	Size      int64  `json:"size"`
}

// errNoOutput: this machine has no log of that attempt.
var errNoOutput = errors.New("no output on this machine")

// readOutput reads the end of an attempt's log.
func readOutput(s *gitstore.Store, feature, id string, attempt int, max int64) (*Output, error) {
	if attempt <= 0 {
		as := taskAttempts(s, feature, id)
		if len(as) == 0 {
			return nil, errNoOutput
		}
		attempt = as[len(as)-1]
	}
	path, ok := logFile(s, feature, id, attempt)
	if !ok {
		return nil, errNoOutput
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, errNoOutput
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	out := &Output{Attempt: attempt, Size: fi.Size()}
	start := int64(0)
	if max > 0 && fi.Size() > max {
		start, out.Truncated = fi.Size()-max, true
	}
	b, err := io.ReadAll(io.NewSectionReader(f, start, fi.Size()-start))
	if err != nil {
		return nil, err
	}
	if out.Truncated {
		if i := strings.IndexByte(string(b), '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	// The rush scrubs logs as it writes them; this is for those an older
	// version wrote verbatim, shown to a browser.
	out.Text = proc.Scrub(string(b), os.Environ())
	return out, nil
}
