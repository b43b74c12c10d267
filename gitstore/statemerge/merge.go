// Package statemerge is the three-way merge of two histories of one
// state's trees: a feature's (feature.json, tasks/, workers/) and the
// repository's locks. It reads and writes objects only — no refs, no
// commits.
//
// Merging two histories of one feature (state fetched from another
// machine) is deterministic: every machine that merges the same two tips
// computes the same tree, whichever side it calls its own, so after a sync
// round every machine exports the same document.
//
//   - A task, worker or lock changed on one side only is taken from that
//     side (a three-way merge against the merge base, entry by entry).
//   - A task changed on both sides is a real conflict (two machines claimed
//     it): the side whose first new event is earliest by Lamport clock wins,
//     ties broken by the event's bytes. The loser's events are not kept in
//     the task, but a "conflict" event records what was lost, and the
//     loser's commits stay in the merge commit's history, so `log` shows
//     them. The loser's lease and locks go: its next heartbeat or done is
//     refused with "claim lost".
//   - The merge commit adds no transition of its own besides those conflict
//     records, which are the same on every machine, so a merge of merges
//     changes nothing.
package statemerge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-zerg/git-zerg/gitobj"
	"github.com/git-zerg/git-zerg/gitstore/odb"
	"github.com/git-zerg/git-zerg/state"
)

// Tombstone is the root entry that marks a deleted feature. Deleting the
// ref instead would not last: the next fetch from a machine that still has
// it brings it back.
const Tombstone = "deleted"

// Objects is what the merge reads and writes: trees and JSON blobs.
type Objects interface {
	ReadTree(h plumbing.Hash) (*gitobj.Tree, error)
	ReadJSON(h plumbing.Hash, v any) error
	WriteTree(e odb.Entries) (plumbing.Hash, error)
	WriteJSON(v any) (plumbing.Hash, error)
}

// Conflict is a task both sides changed.
type Conflict struct {
	Task   string
	Winner string // the winning side's first new event, described
	Loser  string
}

// Feature merges the root trees of a feature's three states (base, a, b,
// in canonical order); clock is the merge commit's clock, given to the
// conflict events it records. It returns the merged root, without its
// clock entry, and the tasks both sides changed.
func Feature(db Objects, clock uint64, base, a, b odb.Entries) (odb.Entries, []Conflict, error) {
	m := &merger{db: db, clock: clock}
	root, err := m.mergeRoot(base, a, b)
	if err != nil {
		return nil, nil, err
	}
	return root, m.conflicts, nil
}

// Locks merges the repository's three lock trees (base, a, b, in
// canonical order; a zero hash is no tree) and returns the merged
// entries. A path both sides locked differently goes to the earlier lock
// (then the smaller bytes); keep, when not nil, drops the locks whose task
// lost its claim in the feature merges.
func Locks(db Objects, base, a, b gitobj.TreeEntry, keep func(state.Lock) bool) (odb.Entries, error) {
	m := &merger{db: db}
	te, err := m.mergeDir(base, a, b, func(name string, base, a, b gitobj.TreeEntry) (gitobj.TreeEntry, error) {
		if a.Hash.IsZero() {
			return b, nil // one side unlocked, the other renewed: the renewal stands
		}
		if b.Hash.IsZero() {
			return a, nil
		}
		var la, lb state.Lock
		if err := m.db.ReadJSON(a.Hash, &la); err != nil {
			return gitobj.TreeEntry{}, err
		}
		if err := m.db.ReadJSON(b.Hash, &lb); err != nil {
			return gitobj.TreeEntry{}, err
		}
		if la.Owner == lb.Owner {
			if lb.Expires.After(la.Expires) {
				return b, nil
			}
			return a, nil
		}
		// The lock of the claim the feature merge kept, so that the path
		// and the task go to the same holder.
		if keep != nil {
			if ka, kb := keep(la), keep(lb); ka != kb {
				if ka {
					return a, nil
				}
				return b, nil
			}
		}
		if la.Created.Before(lb.Created) || (la.Created.Equal(lb.Created) && a.Hash.String() < b.Hash.String()) {
			return a, nil
		}
		return b, nil
	})
	if err != nil {
		return nil, err
	}
	out := odb.Entries{}
	if te != nil {
		if out, err = m.treeEntries(*te); err != nil {
			return nil, err
		}
	}
	for name, e := range out {
		var l state.Lock
		if err := m.db.ReadJSON(e.Hash, &l); err != nil {
			return nil, err
		}
		if keep != nil && !keep(l) {
			delete(out, name)
		}
	}
	return out, nil
}

type merger struct {
	db        Objects
	clock     uint64
	conflicts []Conflict
	tasks     map[string]*state.Task // merged tasks that were decoded, for the lease check
}

