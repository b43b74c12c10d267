// Package replay replays the commits of a feature's state history and
// judges every transition against the gates, with the facts git gives of
// the work each names. engine runs it on state that arrives from
// elsewhere (and refuses what it finds), fsck on the whole history; it
// imports nothing of engine.
package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitobj"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
)

// IllegalSince replays the commits of tip that stop lacks and describes
// each transition the gates would have refused. Work made on another
// machine and not fetched cannot be judged, and is left to fsck.
func IllegalSince(ctx context.Context, s *gitstore.Store, feature string, tip, stop plumbing.Hash) ([]string, error) {
	from := ""
	if !stop.IsZero() {
		from = stop.String()
	}
	problems, err := checkHistory(ctx, s, feature, tip.String(), from)
	if err != nil {
		return nil, err
	}
	var bad []string
	for _, p := range problems {
		if !p.Unchecked {
			bad = append(bad, p.String())
		}
	}
	return bad, nil
}

// checkHistory replays the state commits of a feature reachable from tip
// but not from stop ("" for the whole history; as `git rev-list tip
// ^stop`), and returns every transition the gates would have refused,
// oldest first. sync can run it on fetched state before merging it, with
// the local tip as stop.
func checkHistory(ctx context.Context, s *gitstore.Store, feature string, tip, stop string) ([]gates.Problem, error) {
	problems, _, err := History(ctx, s, feature, tip, stop)
	return problems, err
}

// History is checkHistory that also counts the state commits it
// replayed: what fsck reports.
func History(ctx context.Context, s *gitstore.Store, feature string, tip, stop string) (problems []gates.Problem, commits int, err error) {
	h := newHistoryChecker(ctx, s)
	problems, err = h.check(feature, tip, stop)
	return problems, h.commits, err
}

// historyChecker walks one history. It reads commits, trees and blobs
// in-process; the git binary runs once to list the commits, and
// once or twice per piece of work a done or merge names (its ancestry and
// the paths it touches).
type historyChecker struct {
	ctx context.Context
	s   *gitstore.Store

	work     map[workKey]gates.Work
	statuses map[plumbing.Hash]map[string]state.Status
	tasks    map[plumbing.Hash][]*state.Task

	// Filled by check: the number of commits replayed.
	commits int
}

type workKey struct {
	q    gates.WorkQuery
	task string
}

func newHistoryChecker(ctx context.Context, s *gitstore.Store) *historyChecker {
	return &historyChecker{ctx: ctx, s: s, work: map[workKey]gates.Work{},
		statuses: map[plumbing.Hash]map[string]state.Status{}, tasks: map[plumbing.Hash][]*state.Task{}}
}

func (h *historyChecker) check(feature, tip, stop string) ([]gates.Problem, error) {
	// Every commit of the history, not only first parents: after a sync,
	// the other machine's transitions are commits on a second parent, and
	// they are replayed like ours. Oldest first, each after its parents.
	lines, err := h.s.Between(h.ctx, tip, stop)
	if err != nil {
		return nil, fmt.Errorf("feature %s: %w", feature, err)
	}
	var out []gates.Problem
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		c, err := h.s.ReadCommit(plumbing.NewHash(f[0]))
		if err != nil {
			return nil, fmt.Errorf("feature %s: read %s: %w", feature, f[0], err)
		}
		ps := make([]*gitobj.Commit, 0, len(c.ParentHashes))
		for _, ph := range c.ParentHashes {
			p, err := h.s.ReadCommit(ph)
			if err != nil {
				return nil, fmt.Errorf("feature %s: read parent of %s: %w", feature, c.Hash, err)
			}
			ps = append(ps, p)
		}
		problems, err := h.checkCommit(c, ps)
		if err != nil {
			return nil, err
		}
		out = append(out, problems...)
		h.commits++
	}
	return out, nil
}

// checkCommit replays one state commit against its parent (none for the
// first commit); a merge commit is checked for taking each task from one
// of its parents.
func (h *historyChecker) checkCommit(c *gitobj.Commit, parents []*gitobj.Commit) ([]gates.Problem, error) {
	msg := gitstore.ParseMessage(c.Message)
	cr := &commitReplay{h: h, parents: parents, op: msg.Op,
		rc: gates.Commit{Hash: c.Hash.String(), Op: msg.Op, Task: msg.Task, Clock: msg.Clock, Root: len(parents) == 0, Merge: len(parents) > 1}}
	before, err := cr.readParents()
	if err != nil {
		return nil, err
	}
	after, err := h.s.ReadTree(c.TreeHash)
	if err != nil {
		return nil, err
	}
	if isTombstone(after) {
		cr.rc.Deleted = true
		return gates.Replay(cr.rc), nil
	}
	changes, err := h.s.DiffTrees(before, c.TreeHash)
	if err != nil {
		return nil, err
	}
	for _, ch := range changes {
		switch name := ch.Path; {
		case name == "clock":
			err = cr.clock(ch)
		case name == "feature.json":
			err = cr.feature(ch)
		case strings.HasPrefix(name, "tasks/"):
			err = cr.task(ch)
		}
		if err != nil {
			return nil, err
		}
	}
	return append(gates.Replay(cr.rc), cr.extra...), nil
}

