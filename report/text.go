package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/printable"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/view"
	"github.com/git-zerg/git-zerg/words"
)

// TextOptions shape text status.
type TextOptions struct {
	// Summary: counts from the index, and only the tasks a person acts on
	// (see view.Summary), for a large feature.
	Summary bool
	// Policy is asked for by a summary, for the ready tasks; nil leaves
	// them out.
	Policy func() *gates.Policy
	// Before runs once the state is read, before anything is written;
	// AfterHead after the first line.
	Before, AfterHead func()
}

// WriteStatusText writes status for people: progress and counts, what was
// spent, the tasks, the workers and the active locks.
func WriteStatusText(w io.Writer, sn *view.Snapshot, o TextOptions) error {
	var err error
	if o.Summary {
		_, err = sn.Index()
	} else {
		_, err = sn.StateTasks()
	}
	if err != nil {
		return err
	}
	counts, total, err := sn.Tally()
	if err != nil {
		return err
	}
	if o.Before != nil {
		o.Before()
	}
	p := progressOf(counts[string(state.Done)], total)
	fmt.Fprintf(w, "feature %s: %d/%d done (%d%%)  %s\n", sn.Feature, p.Done, p.Total, p.Percent, words.CountsLine(counts))
	if o.AfterHead != nil {
		o.AfterHead()
	}
	// A summary reads only the tasks it lists: the total is --json's.
	if !o.Summary {
		if spent, err := sn.Spent(); err != nil {
			return err
		} else if spent != (state.Usage{}) {
			fmt.Fprintf(w, "spent: %s\n", usageLine(&spent))
		}
		if err := statusTasksText(w, sn); err != nil {
			return err
		}
	} else {
		var p *gates.Policy
		if o.Policy != nil {
			p = o.Policy()
		}
		if err := statusSummary(w, sn, p); err != nil {
			return err
		}
	}
	now := sn.Taken
	if len(sn.Leases) > 0 {
		fmt.Fprintln(w, "\nworkers:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, l := range sn.Leases {
			lease := "lease expired"
			switch {
			case sn.HolderDied(l):
				lease = fmt.Sprintf("its rush (pid %d) died: git zerg rush --resume takes it back", l.PID)
			case now.Before(l.Expires):
				lease = "lease " + words.Duration(l.Expires.Sub(now)) + " left"
			}
			fmt.Fprintf(tw, "  %s\t%s\tfor %s\t%s\n", printable.String(l.Name), printable.String(l.Task), words.Duration(now.Sub(l.Since)), lease)
		}
		tw.Flush()
	}
	locks, err := sn.ActiveLocks()
	if err != nil {
		return err
	}
	if len(locks) > 0 {
		fmt.Fprintln(w, "\nlocks:")
		LocksText(w, locks, now)
	}
	return nil
}

// LocksText lists locks, one a line.
func LocksText(w io.Writer, locks []state.Lock, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, l := range locks {
		what := l.Reason
		if l.Task != "" {
			what = l.Feature + "/" + l.Task
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\texpires in %s\n", printable.String(l.Path), printable.String(l.Owner), printable.String(what), words.Duration(l.Expires.Sub(now)))
	}
	tw.Flush()
}

// statusTasksText lists every task, level by level.
func statusTasksText(w io.Writer, sn *view.Snapshot) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, lv := range levelsOf(sn) {
		mark := "open"
		if lv.Done {
			mark = "done"
		}
		fmt.Fprintf(tw, "\nlevel %d\t%s\t%s\n", lv.Level, mark, words.CountsLine(lv.Counts))
		for _, id := range lv.Tasks {
			t, err := sn.StateTask(id)
			if err != nil {
				return err
			}
			taskLine(tw, sn, t)
		}
	}
	return tw.Flush()
}

func taskLine(tw io.Writer, sn *view.Snapshot, t *state.Task) {
	extra := ""
	switch {
	case t.Status == state.Claimed:
		extra = "by " + t.Worker
		if t.Host != "" && t.Host != sn.Host().Name {
			extra += " on " + t.Host
		}
	case t.Reason != "" && t.Status.Stopped():
		extra = t.Reason
		if sn.HasLog(t) {
			extra += " (output: git zerg logs " + t.ID() + ")"
		}
	case t.Commit != "":
		extra = words.ShortHash(t.Commit)
	}
	if t.Attempts > 1 {
		extra += fmt.Sprintf(" (attempt %d)", t.Attempts)
	}
	if u := t.Spent(); u != (state.Usage{}) {
		extra += " · " + usageLine(&u)
	}
	for _, n := range []struct {
		what string
		n    int
	}{{"issue", t.Spec.Issue}, {"PR", t.PR}} {
		if n.n == 0 {
			continue
		}
		if strings.TrimSpace(extra) != "" {
			extra += " ·"
		}
		extra += fmt.Sprintf(" %s #%d", n.what, n.n)
	}
	fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", printable.String(t.ID()), printable.String(string(t.Status)), printable.String(t.Spec.Title), printable.String(strings.TrimSpace(extra)))
}

// statusSummary is status for a large feature: the open levels and the
// lists of view.Summary, reading only the tasks listed.
func statusSummary(w io.Writer, sn *view.Snapshot, p *gates.Policy) error {
	su, err := sn.Summarise(p)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "(%d tasks, summarised: git zerg status --all lists every one)\n", su.Total)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, lv := range su.Open {
		fmt.Fprintf(tw, "level %d\topen\t%s\n", lv.Level, words.CountsLine(lv.Counts))
	}
	if su.MoreOpen > 0 {
		fmt.Fprintf(tw, "%s more\t\t\n", words.Plural(su.MoreOpen, "open level"))
	}
	if len(su.DoneLevels) > 0 {
		fmt.Fprintf(tw, "%s done\t\t\n", levelRange(su.DoneLevels))
	}
	tw.Flush()
	// Tasks under way are listed whole: there are as many as workers.
	for _, l := range []struct {
		title string
		ids   []string
		max   int
	}{{"under way", su.Active, len(su.Active)}, {"failed", su.Failed, view.SummaryList}, {"blocked", su.Blocked, view.SummaryList}, {"ready", su.Ready, view.SummaryList}} {
		if err := listTasks(w, sn, l.title, l.ids, l.max); err != nil {
			return err
		}
	}
	return nil
}

func listTasks(w io.Writer, sn *view.Snapshot, title string, ids []string, max int) error {
	if len(ids) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n%s (%d):\n", title, len(ids))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, id := range ids {
		if i == max {
			break
		}
		t, err := sn.StateTask(id)
		if err != nil {
			return err
		}
		taskLine(tw, sn, t)
	}
	tw.Flush()
	if len(ids) > max {
		fmt.Fprintf(w, "  … %d more\n", len(ids)-max)
	}
	return nil
}
