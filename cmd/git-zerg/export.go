package main

import (
	"io"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/state"
)

func exportCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "the feature's state as one tasks.json document",
		Description: "Tasks with their state history, locks and DAG levels. The output is a pure\n" +
			"function of the stored state: two machines with the same refs print the same bytes.",
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			return runExport(e)
		},
	}
}

type exportJSON struct {
	Format  int          `json:"format"`
	Feature string       `json:"feature"`
	Levels  [][]string   `json:"levels"`
	Tasks   []taskJSON   `json:"tasks"`
	Locks   []lockJSON   `json:"locks"`
	Workers []workerJSON `json:"workers"`
}

func runExport(e *env) error {
	_, tx, feature, err := e.view()
	if err != nil {
		return err
	}
	meta, err := tx.Meta()
	if err != nil {
		return err
	}
	tasks, err := tx.Tasks()
	if err != nil {
		return err
	}
	// Every stored lock, expired or not: what is active depends on the
	// clock, and export must not.
	locks, err := tx.Locks()
	if err != nil {
		return err
	}
	ws, err := tx.Workers()
	if err != nil {
		return err
	}
	out := exportJSON{Format: state.Format, Feature: feature, Levels: meta.Levels, Tasks: []taskJSON{}, Locks: locksOut(locks), Workers: []workerJSON{}}
	for _, t := range tasks {
		out.Tasks = append(out.Tasks, taskOut(t, true))
	}
	for _, name := range sortedKeys(ws) {
		w := ws[name]
		out.Workers = append(out.Workers, workerJSON{w.Name, w.Owner, w.Task, w.Since.UTC(), w.Expires.UTC(), w.Host, w.PID})
	}
	return out.write(e.stdout)
}

func (out *exportJSON) write(w io.Writer) error {
	return writeDoc(w, []docField{
		{name: "format", value: out.Format},
		{name: "feature", value: out.Feature},
		{name: "levels", value: out.Levels},
		{name: "tasks", tasks: out.Tasks},
		{name: "locks", value: out.Locks},
		{name: "workers", value: out.Workers},
	})
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sortStrings(keys)
	return keys
}
