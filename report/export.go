package report

import (
	"io"

	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/view"
)

// Export is the document of `export`: a pure function of the stored state,
// so that two machines with the same refs print the same bytes.
type Export struct {
	Format  int        `json:"format"`
	Feature string     `json:"feature"`
	Levels  [][]string `json:"levels"`
	Tasks   []Task     `json:"tasks"`
	Locks   []Lock     `json:"locks"`
	Workers []Worker   `json:"workers"`
}

// WriteExport writes the export document of sn, tasks with their history.
func WriteExport(w io.Writer, sn *view.Snapshot) error {
	tasks, err := sn.StateTasks()
	if err != nil {
		return err
	}
	// Every stored lock, expired or not: what is active depends on the
	// clock, and export must not.
	locks, err := sn.StoredLocks()
	if err != nil {
		return err
	}
	workers := []Worker{}
	for _, l := range sn.Leases {
		workers = append(workers, WorkerOf(l))
	}
	return writeDoc(w, []field{
		{name: "format", value: state.Format},
		{name: "feature", value: sn.Feature},
		{name: "levels", value: sn.Plan().Levels},
		{name: "tasks", tasks: func(emit func([]byte) error) error {
			var b []byte
			for _, t := range tasks {
				tj := TaskOf(t, true)
				b = appendTask(b[:0], &tj, taskPrefix)
				if err := emit(b); err != nil {
					return err
				}
			}
			return nil
		}},
		{name: "locks", value: LocksOf(locks)},
		{name: "workers", value: workers},
	})
}
