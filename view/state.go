package view

import (
	"errors"
	"os"
	"sort"
	"time"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/engine/rushmarker"
	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
)

// Read takes a snapshot of the feature tx reads, all but its tasks: status
// of a large feature reads the index and the few tasks it lists, and
// status --json streams the tasks one by one. Taken is now.
func Read(s *gitstore.Store, tx *gitstore.Tx, now time.Time) (*Snapshot, error) {
	meta, err := tx.Meta()
	if err != nil {
		return nil, err
	}
	ws, err := tx.Workers()
	if err != nil {
		return nil, err
	}
	sn := &Snapshot{Feature: tx.Feature(), Taken: now, Levels: meta.Levels, Counts: map[string]int{}, meta: meta, s: s, tx: tx}
	if sn.Levels == nil {
		sn.Levels = [][]string{}
	}
	for _, w := range ws {
		sn.Leases = append(sn.Leases, w)
	}
	sort.Slice(sn.Leases, func(i, j int) bool { return sn.Leases[i].Name < sn.Leases[j].Name })
	sn.Workers = []Worker{}
	for _, w := range sn.Leases {
		sn.Workers = append(sn.Workers, Worker{Name: w.Name, Task: w.Task, Host: w.Host, Since: w.Since, Expires: w.Expires})
	}
	return sn, nil
}

// errReleased: a snapshot Load made keeps only what the views show.
var errReleased = errors.New("view: the snapshot keeps only what the views show")

func (sn *Snapshot) release() { sn.tx, sn.ix, sn.full, sn.byFull = nil, nil, nil, nil }

// Plan is the feature's plan as stored.
func (sn *Snapshot) Plan() *state.Feature { return sn.meta }

// Planned is the number of tasks of the plan, known without reading any.
func (sn *Snapshot) Planned() int {
	n := 0
	for _, ids := range sn.Levels {
		n += len(ids)
	}
	return n
}

// Index is the task index of the snapshot's state, read once.
func (sn *Snapshot) Index() (*gitstore.Index, error) {
	if sn.tx == nil {
		return nil, errReleased
	}
	if sn.ix == nil {
		ix, err := sn.tx.Index()
		if err != nil {
			return nil, err
		}
		sn.ix = ix
	}
	return sn.ix, nil
}

// StateTasks is every task as stored, in plan order, read once.
func (sn *Snapshot) StateTasks() ([]*state.Task, error) {
	if sn.tx == nil {
		return nil, errReleased
	}
	if sn.full == nil {
		tasks, err := sn.tx.Tasks()
		if err != nil {
			return nil, err
		}
		if tasks == nil {
			tasks = []*state.Task{}
		}
		sn.full = tasks
	}
	return sn.full, nil
}

// StateTask is one task as stored.
func (sn *Snapshot) StateTask(id string) (*state.Task, error) {
	if sn.tx == nil {
		return nil, errReleased
	}
	return sn.tx.Task(id)
}

// ActiveLocks are the locks that hold as of Taken.
func (sn *Snapshot) ActiveLocks() ([]state.Lock, error) {
	all, err := sn.StoredLocks()
	if err != nil {
		return nil, err
	}
	var out []state.Lock
	for _, l := range all {
		if l.Active(sn.Taken) {
			out = append(out, l)
		}
	}
	return out, nil
}

// StoredLocks are every stored lock, expired or not.
func (sn *Snapshot) StoredLocks() ([]state.Lock, error) {
	if sn.tx == nil {
		return nil, errReleased
	}
	return sn.tx.Locks()
}

// Store is the repository the snapshot was read from.
func (sn *Snapshot) Store() *gitstore.Store { return sn.s }

// Tally is how many tasks are in each state, every state named, and the
// total: from the index, without reading a task.
func (sn *Snapshot) Tally() (counts map[string]int, total int, err error) {
	if sn.full != nil {
		return words.Counts(sn.full), len(sn.full), nil
	}
	ix, err := sn.Index()
	if err != nil {
		return nil, 0, err
	}
	return ix.Counts(), ix.Len(), nil
}

