package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/printable"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/state"
)

func statusCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "levels, tasks, workers, locks and progress of the feature",
		Description: "A feature of more than " + fmt.Sprint(summaryAbove) + " tasks is summarised: counts per level and state,\n" +
			"the tasks under way, failed and blocked, and the first ready ones.\n" +
			"--all lists every task; --json always does.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Usage: "list every task, however many"},
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			return runStatus(e, c.Bool("all"))
		},
	}
}

// summaryAbove is the size past which status summarises: a person reads a
// screenful, and 10,000 lines of pending tasks hide the few that matter.
// Features up to it print every task, as scripts written for them expect.
const summaryAbove = 50

// summaryList bounds each list of a summary (failed, blocked, ready).
const summaryList = 20

type statusJSON struct {
	Feature  string         `json:"feature"`
	Complete bool           `json:"complete"`
	Progress progressJSON   `json:"progress"`
	Counts   map[string]int `json:"counts"`
	Tasks    []taskJSON     `json:"tasks"`
	Levels   []levelJSON    `json:"levels"`
	Workers  []workerJSON   `json:"workers"`
	Locks    []lockJSON     `json:"locks"`
	// Spent is what the agents reported in total, absent when none did.
	Spent *usageJSON `json:"spent,omitempty"`
}

type progressJSON struct {
	Done    int `json:"done"`
	Total   int `json:"total"`
	Percent int `json:"percent"`
}

// snapshot is everything status-like commands print, read once.
type snapshot struct {
	feature string
	meta    *state.Feature
	tasks   []*state.Task
	byID    map[string]*state.Task
	workers []*state.Worker
	locks   []state.Lock // active only
	tx      *gitstore.Tx
	// ix is the task index, read for a summary instead of every task.
	ix *gitstore.Index
}

func (sn *snapshot) loadTasks() error {
	tasks, err := sn.tx.Tasks()
	if err != nil {
		return err
	}
	sn.tasks, sn.byID = tasks, make(map[string]*state.Task, len(tasks))
	for _, t := range tasks {
		sn.byID[t.ID()] = t
	}
	return nil
}

func (e *env) snapshot() (*snapshot, error) {
	sn, err := e.snapshotOnly()
	if err != nil {
		return nil, err
	}
	return sn, sn.loadTasks()
}

// snapshotOnly reads all but the tasks: a summary reads the few it lists.
func (e *env) snapshotOnly() (*snapshot, error) {
	_, tx, feature, err := e.view()
	if err != nil {
		return nil, err
	}
	meta, err := tx.Meta()
	if err != nil {
		return nil, err
	}
	ws, err := tx.Workers()
	if err != nil {
		return nil, err
	}
	all, err := tx.Locks()
	if err != nil {
		return nil, err
	}
	sn := &snapshot{feature: feature, meta: meta, tx: tx}
	for _, w := range ws {
		sn.workers = append(sn.workers, w)
	}
	sort.Slice(sn.workers, func(i, j int) bool { return sn.workers[i].Name < sn.workers[j].Name })
	now := e.now()
	for _, l := range all {
		if l.Active(now) {
			sn.locks = append(sn.locks, l)
		}
	}
	return sn, nil
}

func (sn *snapshot) levels() []levelJSON {
	out := []levelJSON{}
	for i, ids := range sn.meta.Levels {
		lv := levelJSON{Level: i + 1, Tasks: ids, Counts: map[string]int{}, Done: true}
		for _, st := range state.Statuses {
			lv.Counts[string(st)] = 0
		}
		for _, id := range ids {
			st := sn.byID[id].Status
			lv.Counts[string(st)]++
			if st != state.Done {
				lv.Done = false
			}
		}
		out = append(out, lv)
	}
	return out
}

