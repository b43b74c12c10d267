package rush

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/hooks"
	"github.com/git-zerg/git-zerg/rush/remote"
	"github.com/git-zerg/git-zerg/rush/schedule"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
	"github.com/git-zerg/git-zerg/worktree"
)

// The flow schedule (rush.schedule = "flow"): a task starts as soon as the
// tasks it depends on are merged into a staging that passed the gates, not
// when its whole level is. A level waits for its slowest task; with agents
// whose durations vary by minutes, the barriers cost more than anything
// else a rush does.
//
// Verified work goes to a merge queue: one merge at a time, of everything
// verified when it starts, then the gates on the result. What verifies
// while a merge or its gates run goes into the next one, so a slow gate
// batches the merges rather than delaying each. Workers start only from
// the newest staging that passed (a staging that did not is never built
// on), and only tasks whose dependencies that staging holds.

// gated is the newest staging that passed the gates and the tasks whose
// work it holds.
type gated struct {
	tip  string
	held map[string]bool
}

// batch is what one run of the merge queue ended with.
type batch struct {
	tasks []string // what it merged
	gated gated    // staging after it, when stop and err are nil
	stop  error    // a conflict, failed gates: nothing more merges or starts
	err   error
}

// runFlow runs the whole feature by its dependencies. A non-nil stop ends
// the rush with that error (exit 1); err is a failure of the tool.
func (r *rush) runFlow() (stop error, err error) {
	tasks, tip, run, stop, err := r.flowBegin()
	if !run {
		return stop, err
	}
	// The merge queue's own store and manager: it runs beside the
	// scheduler, and a Store is not for concurrent use.
	ms, err := r.s.Repo().Open(r.g.Context(), r.s.Top)
	if err != nil {
		return nil, err
	}
	defer ms.Drop()
	ms.Persistent = true
	if r.link.Remote != "" {
		r.link.Arbitrate(ms)
	}
	f := r.newFlow(r.with(ms), tasks, tip)
	defer func() {
		if f.merging {
			<-f.merged // before its store goes
		}
	}()
	for {
		tasks, err := r.flowLookAround(f)
		if err != nil {
			return nil, err
		}
		r.flowStartMerge(f, tasks)
		if f.firstErr == nil && f.halted == nil && f.aborted == nil && len(f.workers.free) > 0 && !r.stopping() {
			f.firstErr = r.startReady(f.ctx, f.workers, f.results, tasks, f.base, f.paths)
		}
		if f.workers.idle() && !f.merging {
			next, stop, err := r.flowIdle(f, tasks)
			if next == flowEnds {
				return stop, err
			}
			if next == flowOver {
				break
			}
			continue
		}
		r.flowWait(f)
	}
	return r.flowFinish(f)
}

// flow is the flow scheduler's state from one turn of its loop to the
// next: the gated base workers start from, what the merge queue took,
// the workers and the merge running, and why nothing more starts.
type flow struct {
	ctx context.Context
	mg  *engine.Engine    // the merge queue's engine, on its own store
	mm  *worktree.Manager // and its manager
	// base is the newest staging that passed; the merge queue reads it
	// through a pointer when a batch starts, so it stays in place here.
	base     gated
	paths    map[string]float64
	shown    map[int]bool // levels whose table was printed
	mergedIn map[int]bool // levels with work merged by this rush
	levelOf  map[string]int
	// What the queue merged, by task: under forge.review merged work stays
	// verified until its pull request merges, and is not merged again.
	queued map[string]string
	wanted func([]*state.Task, gated) ([]worktree.Pin, bool)
	merge  func(*engine.Engine, *worktree.Manager, []worktree.Pin) batch
	idle   func([]*state.Task, gated) bool

	workers *pool
	results chan slotResult
	merged  chan batch
	merging bool

	firstErr, halted, aborted error
}