// commitReplay gathers the facts of one state commit that gates.Replay
// judges, and the problems found reading them.
type commitReplay struct {
	h       *historyChecker
	parents []*gitobj.Commit
	op      state.Op
	rc      gates.Commit
	// parentHash is the first parent, zero when the commit starts afresh.
	parentHash plumbing.Hash
	extra      []gates.Problem
}

func (cr *commitReplay) bad(task, format string, args ...any) {
	cr.extra = append(cr.extra, gates.Problem{Commit: cr.rc.Hash, Task: task, Msg: fmt.Sprintf(format, args...)})
}

// readParents takes the parents' clocks and returns the tree the commit
// changes: its first parent's.
func (cr *commitReplay) readParents() (before plumbing.Hash, err error) {
	for i, p := range cr.parents {
		cr.rc.ParentClock = max(cr.rc.ParentClock, gitstore.ParseMessage(p.Message).Clock)
		if i == 0 {
			cr.parentHash, before = p.Hash, p.TreeHash
			t, err := cr.h.s.ReadTree(p.TreeHash)
			if err != nil {
				return before, err
			}
			if isTombstone(t) {
				// A plan after cleanup --state starts afresh on top of
				// the deletion, its clock from 1.
				before, cr.parentHash, cr.rc.Root = plumbing.ZeroHash, plumbing.ZeroHash, true
			}
		}
	}
	return before, nil
}

// otherSides reads a path in the parents after the first (merges).
func (cr *commitReplay) otherSides(name string) ([]plumbing.Hash, error) {
	var out []plumbing.Hash
	for _, p := range cr.parents[1:] {
		e, err := cr.h.s.EntryAt(p.TreeHash, name)
		switch {
		case errors.Is(err, gitobj.ErrNotFound):
			out = append(out, plumbing.ZeroHash)
		case err != nil:
			return nil, err
		default:
			out = append(out, e.Hash)
		}
	}
	return out, nil
}

func (cr *commitReplay) clock(ch gitstore.Change) error {
	if ch.To.IsZero() {
		cr.bad("", "the clock file was deleted")
		return nil
	}
	b, err := cr.h.blob(ch.To)
	if err != nil {
		return err
	}
	if cr.rc.StoredClock, err = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err != nil {
		cr.bad("", "the clock file holds %q", strings.TrimSpace(string(b)))
	}
	return nil
}

// feature notes a change of feature.json; a merge changes it only when it
// differs from every side.
func (cr *commitReplay) feature(ch gitstore.Change) error {
	cr.rc.FeatureChanged = true
	if !cr.rc.Merge {
		return nil
	}
	others, err := cr.otherSides(ch.Path)
	if err != nil {
		return err
	}
	for _, o := range others {
		cr.rc.FeatureChanged = cr.rc.FeatureChanged && o != ch.To
	}
	return nil
}

// task reads a task's change: a merge's step with every side, else a
// transition with the facts of the work it names.
func (cr *commitReplay) task(ch gitstore.Change) error {
	h := cr.h
	id := path.Base(ch.Path)
	before, ok, err := h.task(ch.From)
	if err != nil {
		return err
	} else if !ok {
		cr.bad(id, "the parent's stored state is not valid")
	}
	after, ok, err := h.task(ch.To)
	if err != nil {
		return err
	} else if !ok {
		cr.bad(id, "the stored state is not valid")
		return nil
	}
	if cr.rc.Merge {
		m := gates.MergeStep{ID: id, After: after, Parents: []*state.Task{before}}
		others, err := cr.otherSides(ch.Path)
		if err != nil {
			return err
		}
		for _, o := range others {
			t, _, err := h.task(o)
			if err != nil {
				return err
			}
			m.Parents = append(m.Parents, t)
		}
		cr.rc.Merged = append(cr.rc.Merged, m)
		return nil
	}
	step := gates.Step{ID: id, Before: before, After: after, Status: h.statusIn(cr.parentHash), Work: map[string]gates.Work{}}
	for _, q := range gates.WorkNeeded(cr.op, step.Before, step.After) {
		w, err := h.workFacts(q, step.After, cr.parentHash)
		if err != nil {
			return err
		}
		step.Work[q.Commit] = w
	}
	cr.rc.Steps = append(cr.rc.Steps, step)
	return nil
}

// isTombstone reports whether a state tree is a deleted feature's
// tombstone (gitstore's Tx.Delete: a tree holding only "deleted").
func isTombstone(t *gitobj.Tree) bool {
	for _, e := range t.Entries {
		if e.Name == "deleted" {
			return true
		}
	}
	return false
}