func runStatus(e *env, all bool) error {
	// Programs polling --json are not the ones to tell about hooks, and
	// they would pay the warning's git processes on every poll; a person
	// reading the text is. Its git processes run while the state loads.
	warning := func() string { return "" }
	if !e.json {
		if s, err := e.Store(); err == nil {
			warning = e.startHooksWarning(s)
		}
	}
	if err := e.checkState(); err != nil {
		return err
	}
	sn, err := e.snapshotOnly()
	if err != nil {
		return err
	}
	// A person's status of a large feature reads the index, and the few
	// tasks it lists; everything else reads every task.
	planned := 0
	for _, ids := range sn.meta.Levels {
		planned += len(ids)
	}
	summary := !e.json && !all && planned > summaryAbove
	if summary {
		if sn.ix, err = sn.tx.Index(); err != nil {
			return err
		}
	}
	var counts map[string]int
	total := 0
	if summary {
		counts, total = sn.ix.Counts(), sn.ix.Len()
	} else {
		if err := sn.loadTasks(); err != nil {
			return err
		}
		counts, total = countStatuses(sn.tasks), len(sn.tasks)
	}
	done := counts[string(state.Done)]
	prog := progressJSON{Done: done, Total: total}
	if prog.Total > 0 {
		prog.Percent = done * 100 / prog.Total
	}
	if e.json {
		out := statusJSON{Feature: sn.feature, Complete: done == total, Progress: prog, Counts: counts,
			Tasks: []taskJSON{}, Levels: sn.levels(), Workers: []workerJSON{}, Locks: locksOut(sn.locks)}
		for _, t := range sn.tasks {
			out.Tasks = append(out.Tasks, taskOut(t, false))
		}
		for _, w := range sn.workers {
			out.Workers = append(out.Workers, workerJSON{w.Name, w.Owner, w.Task, w.Since.UTC(), w.Expires.UTC(), w.Host, w.PID})
		}
		spent := sn.spent()
		out.Spent = usageOut(&spent)
		return out.write(e.stdout)
	}
	e.printHooksWarning(warning())
	now := e.now()
	fmt.Fprintf(e.stdout, "feature %s: %d/%d done (%d%%)  %s\n", sn.feature, done, total, prog.Percent, countsLine(counts))
	e.printEpicReview(sn.feature)
	// A summary reads only the tasks it lists: the total is --json's.
	if spent := sn.spent(); !summary && spent != (state.Usage{}) {
		fmt.Fprintf(e.stdout, "spent: %s\n", usageLine(&spent))
	}
	if summary {
		if err := sn.printSummary(e); err != nil {
			return err
		}
	} else {
		sn.printTasks(e)
	}
	if len(sn.workers) > 0 {
		fmt.Fprintln(e.stdout, "\nworkers:")
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		for _, w := range sn.workers {
			lease := "lease expired"
			switch {
			case w.PID > 0 && w.Host == gitstore.Hostname() && !engine.ClaimHolderAlive(w):
				// Its lease would hold for hours; say what ends it now.
				lease = fmt.Sprintf("its rush (pid %d) died: git zerg rush --resume takes it back", w.PID)
			case now.Before(w.Expires):
				lease = "lease " + roundDur(w.Expires.Sub(now)) + " left"
			}
			fmt.Fprintf(tw, "  %s\t%s\tfor %s\t%s\n", printable.String(w.Name), printable.String(w.Task), roundDur(now.Sub(w.Since)), lease)
		}
		tw.Flush()
	}
	if len(sn.locks) > 0 {
		fmt.Fprintln(e.stdout, "\nlocks:")
		printLocks(e, sn.locks)
	}
	return nil
}

// printTasks lists every task, level by level.
func (sn *snapshot) printTasks(e *env) {
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	for _, lv := range sn.levels() {
		mark := "open"
		if lv.Done {
			mark = "done"
		}
		fmt.Fprintf(tw, "\nlevel %d\t%s\t%s\n", lv.Level, mark, countsLine(lv.Counts))
		for _, id := range lv.Tasks {
			sn.printTask(e, tw, sn.byID[id])
		}
	}
	tw.Flush()
}

func (sn *snapshot) printTask(e *env, tw io.Writer, t *state.Task) {
	extra := ""
	switch {
	case t.Status == state.Claimed:
		extra = "by " + t.Worker
		if t.Host != "" && t.Host != gitstore.Hostname() {
			extra += " on " + t.Host
		}
	case t.Reason != "" && (t.Status == state.Failed || t.Status == state.Blocked):
		extra = t.Reason
		if e.hasLog(sn.feature, t) {
			extra += " (output: git zerg logs " + t.ID() + ")"
		}
	case t.Commit != "":
		extra = shortHash(t.Commit)
	}
	if t.Attempts > 1 {
		extra += fmt.Sprintf(" (attempt %d)", t.Attempts)
	}
	if u := t.Spent(); u != (state.Usage{}) {
		extra += " · " + usageLine(&u)
	}
	fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", t.ID(), t.Status, printable.String(t.Spec.Title), printable.String(strings.TrimSpace(extra)))
}