// Spent is what the agents reported for the whole feature.
func (sn *Snapshot) Spent() (state.Usage, error) {
	var total state.Usage
	if sn.full != nil {
		for _, t := range sn.full {
			u := t.Spent()
			total.Add(&u)
		}
		return total, nil
	}
	ix, err := sn.Index()
	if err != nil {
		return total, err
	}
	all := ix.All()
	for i := range all {
		total.Add(all[i].Spent)
	}
	return total, nil
}

// LevelStatus is the state of each task of one level: from the tasks when
// they were read, else from the index.
func (sn *Snapshot) LevelStatus(id string) state.Status {
	if sn.full != nil {
		if sn.byFull == nil {
			sn.byFull = make(map[string]*state.Task, len(sn.full))
			for _, t := range sn.full {
				sn.byFull[t.ID()] = t
			}
		}
		if t := sn.byFull[id]; t != nil {
			return t.Status
		}
		return ""
	}
	if sn.ix == nil {
		if _, err := sn.Index(); err != nil {
			return ""
		}
	}
	return sn.ix.Status(id)
}

// HolderDied reports a lease held by a rush of this clone that is gone:
// its lease would hold for hours, and `rush --resume` takes it back now.
func (sn *Snapshot) HolderDied(w *state.Worker) bool {
	self := sn.Host()
	return w.PID > 0 && self.Holds(w) && !rushmarker.ClaimHolderAlive(self, w)
}

// Host is the host identity of the clone the snapshot was taken in.
func (sn *Snapshot) Host() gitstore.HostIdentity {
	if sn.s == nil {
		return gitstore.HostIdentity{}
	}
	return sn.s.Host()
}

// HasLog reports whether a worker's output for the task's last attempt is
// on this machine.
func (sn *Snapshot) HasLog(t *state.Task) bool {
	path, ok := logFile(sn.s, sn.Feature, t.ID(), t.Attempts)
	if !ok {
		return false
	}
	_, err := os.Stat(path)
	return err == nil
}

// SummaryList bounds each list of a summary (failed, blocked, ready).
const SummaryList = 20

// Summary is what status shows of a large feature: what a person acts on
// (tasks under way, failed, blocked, the next ready ones) by id, and the
// rest as counts, from the index.
type Summary struct {
	Total int
	// Open are the levels not done, with their counts, at most
	// SummaryList of them; MoreOpen counts the others.
	Open     []Level
	MoreOpen int
	// DoneLevels are the 1-based levels whose every task is done.
	DoneLevels                     []int
	Active, Failed, Blocked, Ready []string
}

// Level is one level of a summary.
type Level struct {
	Level  int
	Counts map[string]int
}

// Summarise reads the summary from the index; ready lists the tasks a
// claim may take under policy p, none when p is nil.
func (sn *Snapshot) Summarise(p *gates.Policy) (*Summary, error) {
	ix, err := sn.Index()
	if err != nil {
		return nil, err
	}
	su := &Summary{Total: ix.Len()}
	open := 0
	for i, ids := range sn.Levels {
		counts := map[string]int{}
		for _, id := range ids {
			counts[string(ix.Status(id))]++
		}
		if counts[string(state.Done)] == len(ids) {
			su.DoneLevels = append(su.DoneLevels, i+1)
			continue
		}
		if open++; open > SummaryList {
			su.MoreOpen++
			continue
		}
		su.Open = append(su.Open, Level{i + 1, counts})
	}
	all := ix.All()
	for i := range all {
		switch en := &all[i]; {
		case en.Status.Holding():
			su.Active = append(su.Active, en.ID)
		case en.Status == state.Failed:
			su.Failed = append(su.Failed, en.ID)
		case en.Status == state.Blocked:
			su.Blocked = append(su.Blocked, en.ID)
		}
	}
	if p != nil {
		for _, en := range engine.ReadyEntries(ix, *p, sn.Taken) {
			su.Ready = append(su.Ready, en.ID)
		}
	}
	return su, nil
}