// flowBegin is what comes before the loop: the shared rush joined, the
// feature's state read, and staging made sure of. run is false when the
// rush ends before its loop, with stop and err: nothing left to run, a
// stop asked for, gates that fail on what earlier rushes merged, or a
// failure of the tool.
func (r *rush) flowBegin() (tasks []*state.Task, tip string, run bool, stop, err error) {
	ctx := r.g.Context()
	if r.link.Remote != "" {
		if err := r.flowJoin(); err != nil {
			return nil, "", false, nil, err
		}
	}
	tasks, err = r.snapshot(r.s)
	if err != nil {
		return nil, "", false, nil, err
	}
	if schedule.LevelDone(tasks, 0) {
		return nil, "", false, nil, nil
	}
	if err := r.stopErr(); err != nil {
		return nil, "", false, err, nil
	}
	if anyDone(tasks) {
		// Merged in an earlier rush, whose gates may have failed: never
		// build on a staging that did not pass.
		if stop, err := runQualityGates(r.g, r.mgr, true); stop != nil || err != nil {
			return nil, "", false, stop, err
		}
	}
	tip, err = r.mgr.EnsureStaging(ctx, "")
	if err != nil {
		return nil, "", false, nil, err
	}
	return tasks, tip, true, nil, nil
}

// newFlow sets the loop's state up from the feature's tasks and the
// staging tip, the merge queue's rules on mg, and says the rush starts.
func (r *rush) newFlow(mg *engine.Engine, tasks []*state.Task, tip string) *flow {
	f := &flow{
		ctx:      r.g.Context(),
		mg:       mg,
		mm:       mg.Manager(),
		base:     gated{tip: tip, held: doneSet(tasks)},
		paths:    schedule.Remaining(tasks),
		shown:    map[int]bool{},
		mergedIn: map[int]bool{},
		levelOf:  make(map[string]int, len(tasks)),
		queued:   map[string]string{},
	}
	for l := range levelsOf(tasks) {
		f.shown[l] = schedule.LevelDone(tasks, l)
	}
	for _, t := range tasks {
		f.levelOf[t.ID()] = t.Level
	}
	toMerge := func(tasks []*state.Task) []worktree.Pin {
		var pins []worktree.Pin
		for _, p := range verifiedPins(tasks) {
			if f.queued[p.Task] != p.Commit {
				pins = append(pins, p)
			}
		}
		return pins
	}
	f.wanted, f.merge, f.idle = r.flowQueue(&f.base, f.paths, toMerge)
	if r.link.Remote != "" {
		r.setEligible(f.base, tasks)
	}
	r.g.Emit(engine.Event{Type: engine.EvLevelStart, Text: fmt.Sprintf("%s in %s, by their dependencies",
		words.Plural(len(tasks), "task"), words.Plural(len(f.shown), "level"))})

	f.workers = newPool(r.n)
	f.results = make(chan slotResult, r.n)
	f.merged = make(chan batch, 1)
	return f
}

// flowLookAround is the start of each turn: the remote looked at (when
// a worker is free or no merge runs), the state read and said, the
// levels just settled shown, the backoffs that begin noted, and the rush
// aborted when a whole level is blocked.
func (r *rush) flowLookAround(f *flow) ([]*state.Task, error) {
	if r.link.Remote != "" && (len(f.workers.free) > 0 || !f.merging) {
		if err := r.flowLook(len(f.workers.free) > 0); err != nil {
			return nil, err
		}
	}
	tasks, err := r.snapshot(r.s)
	if err != nil {
		return nil, err
	}
	r.g.Emit(engine.Event{Type: engine.EvProgress, Tasks: tasks})
	r.showSettled(tasks, f.shown, f.mergedIn, f.base)
	// A backoff is said as it begins, whatever else runs meanwhile.
	_, _, backoffs := schedule.LevelWait(tasks, 0, r.policy, r.g.Time(), remote.Poll)
	r.noteBackoffs(backoffs)
	if l := schedule.WholeLevelBlocked(tasks); l > 0 && f.aborted == nil {
		f.aborted = engine.FailedError(fmt.Sprintf("rush aborted: every task of level %d is blocked", l), "")
	}
	return tasks, nil
}