// printSummary is status for a large feature: what a person acts on
// (tasks under way, failed, blocked, the next ready ones) in full or in
// bounded lists, and the rest as counts, from the index: only the tasks
// listed are read.
func (sn *snapshot) printSummary(e *env) error {
	w := e.stdout
	ix := sn.ix
	fmt.Fprintf(w, "(%d tasks, summarised: git zerg status --all lists every one)\n", ix.Len())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var doneLevels []int
	open := 0
	for i, ids := range sn.meta.Levels {
		counts := map[string]int{}
		for _, id := range ids {
			counts[string(ix.Status(id))]++
		}
		if counts[string(state.Done)] == len(ids) {
			doneLevels = append(doneLevels, i+1)
			continue
		}
		if open++; open > summaryList {
			continue
		}
		fmt.Fprintf(tw, "level %d\topen\t%s\n", i+1, countsLine(counts))
	}
	if open > summaryList {
		fmt.Fprintf(tw, "%s more\t\t\n", plural(open-summaryList, "open level"))
	}
	if len(doneLevels) > 0 {
		fmt.Fprintf(tw, "%s done\t\t\n", levelRange(doneLevels))
	}
	tw.Flush()
	var active, failed, blocked []string
	for i := range ix.Entries {
		switch en := &ix.Entries[i]; en.Status {
		case state.Claimed, state.Verified:
			active = append(active, en.ID)
		case state.Failed:
			failed = append(failed, en.ID)
		case state.Blocked:
			blocked = append(blocked, en.ID)
		}
	}
	var ready []string
	if cfg, err := e.config(); err == nil {
		// Without a readable configuration the summary leaves the list out
		// rather than fail.
		for _, en := range engine.ReadyEntries(ix, engine.PolicyOf(cfg), e.now()) {
			ready = append(ready, en.ID)
		}
	}
	// Tasks under way are listed whole: there are as many as workers.
	for _, l := range []struct {
		title string
		ids   []string
		max   int
	}{{"under way", active, len(active)}, {"failed", failed, summaryList}, {"blocked", blocked, summaryList}, {"ready", ready, summaryList}} {
		if err := sn.printList(e, l.title, l.ids, l.max); err != nil {
			return err
		}
	}
	return nil
}

func (sn *snapshot) printList(e *env, title string, ids []string, max int) error {
	if len(ids) == 0 {
		return nil
	}
	fmt.Fprintf(e.stdout, "\n%s (%d):\n", title, len(ids))
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	for i, id := range ids {
		if i == max {
			break
		}
		t, err := sn.tx.Task(id)
		if err != nil {
			return err
		}
		sn.printTask(e, tw, t)
	}
	tw.Flush()
	if len(ids) > max {
		fmt.Fprintf(e.stdout, "  … %d more\n", len(ids)-max)
	}
	return nil
}

// levelRange names levels compactly: "levels 1-4, 6", "level 2".
func levelRange(lv []int) string {
	var parts []string
	for i := 0; i < len(lv); {
		j := i
		for j+1 < len(lv) && lv[j+1] == lv[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(lv[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", lv[i], lv[j]))
		}
		i = j + 1
	}
	if len(lv) == 1 {
		return "level " + parts[0]
	}
	return "levels " + strings.Join(parts, ", ")
}

func roundDur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return d.Round(time.Second).String()
	default:
		return d.Round(time.Minute).String()
	}
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// write prints the document as writeJSON would, with the task list on the
// fast path.
// hasLog reports whether a worker's output for the task's last attempt is
// on this machine, for status to point to it.
func (e *env) hasLog(feature string, t *state.Task) bool {
	s, err := e.Store()
	if err != nil || t.Attempts < 1 {
		return false
	}
	_, err = os.Stat(filepath.Join(engine.RunDir(s, feature, t.ID()), fmt.Sprintf("attempt-%d.log", t.Attempts)))
	return err == nil
}

// spent is what the agents reported for the whole feature.
func (sn *snapshot) spent() state.Usage {
	var total state.Usage
	if sn.tasks == nil && sn.ix != nil {
		for i := range sn.ix.Entries {
			total.Add(sn.ix.Entries[i].Spent)
		}
		return total
	}
	for _, t := range sn.tasks {
		u := t.Spent()
		total.Add(&u)
	}
	return total
}

// usageLine is "$1.23, 45,600 tokens, 12 turns" for people.
func usageLine(u *state.Usage) string {
	var parts []string
	if u.CostUSD > 0 {
		parts = append(parts, fmt.Sprintf("$%.2f", u.CostUSD))
	}
	if n := u.Tokens(); n > 0 {
		parts = append(parts, fmt.Sprintf("%d tokens", n))
	}
	if u.Turns > 0 {
		parts = append(parts, plural(u.Turns, "turn"))
	}
	return strings.Join(parts, ", ")
}

func (out *statusJSON) write(w io.Writer) error {
	fields := []docField{
		{name: "feature", value: out.Feature},
		{name: "complete", value: out.Complete},
		{name: "progress", value: out.Progress},
		{name: "counts", value: out.Counts},
		{name: "tasks", tasks: out.Tasks},
		{name: "levels", value: out.Levels},
		{name: "workers", value: out.Workers},
		{name: "locks", value: out.Locks},
	}
	if out.Spent != nil {
		fields = append(fields, docField{name: "spent", value: out.Spent})
	}
	return writeDoc(w, fields)
}