// mergeRoot merges the root trees: feature.json, tasks/, workers/.
func (m *merger) mergeRoot(base, a, b odb.Entries) (odb.Entries, error) {
	// A deletion on either side wins: the feature stays deleted everywhere.
	_, da := a[Tombstone]
	_, db := b[Tombstone]
	switch {
	case da:
		return a, nil
	case db:
		return b, nil
	}
	out := odb.Entries{}
	if te, ok := pick3(base["feature.json"], a["feature.json"], b["feature.json"]); ok {
		out["feature.json"] = te
	} else {
		// Planned again on both sides: the later plan wins.
		te, err := m.laterPlan(a["feature.json"], b["feature.json"])
		if err != nil {
			return nil, err
		}
		out["feature.json"] = te
	}
	tasks, err := m.mergeDir(base["tasks"], a["tasks"], b["tasks"], m.mergeShard)
	if err != nil {
		return nil, err
	}
	if tasks != nil {
		out["tasks"] = *tasks
	}
	workers, err := m.mergeWorkers(base["workers"], a["workers"], b["workers"])
	if err != nil {
		return nil, err
	}
	if workers != nil {
		out["workers"] = *workers
	}
	return out, nil
}

// pick3 is the three-way rule for one entry: equal sides, or the side that
// changed. ok is false when both changed differently.
func pick3(base, a, b gitobj.TreeEntry) (gitobj.TreeEntry, bool) {
	switch {
	case a.Hash == b.Hash:
		return a, true
	case a.Hash == base.Hash:
		return b, true
	case b.Hash == base.Hash:
		return a, true
	}
	return gitobj.TreeEntry{}, false
}

func (m *merger) treeEntries(te gitobj.TreeEntry) (odb.Entries, error) {
	if te.Hash.IsZero() {
		return odb.Entries{}, nil
	}
	t, err := m.db.ReadTree(te.Hash)
	if err != nil {
		return nil, err
	}
	return odb.EntriesOf(t), nil
}