func (h *historyChecker) blob(hash plumbing.Hash) ([]byte, error) {
	return h.s.ReadBlob(hash)
}

// task decodes one side of a change: nil when the task is absent on that
// side, ok false when its blob is not a task.
func (h *historyChecker) task(blob plumbing.Hash) (*state.Task, bool, error) {
	if blob.IsZero() {
		return nil, true, nil
	}
	b, err := h.blob(blob)
	if err != nil {
		return nil, false, err
	}
	var t state.Task
	if err := json.Unmarshal(b, &t); err != nil || t.Spec == nil {
		return nil, false, nil
	}
	return &t, true, nil
}

// statusIn looks up task states in a state commit, lazily: a claim reads
// only its own dependencies.
func (h *historyChecker) statusIn(commit plumbing.Hash) func(id string) state.Status {
	return func(id string) state.Status {
		m := h.statuses[commit]
		if m == nil {
			m = map[string]state.Status{}
			h.statuses[commit] = m
		}
		if st, ok := m[id]; ok {
			return st
		}
		var t struct {
			Status state.Status `json:"status"`
		}
		if b, err := h.s.TaskAt(commit, id); err == nil && b != nil {
			_ = json.Unmarshal(b, &t)
		}
		m[id] = t.Status
		return t.Status
	}
}

// workFacts asks git what the work a done or merge names is, as the done
// gate did (workFacts and sharedWork in done.go): whether the commit
// exists and descends from the base, whether it is new work, and the paths
// it touches. parent is the state the transition was made from.
func (h *historyChecker) workFacts(q gates.WorkQuery, t *state.Task, parent plumbing.Hash) (gates.Work, error) {
	key := workKey{q, ""}
	if q.Mode == gates.Shared {
		key.task = t.ID() // what counts as its own work depends on the task
	}
	if w, ok := h.work[key]; ok {
		return w, nil
	}
	var w gates.Work
	exists := func(rev string) (bool, error) {
		if !plumbing.IsHash(rev) {
			return false, nil
		}
		typ, err := h.s.ObjectType(plumbing.NewHash(rev))
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return err == nil && typ == plumbing.CommitObject, err
	}
	var err error
	if w.Exists, err = exists(q.Commit); err != nil || !w.Exists {
		h.work[key] = w
		return w, err
	}
	if w.BaseExists, err = exists(q.Base); err != nil || !w.BaseExists {
		h.work[key] = w
		return w, err
	}
	switch {
	case q.Base == q.Commit:
		w.Descends = true
	default:
		// In-process, as done judged it (a task's work is a few commits on
		// its base): a replay asks this of every verified task, and a rush
		// over several machines replays at every catch-up.
		if w.Descends, err = h.s.IsAncestor(h.ctx, plumbing.NewHash(q.Base), plumbing.NewHash(q.Commit)); err != nil {
			return w, err
		}
	}
	if w.Descends && q.Base != q.Commit {
		if q.Mode == gates.Worktree {
			w.New = true
			// The same facts done went by: one way to list what work touched.
			if w.Touched, err = h.s.ChangedPaths(plumbing.NewHash(q.Base), plumbing.NewHash(q.Commit)); err != nil {
				return w, err
			}
		} else if q.Mode == gates.Shared {
			if w.Touched, w.New, err = h.sharedWork(q, t, parent); err != nil {
				return w, err
			}
		}
		// Landed: whether the merge commit descends from the work is all
		// a land's replay asks.
	}
	h.work[key] = w
	return w, nil
}

// sharedWork is done.go's sharedWork replayed: the commits between the
// base and the work, less those wholly owned by other tasks under way in
// the state the transition was made from.
func (h *historyChecker) sharedWork(q gates.WorkQuery, t *state.Task, parent plumbing.Hash) ([]string, bool, error) {
	return OwnWork(h.ctx, h.s, t, q.Base, q.Commit, func() ([]*state.Task, error) { return h.tasksIn(parent) })
}

// tasksIn reads every task of a state commit.
func (h *historyChecker) tasksIn(commit plumbing.Hash) ([]*state.Task, error) {
	if ts, ok := h.tasks[commit]; ok || commit.IsZero() {
		return ts, nil
	}
	c, err := h.s.ReadCommit(commit)
	if err != nil {
		return nil, err
	}
	var out []*state.Task
	tasks, err := h.s.EntryAt(c.TreeHash, "tasks")
	if err == nil && tasks.Mode == filemode.Dir {
		err = h.s.WalkFiles(tasks.Hash, func(_ string, e gitobj.TreeEntry) error {
			if e.Mode == filemode.Submodule {
				return nil // no object here to read
			}
			b, err := h.s.ReadBlob(e.Hash)
			if err != nil {
				return err
			}
			var t state.Task
			if json.Unmarshal(b, &t) == nil && t.Spec != nil {
				out = append(out, &t)
			}
			return nil
		})
	} else if errors.Is(err, gitobj.ErrNotFound) {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	h.tasks[commit] = out
	return out, nil
}