// flowStartMerge starts a batch of the merge queue in the background
// when none runs, nothing stopped the rush, and the queue wants one.
func (r *rush) flowStartMerge(f *flow, tasks []*state.Task) {
	if f.merging || f.halted != nil || f.firstErr != nil || r.stopped.Load() {
		return
	}
	pins, due := f.wanted(tasks, f.base)
	if !due {
		return
	}
	for _, p := range pins {
		f.queued[p.Task] = p.Commit
	}
	f.merging = true
	mg, mm, merge, merged := f.mg, f.mm, f.merge, f.merged
	go func() { merged <- merge(mg, mm, pins) }()
}

// flowNext is what the loop does once nothing runs.
type flowNext int

const (
	flowEnds  flowNext = iota // the rush ends now, with stop and err
	flowAgain                 // the loop turns again, without waiting
	flowOver                  // the loop is over: the rush's end
)

// flowIdle decides, with no worker running and no merge, whether the rush
// ends on what stopped it, turns again (work verified while the last
// merge ran, or the queue's reason to wait) or is over.
func (r *rush) flowIdle(f *flow, tasks []*state.Task) (next flowNext, stop, err error) {
	switch {
	case f.firstErr != nil:
		return flowEnds, nil, f.firstErr
	case r.stopped.Load():
		return flowEnds, r.stopErr(), nil
	case f.halted != nil:
		return flowEnds, f.halted, nil
	case f.aborted != nil:
		return flowEnds, f.aborted, nil
	}
	if _, due := f.wanted(tasks, f.base); due {
		return flowAgain, nil, nil // verified while the last merge ran: merge it
	}
	if f.idle(tasks, f.base) {
		return flowAgain, nil, nil
	}
	return flowOver, nil, nil
}

// flowWait waits for a worker's end, the merge's, a tick or the tests'
// idle hook, and takes in what ended: a batch that went in moves the
// gated base on.
func (r *rush) flowWait(f *flow) {
	select {
	case res := <-f.results:
		if err := f.workers.put(res); err != nil && f.firstErr == nil {
			f.firstErr = err
		}
	case b := <-f.merged:
		f.merging = false
		switch {
		case b.err != nil:
			if f.firstErr == nil {
				f.firstErr = b.err
			}
		case b.stop != nil:
			f.halted = b.stop
		default:
			f.base = b.gated
			for _, id := range b.tasks {
				f.mergedIn[f.levelOf[id]] = true
			}
		}
	case <-time.After(200 * time.Millisecond):
	case <-r.idleHook(len(f.workers.running), f.merging):
	}
}

// flowFinish is the rush's end once its loop is over: the levels settled
// last shown, and each level that never ran said so with its reason.
func (r *rush) flowFinish(f *flow) (stop error, err error) {
	tasks, err := r.snapshot(r.s)
	if err != nil {
		return nil, err
	}
	r.showSettled(tasks, f.shown, f.mergedIn, f.base)
	for l := range levelsOf(tasks) {
		if why := schedule.Hopeless(tasks, l); why != "" {
			r.g.Note("level %d: skipped: %s", l, why)
		}
	}
	return r.stopErr(), nil
}

// startReady starts the ready tasks on the free workers, from the gated
// staging base: the longest path first. The error is the tool's, making a
// worktree.
func (r *rush) startReady(ctx context.Context, workers *pool, results chan<- slotResult, tasks []*state.Task, base gated, paths map[string]float64) error {
	for _, t := range schedule.Ready(tasks, r.policy, r.g.Time(), base.held, paths) {
		if len(workers.free) == 0 {
			return nil
		}
		if workers.runs(t.ID()) {
			continue
		}
		slot := workers.take(t.ID())
		if !r.hasSlot(slot) {
			// git makes worktrees one at a time: made here, in the
			// order of the tasks, the longest path's worker starts first
			// rather than whichever wins the race.
			if _, err := r.slot(ctx, slot, base.tip); err != nil {
				return workers.put(slotResult{slot: slot, task: t.ID(), err: err})
			}
		}
		go func(id string, slot int, tip string, level int) {
			results <- slotResult{slot: slot, task: id, err: r.runTask(id, slot, tip, level, nil)}
		}(t.ID(), slot, base.tip, t.Level)
	}
	return nil
}