// mergeDir merges a directory entry by entry; conflicting entries go to
// resolve. A nil result means the directory is absent.
func (m *merger) mergeDir(base, a, b gitobj.TreeEntry, resolve func(name string, base, a, b gitobj.TreeEntry) (gitobj.TreeEntry, error)) (*gitobj.TreeEntry, error) {
	if te, ok := pick3(base, a, b); ok {
		if te.Hash.IsZero() {
			return nil, nil
		}
		return &te, nil
	}
	eb, err := m.treeEntries(base)
	if err != nil {
		return nil, err
	}
	ea, err := m.treeEntries(a)
	if err != nil {
		return nil, err
	}
	ebb, err := m.treeEntries(b)
	if err != nil {
		return nil, err
	}
	out := odb.Entries{}
	for _, name := range unionNames(eb, ea, ebb) {
		te, ok := pick3(eb[name], ea[name], ebb[name])
		if !ok {
			if te, err = resolve(name, eb[name], ea[name], ebb[name]); err != nil {
				return nil, err
			}
		}
		if !te.Hash.IsZero() {
			te.Name = name
			out[name] = te
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	h, err := m.db.WriteTree(out)
	if err != nil {
		return nil, err
	}
	return &gitobj.TreeEntry{Mode: filemode.Dir, Hash: h}, nil
}

func unionNames(es ...odb.Entries) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range es {
		for n := range e {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}

func (m *merger) mergeShard(name string, base, a, b gitobj.TreeEntry) (gitobj.TreeEntry, error) {
	te, err := m.mergeDir(base, a, b, m.mergeTask)
	if err != nil || te == nil {
		return gitobj.TreeEntry{}, err
	}
	te.Name = name
	return *te, nil
}

func (m *merger) readTask(te gitobj.TreeEntry) (*state.Task, error) {
	if te.Hash.IsZero() {
		return nil, nil
	}
	var t state.Task
	if err := m.db.ReadJSON(te.Hash, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// mergeTask resolves a task both sides changed.
func (m *merger) mergeTask(name string, base, a, b gitobj.TreeEntry) (gitobj.TreeEntry, error) {
	tb, err := m.readTask(base)
	if err != nil {
		return gitobj.TreeEntry{}, err
	}
	ta, err := m.readTask(a)
	if err != nil {
		return gitobj.TreeEntry{}, err
	}
	tbb, err := m.readTask(b)
	if err != nil {
		return gitobj.TreeEntry{}, err
	}
	if ta == nil || tbb == nil {
		// Deleted on one side only happens with a re-plan; keep the task.
		if ta == nil {
			return b, nil
		}
		return a, nil
	}
	n := 0
	if tb != nil {
		n = len(tb.History)
	}
	newA, newB := newEvents(ta, n), newEvents(tbb, n)
	winner, loser, lostEvents := ta, tbb, newB
	if !eventLess(newA, newB) {
		winner, loser, lostEvents = tbb, ta, newA
	}
	merged := winner.Clone()
	// The losing side may itself be a merge that recorded a loser: those
	// conflict events go along, or a third concurrent claim would vanish.
	var own []state.Event
	for _, ev := range lostEvents {
		if ev.Op != state.OpConflict {
			own = append(own, ev)
			continue
		}
		ev.Clock, ev.From, ev.To = m.clock, merged.Status, merged.Status
		merged.History = append(merged.History, ev)
	}
	if len(own) > 0 {
		first := own[0]
		merged.History = append(merged.History, state.Event{
			Clock: m.clock, At: first.At, Op: state.OpConflict, From: merged.Status, To: merged.Status,
			Worker: first.Worker,
			Reason: fmt.Sprintf("lost to a concurrent %s: %s", describe(newEvents(winner, n)), describe(own)),
		})
		m.conflicts = append(m.conflicts, Conflict{Task: name, Winner: describe(newEvents(winner, n)), Loser: describe(own)})
	}
	_ = loser
	h, err := m.db.WriteJSON(merged)
	if err != nil {
		return gitobj.TreeEntry{}, err
	}
	if m.tasks == nil {
		m.tasks = map[string]*state.Task{}
	}
	m.tasks[name] = merged
	return gitobj.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h}, nil
}

func newEvents(t *state.Task, n int) []state.Event {
	if n > len(t.History) {
		return nil
	}
	return t.History[n:]
}

// eventLess orders two sides' new events: lowest Lamport clock of the
// first new event first, then the event's bytes — a total order every
// machine agrees on.
func eventLess(a, b []state.Event) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) >= len(b) // a side with no events of its own loses to one with some
	}
	if a[0].Clock != b[0].Clock {
		return a[0].Clock < b[0].Clock
	}
	ja, _ := json.Marshal(a[0])
	jb, _ := json.Marshal(b[0])
	return bytes.Compare(ja, jb) <= 0
}

func describe(evs []state.Event) string {
	if len(evs) == 0 {
		return "nothing"
	}
	e := evs[0]
	s := string(e.Op)
	if e.Worker != "" {
		s += " by " + e.Worker
	}
	return fmt.Sprintf("%s (clock %d)", s, e.Clock)
}

func (m *merger) laterPlan(a, b gitobj.TreeEntry) (gitobj.TreeEntry, error) {
	var fa, fb state.Feature
	if err := m.db.ReadJSON(a.Hash, &fa); err != nil {
		return gitobj.TreeEntry{}, err
	}
	if err := m.db.ReadJSON(b.Hash, &fb); err != nil {
		return gitobj.TreeEntry{}, err
	}
	switch {
	case fa.PlannedAt.After(fb.PlannedAt):
		return a, nil
	case fb.PlannedAt.After(fa.PlannedAt):
		return b, nil
	case a.Hash.String() < b.Hash.String():
		return a, nil
	}
	return b, nil
}

// mergeWorkers merges leases, then drops every lease whose task the merge
// gave to someone else (the loser of a double claim).
func (m *merger) mergeWorkers(base, a, b gitobj.TreeEntry) (*gitobj.TreeEntry, error) {
	te, err := m.mergeDir(base, a, b, func(name string, base, a, b gitobj.TreeEntry) (gitobj.TreeEntry, error) {
		// Both sides renewed or changed one worker's lease: the longer one.
		var wa, wb state.Worker
		if a.Hash.IsZero() || b.Hash.IsZero() {
			// One side ended the lease (its task settled or was given
			// back), the other renewed it: the claim is over. Only a lease
			// for a new claim (another task, or claimed again since) stays.
			kept := a
			if a.Hash.IsZero() {
				kept = b
			}
			if base.Hash.IsZero() {
				return kept, nil
			}
			var wbase, wk state.Worker
			if err := m.db.ReadJSON(base.Hash, &wbase); err != nil {
				return gitobj.TreeEntry{}, err
			}
			if err := m.db.ReadJSON(kept.Hash, &wk); err != nil {
				return gitobj.TreeEntry{}, err
			}
			if wk.Task == wbase.Task && wk.Since.Equal(wbase.Since) {
				return gitobj.TreeEntry{}, nil
			}
			return kept, nil
		}
		if err := m.db.ReadJSON(a.Hash, &wa); err != nil {
			return gitobj.TreeEntry{}, err
		}
		if err := m.db.ReadJSON(b.Hash, &wb); err != nil {
			return gitobj.TreeEntry{}, err
		}
		if wa.Expires.After(wb.Expires) || (wa.Expires.Equal(wb.Expires) && a.Hash.String() < b.Hash.String()) {
			return a, nil
		}
		return b, nil
	})
	if err != nil || te == nil || len(m.tasks) == 0 {
		return te, err
	}
	ws, err := m.treeEntries(*te)
	if err != nil {
		return nil, err
	}
	changed := false
	for name, e := range ws {
		var w state.Worker
		if err := m.db.ReadJSON(e.Hash, &w); err != nil {
			return nil, err
		}
		if t, ok := m.tasks[w.Task]; ok && (t.Status != state.Claimed || t.Worker != w.Name) {
			delete(ws, name)
			changed = true
		}
	}
	if !changed {
		return te, nil
	}
	if len(ws) == 0 {
		return nil, nil
	}
	h, err := m.db.WriteTree(ws)
	if err != nil {
		return nil, err
	}
	return &gitobj.TreeEntry{Name: "workers", Mode: filemode.Dir, Hash: h}, nil
}
