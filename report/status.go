package report

import (
	"io"
	"time"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/view"
)

// SummaryAbove is the size past which status summarises: a person reads a
// screenful, and 10,000 lines of pending tasks hide the few that matter.
// Features up to it print every task, as scripts written for them expect.
const SummaryAbove = 50

// Status is the document of `status --json`. WriteStatusJSON streams it:
// its Tasks are for tests that build one.
type Status struct {
	Feature  string         `json:"feature"`
	Complete bool           `json:"complete"`
	Progress Progress       `json:"progress"`
	Counts   map[string]int `json:"counts"`
	Tasks    []Task         `json:"tasks"`
	Levels   []Level        `json:"levels"`
	Workers  []Worker       `json:"workers"`
	Locks    []Lock         `json:"locks"`
	// Spent is what the agents reported in total, absent when none did.
	Spent *Usage `json:"spent,omitempty"`
}

// progressOf is done of total, in percent too.
func progressOf(done, total int) Progress {
	p := Progress{Done: done, Total: total}
	if total > 0 {
		p.Percent = done * 100 / total
	}
	return p
}

// levelsOf is the plan's levels with the states of their tasks.
func levelsOf(sn *view.Snapshot) []Level {
	out := []Level{}
	for i, ids := range sn.Levels {
		lv := Level{Level: i + 1, Tasks: ids, Counts: map[string]int{}, Done: true}
		for _, st := range state.Statuses {
			lv.Counts[string(st)] = 0
		}
		for _, id := range ids {
			st := sn.LevelStatus(id)
			lv.Counts[string(st)]++
			if st != state.Done {
				lv.Done = false
			}
		}
		out = append(out, lv)
	}
	return out
}

// WriteStatusJSON writes the status document of sn. Everything but the
// tasks comes from the index; the tasks are written one by one as they are
// read from the rendered cache, never all in memory, but when little of it
// holds (a new plan, another build): then they are read at once from the
// task cache.
func WriteStatusJSON(w io.Writer, sn *view.Snapshot) error {
	_, err := writeStatusJSON(w, sn)
	return err
}

// writeStatusJSON is WriteStatusJSON; misses counts the tasks read from
// the state rather than the rendered cache.
func writeStatusJSON(w io.Writer, sn *view.Snapshot) (misses int, err error) {
	counts, total, err := sn.Tally()
	if err != nil {
		return 0, err
	}
	locks, err := sn.ActiveLocks()
	if err != nil {
		return 0, err
	}
	spent, err := sn.Spent()
	if err != nil {
		return 0, err
	}
	done := counts[string(state.Done)]
	workers := []Worker{}
	for _, l := range sn.Leases {
		workers = append(workers, WorkerOf(l))
	}
	cached := false
	fields := []field{
		{name: "feature", value: sn.Feature},
		{name: "complete", value: done == total},
		{name: "progress", value: progressOf(done, total)},
		{name: "counts", value: counts},
		{name: "tasks", tasks: func(emit func([]byte) error) (err error) {
			misses, cached, err = statusTasks(sn, emit, false)
			return err
		}},
		{name: "levels", value: levelsOf(sn)},
		{name: "workers", value: workers},
		{name: "locks", value: LocksOf(locks)},
	}
	if u := usageOf(&spent); u != nil {
		fields = append(fields, field{name: "spent", value: u})
	}
	if err := writeDoc(w, fields); err != nil {
		return 0, err
	}
	if cached && misses > rewriteAfter {
		// Once the document is out: the tasks that missed are in memory
		// by now, the others in the old file.
		_, _, err = statusTasks(sn, func([]byte) error { return nil }, true)
	}
	return misses, err
}

// WarmStatusJSON renders every task of the feature into the cache status
// --json copies from, so that the first status --json after a plan copies
// a file (0.16 s at 100,000 tasks) instead of rendering every task (0.7 s).
// A plan calls it while it holds every task it wrote. Best effort:
// without the file, status --json renders the tasks itself.
func WarmStatusJSON(s *gitstore.Store, feature string, now time.Time) {
	tx, err := s.View(feature)
	if err != nil {
		return
	}
	if sn, err := view.Read(s, tx, now); err == nil {
		statusTasks(sn, func([]byte) error { return nil }, true)
	}
}

// readAllAfter is how many misses make reading every task at once cheaper.
const readAllAfter = 64

// statusTasks emits every task of sn in plan order, from the rendered
// cache where it holds the task's blob, else rendered from the state, and
// counts the latter. It writes the cache file when there was none of this
// build, or when rewrite; else cached tells that the file held the tasks
// that did not miss.
func statusTasks(sn *view.Snapshot, emit func([]byte) error, rewrite bool) (misses int, cached bool, err error) {
	ix, err := sn.Index()
	if err != nil {
		return 0, false, err
	}
	key, path := buildKey.Get(), cachePath(sn.Store(), sn.Feature)
	c := openCache(path, key)
	defer c.close()
	var cw *cacheWriter
	if c == nil || rewrite {
		cw = createCache(path, key)
	}
	var b []byte
	all := ix.All()
	for i := range all {
		en := &all[i]
		elem, ok := c.next(en.ID, en.Blob)
		if !ok {
			// A task read alone costs a hundred times its share of the
			// task cache: past a few misses (a new plan, another build, a
			// sync), every task is read from that at once.
			if misses++; misses == readAllAfter || c == nil {
				if _, err := sn.StateTasks(); err != nil {
					cw.abort()
					return 0, false, err
				}
			}
			t, err := sn.StateTask(en.ID)
			if err != nil {
				cw.abort()
				return 0, false, err
			}
			tj := TaskOf(t, false)
			b = appendTask(b[:0], &tj, taskPrefix)
			elem = b
		}
		cw.add(en.ID, en.Blob, elem)
		if err := emit(elem); err != nil {
			cw.abort()
			return 0, false, err
		}
	}
	cw.commit()
	return misses, c != nil && cw == nil, nil
}
