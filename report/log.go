package report

import (
	"encoding/json"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/printable"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/view"
)

// LogEntry is one state commit of a feature, as `log` shows it.
type LogEntry struct {
	Commit  string   `json:"commit"`
	At      string   `json:"at"`
	Subject string   `json:"subject"`
	Op      state.Op `json:"op"`
	Task    string   `json:"task,omitempty"`
	Worker  string   `json:"worker,omitempty"`
	From    string   `json:"from,omitempty"`
	To      string   `json:"to,omitempty"`
	Reason  string   `json:"reason,omitempty"`
	Clock   uint64   `json:"clock"`
	Diff    string   `json:"diff,omitempty"`
	// Also lists the transitions of other tasks made by the same commit
	// (a claim that first records the expiry of another worker's lease).
	Also []LogChange `json:"also,omitempty"`
}

// LogChange is a transition of another task in a state commit.
type LogChange struct {
	Task   string   `json:"task"`
	Op     state.Op `json:"op"`
	From   string   `json:"from"`
	To     string   `json:"to"`
	Worker string   `json:"worker,omitempty"`
	Reason string   `json:"reason,omitempty"`
	Diff   string   `json:"diff,omitempty"`
}

// ReadLog reads the feature's state commits, newest first, at most limit
// (0: all); patch adds the diff of each task's stored state.
func ReadLog(s *gitstore.Store, feature string, limit int, patch bool) ([]LogEntry, error) {
	entries, err := s.Log(feature, limit)
	if err != nil {
		return nil, err
	}
	out := []LogEntry{}
	for _, en := range entries {
		m := en.Message
		lj := LogEntry{Commit: en.Hash.String(), At: en.When.UTC().Format("2006-01-02T15:04:05Z"), Subject: m.Subject,
			Op: m.Op, Task: m.Task, Worker: m.Worker, From: m.From, To: m.To, Reason: m.Reason, Clock: m.Clock}
		if patch && m.Task != "" {
			if lj.Diff, err = view.TaskDiff(s, en, m.Task); err != nil {
				return nil, err
			}
		}
		if m.Op != state.OpPlan {
			others, err := changedTasks(s, en)
			if err != nil {
				return nil, err
			}
			for _, id := range others {
				if id == m.Task {
					continue
				}
				changes, err := transitionsAt(s, en, id)
				if err != nil {
					return nil, err
				}
				if patch && len(changes) > 0 {
					if changes[len(changes)-1].Diff, err = view.TaskDiff(s, en, id); err != nil {
						return nil, err
					}
				}
				lj.Also = append(lj.Also, changes...)
			}
		}
		out = append(out, lj)
	}
	return out, nil
}

// WriteLogText writes the log for people.
func WriteLogText(w io.Writer, log []LogEntry) {
	for _, lj := range log {
		fmt.Fprintf(w, "%s %s %s\n", lj.Commit[:12], lj.At, printable.String(lj.Subject))
		if lj.Reason != "" {
			fmt.Fprintf(w, "    reason: %s\n", printable.String(lj.Reason))
		}
		if lj.Diff != "" {
			fmt.Fprint(w, indent(lj.Diff, "    "))
		}
		for _, c := range lj.Also {
			line := fmt.Sprintf("    also %s %s: %s -> %s", c.Op, c.Task, c.From, c.To)
			if c.Worker != "" {
				line += " (" + c.Worker + ")"
			}
			if c.Reason != "" {
				line += ": " + c.Reason
			}
			fmt.Fprintln(w, printable.String(line))
			if c.Diff != "" {
				fmt.Fprint(w, indent(c.Diff, "    "))
			}
		}
	}
}

// changedTasks lists the ids of the tasks a state commit changed, by
// comparing its tasks tree with its parent's (in process: log reads every
// commit of the feature).
func changedTasks(s *gitstore.Store, en gitstore.Entry) ([]string, error) {
	if en.Parent.IsZero() {
		return nil, nil
	}
	before, err := tasksTree(s, en.Parent)
	if err != nil {
		return nil, err
	}
	after, err := tasksTree(s, en.Hash)
	if err != nil {
		return nil, err
	}
	if before.IsZero() || after.IsZero() || before == after {
		return nil, nil
	}
	changes, err := s.DiffTrees(before, after)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, c := range changes {
		ids = append(ids, path.Base(c.Path))
	}
	sort.Strings(ids)
	return ids, nil
}

// tasksTree is the tasks tree of a state commit, zero when it has none.
func tasksTree(s *gitstore.Store, h plumbing.Hash) (plumbing.Hash, error) {
	c, err := s.ReadCommit(h)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	e, err := s.EntryAt(c.TreeHash, "tasks")
	if err != nil || e.Mode != filemode.Dir {
		return plumbing.ZeroHash, nil
	}
	return e.Hash, nil
}

// transitionsAt returns the events a state commit recorded for a task:
// those stamped with the commit's clock.
func transitionsAt(s *gitstore.Store, en gitstore.Entry, id string) ([]LogChange, error) {
	b, err := s.TaskAt(en.Hash, id)
	if err != nil || b == nil {
		return nil, err
	}
	var t state.Task
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, err
	}
	var out []LogChange
	for _, ev := range t.History {
		if ev.Clock == en.Message.Clock {
			out = append(out, LogChange{Task: id, Op: ev.Op, From: string(ev.From), To: string(ev.To), Worker: ev.Worker, Reason: ev.Reason})
		}
	}
	return out, nil
}

func indent(s, pre string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString(pre + l)
		}
	}
	return b.String()
}