// flowQueue is the merge queue's rules: what it takes now of the verified
// work (toMerge: what it has not merged yet) and whether it has anything
// to do, how it merges a batch, and whether the scheduler, with nothing
// running, goes on. On a shared rush they are flow_remote.go's; base is
// the scheduler's gated staging, read when a batch starts (it moves only
// once a batch is in).
func (r *rush) flowQueue(base *gated, paths map[string]float64, toMerge func([]*state.Task) []worktree.Pin) (
	wanted func([]*state.Task, gated) ([]worktree.Pin, bool),
	merge func(*engine.Engine, *worktree.Manager, []worktree.Pin) batch,
	idle func([]*state.Task, gated) bool) {
	if r.link.Remote == "" {
		wanted = func(tasks []*state.Task, _ gated) ([]worktree.Pin, bool) {
			pins := toMerge(tasks)
			return pins, len(pins) > 0
		}
		idle = func(tasks []*state.Task, _ gated) bool { return r.waitIdle(tasks, 0) }
		return wanted, r.mergeBatch, idle
	}
	q := schedule.NewMergeQueue(r.s.Host().Name, r.ttl)
	wanted = func(tasks []*state.Task, base gated) ([]worktree.Pin, bool) {
		ts, work := q.Due(tasks, r.leases(), pinIDs(toMerge(tasks)), base.held, r.link.Looked())
		return pinsOf(ts), work
	}
	merge = func(g *engine.Engine, mgr *worktree.Manager, pins []worktree.Pin) batch {
		return r.remoteBatch(g, mgr, pins, *base)
	}
	idle = func(tasks []*state.Task, base gated) bool { return r.remoteIdle(tasks, base, toMerge(tasks)) }
	r.flowPaths = paths
	return wanted, merge, idle
}

// mergeBatch merges pins into staging and runs the gates on the result,
// on the merge queue's engine and manager.
func (r *rush) mergeBatch(g *engine.Engine, mgr *worktree.Manager, pins []worktree.Pin) batch {
	var b batch
	for _, p := range pins {
		b.tasks = append(b.tasks, p.Task)
	}
	if b.stop, b.err = r.land(g, mgr, pins); b.stop != nil || b.err != nil {
		return b
	}
	tip, err := mgr.EnsureStaging(g.Context(), "")
	if err != nil {
		b.err = err
		return b
	}
	tasks, err := r.snapshot(g.Store)
	if err != nil {
		b.err = err
		return b
	}
	b.gated = gated{tip: tip, held: doneSet(tasks)}
	return b
}

// land merges pins onto staging and gates the result; only then are they
// done. When the gates fail, staging goes back to where it was and the
// batch is split in halves, each landed in turn, down to the task whose
// work breaks the gates: that one is blocked, the others land. A staging
// that did not pass is never built on, and one that passed never gated
// again. stop is a conflict, or gates that fail without any task's work.
func (r *rush) land(g *engine.Engine, mgr *worktree.Manager, pins []worktree.Pin) (stop error, err error) {
	ctx := g.Context()
	old, err := mgr.EnsureStaging(ctx, "")
	if err != nil {
		return nil, err
	}
	res, stop, err := mergeOnly(g, mgr, pins)
	if stop != nil || err != nil {
		return stop, err
	}
	failed, err := runQualityGates(g, mgr, true)
	if err != nil {
		return nil, err
	}
	if failed == nil {
		if r.beforeDone != nil {
			var ids []string
			for _, p := range pins {
				ids = append(ids, p.Task)
			}
			r.beforeDone(ids)
		}
		return nil, g.RecordMerged(pins, append(append([]string(nil), res.Merged...), res.Skipped...), res.Tip)
	}
	var ee *engine.Error
	if !errors.As(failed, &ee) || ee.Kind != engine.Failed || res.Tip == old {
		return failed, nil // interrupted, or nothing merged: the gates fail on staging as it was
	}
	// Whom to blame: the batch only if staging passed without it. Never
	// gated (the feature's start), it is gated now, the batch set aside.
	passed, err := r.passedBefore(g, mgr, old, res.Tip)
	if err != nil || !passed {
		if err == nil {
			// The gates fail without the batch too: nothing of it is to
			// blame. It stays merged, done, and the rush stops, as it
			// does level by level.
			err = r.keepMerged(g, mgr, pins, old)
		}
		if err != nil {
			return nil, err
		}
		return failed, nil
	}
	if len(pins) > 1 {
		half := len(pins) / 2
		if stop, err := r.land(g, mgr, pins[:half]); stop != nil || err != nil {
			return stop, err
		}
		return r.land(g, mgr, pins[half:])
	}
	return nil, g.BlockGatesFailed(pins[0].Task, pins[0].Commit, "quality gates failed with its work merged: "+ee.Why)
}

// passedBefore reports whether staging passed the gates at old, the tip
// before the merge that failed them, and leaves staging there (moved
// back from tip). A tip never gated is gated now.
func (r *rush) passedBefore(g *engine.Engine, mgr *worktree.Manager, old, tip string) (bool, error) {
	s := g.Store
	tree, err := s.TreeOf(old)
	if err != nil {
		return false, err
	}
	set := hooks.GateSet(g.Config.Gates)
	if failedRec, _ := s.ReadRef(gatesFailedRef(tree)); !failedRec.IsZero() && !hooks.PassedHere(s, tree, set) {
		return false, nil // failed before: staging stays as the merge left it
	}
	if err := mgr.UndoMerge(g.Context(), old, tip); err != nil {
		return false, err
	}
	if hooks.PassedHere(s, tree, set) {
		return true, nil
	}
	stop, err := runQualityGates(g, mgr, true)
	return stop == nil && err == nil, err
}

// keepMerged merges pins again and records them done, when the gates
// fail on staging with and without them. Staging is at old, or still
// where the failed merge left it.
func (r *rush) keepMerged(g *engine.Engine, mgr *worktree.Manager, pins []worktree.Pin, old string) error {
	tip, err := mgr.EnsureStaging(g.Context(), "")
	if err != nil {
		return err
	}
	var res worktree.MergeResult
	if tip == old {
		var stop error
		if res, stop, err = mergeOnly(g, mgr, pins); stop != nil || err != nil {
			if err == nil {
				err = stop
			}
			return err
		}
	} else {
		res = worktree.MergeResult{Tip: tip}
		for _, p := range pins {
			res.Merged = append(res.Merged, p.Task)
		}
	}
	return g.RecordMerged(pins, append(append([]string(nil), res.Merged...), res.Skipped...), res.Tip)
}

// showSettled prints the table of each level that has just settled (its
// tasks blocked, or done and gated in base), and that its work is merged
// when this rush merged some of it.
func (r *rush) showSettled(tasks []*state.Task, shown, mergedIn map[int]bool, base gated) {
	settled := func(l int) bool {
		for _, t := range tasks {
			if t.Level == l && t.Status != state.Blocked && !base.held[t.ID()] {
				return false
			}
		}
		return true
	}
	tip := base.tip
	for l := 1; l <= len(shown); l++ {
		if shown[l] || !settled(l) {
			continue
		}
		shown[l] = true
		r.g.Emit(engine.Event{Type: engine.EvLevelEnd, Level: l, Tasks: tasks})
		if mergedIn[l] {
			r.g.Emit(engine.Event{Type: engine.EvLevelMerged, Level: l, Text: tip})
		}
	}
}

func verifiedPins(tasks []*state.Task) []worktree.Pin {
	var pins []worktree.Pin
	for _, t := range tasks {
		if t.Status == state.Verified {
			pins = append(pins, worktree.Pin{Task: t.ID(), Commit: t.Commit})
		}
	}
	return pins
}

func doneSet(tasks []*state.Task) map[string]bool {
	held := map[string]bool{}
	for _, t := range tasks {
		if t.Status == state.Done {
			held[t.ID()] = true
		}
	}
	return held
}

func anyDone(tasks []*state.Task) bool { return len(doneSet(tasks)) > 0 }

// levelsOf is the set of the tasks' levels.
func levelsOf(tasks []*state.Task) map[int]bool {
	ls := map[int]bool{}
	for _, t := range tasks {
		ls[t.Level] = true
	}
	return ls
}
