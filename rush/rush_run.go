package rush

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/engine/rushmarker"
	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/prompt"
	"github.com/git-zerg/git-zerg/rush/remote"
	"github.com/git-zerg/git-zerg/rush/schedule"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
	"github.com/git-zerg/git-zerg/worktree"
)

// rush runs a feature level by level with up to n workers.
type rush struct {
	g       *engine.Engine
	s       *gitstore.Store
	feature string
	cfg     *config.Config
	tmpl    *prompt.Template
	n       int
	mode    string
	policy  gates.Policy
	ttl     time.Duration
	marker  *rushmarker.Marker
	mgr     *worktree.Manager
	shared

	result *Result

	stops

	waitNoted map[string]time.Time // backoffs already told, by task

	slotsMu sync.Mutex
	slots   map[int]*worktree.Worker // worktrees set up by this rush

	info *infoGuard // keeps the repository's info/exclude and info/attributes as the user had them

	started time.Time // on the engine's clock

	beforeDone func(tasks []string) // Options.BeforeDone

	idle func(running int, merging bool) <-chan struct{} // Options.Idle
}

// slotResult is what one worker slot reports when its task run ends.
type slotResult struct {
	slot int
	task string
	err  error // an error of the tool itself (not of the worker)
}

func (r *rush) run() error {
	s := r.s
	r.started = r.g.Time()
	s.Persistent = true // hundreds of transitions: one update-ref process for all
	ctx := r.g.Context()
	defer func() {
		r.link.Close()
		// What the rush kept in memory, for the commands that come next.
		s.WriteCache(r.feature)
		s.WriteIndex(r.feature)
		s.Close()
		r.info.end()
		if r.mgr != nil {
			r.mgr.RemoveVerifyCheckouts(ctx) // made afresh by the next rush: what happens to them meanwhile is unknown
		}
		// git's housekeeping, deferred from each of the rush's commits to
		// its end, as git rebase does with its own.
		engine.Git(s).Run(ctx, "maintenance", "run", "--auto", "--quiet")
	}()
	if r.link.Remote != "" {
		r.link.Contend(s)
		fresh, stop := context.WithCancel(ctx)
		defer stop() // before the wait above
		r.link.KeepFresh(fresh)
	}
	if err := r.prepare(ctx); err != nil {
		return err
	}
	tx, err := s.View(r.feature)
	if err != nil {
		return err
	}
	meta, err := tx.Meta()
	if err != nil {
		return err
	}
	if r.flows() {
		return r.runFlowed(ctx)
	}
	return r.runLevels(ctx, len(meta.Levels))
}

// prepare is what comes before any task runs: the repository's info files
// kept as the user had them, and staging made, brought to the remote's or
// to the new commits of the branch it follows, with what a killed rush
// left in its worktrees rescued onto it.
func (r *rush) prepare(ctx context.Context) error {
	s := r.s
	r.mgr = r.g.Manager()
	guard, note, err := keepInfo(s, r.marker.Path())
	if err != nil {
		return err
	}
	if r.info = guard; note != "" {
		r.g.Note("%s", note)
	}
	head, err := engine.HeadCommit(s)
	if err != nil {
		return err
	}
	tip, err := r.mgr.EnsureStaging(ctx, head)
	if err != nil {
		return err
	}
	if r.link.Remote != "" {
		if tip, err = r.link.SyncStaging(ctx, r.mgr, head); err != nil {
			return err
		}
	} else if tip, err = r.followBase(ctx, tip); err != nil {
		return err
	}
	return r.rescueLeftovers(ctx, tip)
}

// endOnStop is the rush's end on stop: nil when what stopped it is the
// budget the last task crossed, with nothing left to stop.
func (r *rush) endOnStop(stop error) error {
	if r.link.Remote != "" {
		r.link.Poll(true) // the counts every host reports, as far as the remote answers
	}
	if err := r.summary(); err == nil && r.result.Complete && stop == error(r.budget.Load()) {
		// The last task crossed the budget: nothing is left to
		// stop, and --resume would find nothing to do.
		r.g.Note("%s (the feature is complete)", r.budget.Load().What)
		return nil
	}
	return stop
}

// runFlowed is the rush under the flow schedule, to its summary.
func (r *rush) runFlowed(ctx context.Context) error {
	if stop, err := r.runFlow(); err != nil || stop != nil {
		if err != nil {
			return err
		}
		return r.endOnStop(stop)
	}
	if r.link.Remote != "" {
		if err := r.flowEnd(ctx); err != nil {
			return err
		}
	}
	return r.summary()
}

// runLevels is the rush level by level, to its summary.
func (r *rush) runLevels(ctx context.Context, levels int) error {
	for i := range levels {
		level := i + 1
		stop, err := r.runLevel(level)
		if err != nil {
			return err
		}
		if stop != nil {
			return r.endOnStop(stop)
		}
	}
	if r.link.Remote != "" {
		// Every host ends with the remote's state and staging, and so
		// says the same.
		if err := r.link.Poll(true); err != nil {
			return err
		}
		if _, err := r.link.SyncStaging(ctx, r.mgr, ""); err != nil {
			return err
		}
	}
	return r.summary()
}

// followBase brings the new commits of the branch staging follows into
// staging, and gates the result, before anything builds on it. Staging
// that follows no branch yet follows the one checked out now. It returns
// the tip to build on; a conflict or a failed gate stops the rush.
func (r *rush) followBase(ctx context.Context, tip string) (string, error) {
	branch, _, err := r.mgr.Behind(ctx)
	if err != nil {
		return "", err
	}
	if branch == "" {
		cur, _ := engine.Git(r.s).Line(ctx, "symbolic-ref", "-q", "--short", "HEAD")
		if cur == "" || strings.HasPrefix(cur, "zerg/") {
			return tip, nil // detached, or on a rush's own branch: nothing to follow
		}
		if err := r.mgr.SetBase(ctx, cur); err != nil {
			return "", err
		}
		branch = cur
	}
	if !r.cfg.Rush.FollowBase {
		return tip, nil
	}
	next, n, err := r.mgr.FollowBase(ctx)
	var c *worktree.Conflict
	if errors.As(err, &c) {
		return "", &engine.Error{Kind: engine.Failed, What: fmt.Sprintf("staging cannot take in the new commits of %s", branch),
			Why:  "merge conflict in " + strings.Join(c.Files, ", "),
			Hint: fmt.Sprintf("merge %s into %s and resolve it, or set rush.follow_base = false", worktree.StagingBranch(r.feature), branch)}
	}
	if err != nil || n == 0 {
		return next, err
	}
	r.g.Note("staging follows %s: took in %s (staging at %s)", branch, words.Plural(n, "new commit"), words.ShortHash(next))
	if stop, err := runQualityGates(r.g, r.mgr, true); stop != nil || err != nil {
		if err == nil {
			err = stop
		}
		return "", err
	}
	return next, nil
}

// flows reports whether the rush schedules by dependencies rather than
// level by level, on one clone or shared through a remote.
func (r *rush) flows() bool {
	return r.cfg.Rush.Schedule != config.ScheduleLevels
}

// snapshot reads the current state of the feature.
func (r *rush) snapshot(s *gitstore.Store) ([]*state.Task, error) {
	tx, err := s.View(r.feature)
	if err != nil {
		return nil, err
	}
	return tx.Tasks()
}

// runLevel runs one level to the end: schedules ready tasks on free slots
// until every task of the level is verified, done or blocked (or can never
// run), then merges and gates. A non-nil stop ends the rush with that
// error (exit 1); err is a failure of the tool.
func (r *rush) runLevel(level int) (stop error, err error) {
	tasks, tip, run, stop, err := r.levelBegin(level)
	if !run {
		return stop, err
	}
	r.levelStart(level, tasks)
	workers := newPool(r.n)
	results := make(chan slotResult)
	var firstErr error
	for {
		if tasks, err = r.levelLook(level, tasks, workers); err != nil {
			return nil, err
		}
		if firstErr == nil {
			firstErr = r.startLevelTasks(level, tasks, workers, results, tip)
		}
		if workers.idle() {
			if firstErr != nil {
				return nil, firstErr
			}
			if r.stopped.Load() {
				return r.stopErr(), nil
			}
			if r.waitIdle(tasks, level) {
				continue
			}
			break
		}
		if err := r.awaitRun(workers, results); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	tasks, err = r.snapshot(r.s)
	if err != nil {
		return nil, err
	}
	if stop, err := r.finishLevel(level, tasks, tip); stop != nil || err != nil {
		return stop, err
	}
	return r.stopErr(), nil
}

// levelBegin is what comes before a level's loop: the remote's state and
// staging taken (unless the last level's end just did), the feature's
// state read, the staging the level builds on gated and made sure of.
// run is false when the level ends before its loop, with stop and err:
// nothing left to run in it, a stop asked for, nothing of it that can
// run, gates that fail on what the levels below merged, or a failure of
// the tool.
func (r *rush) levelBegin(level int) (tasks []*state.Task, tip string, run bool, stop, err error) {
	ctx := r.g.Context()
	synced := r.levelSynced
	r.levelSynced = false
	if synced {
		r.link.JustPolled() // the level's first idle look is this one
	}
	if r.link.Remote != "" && !synced {
		// Every host starts the level from the remote's state and staging.
		if err := r.link.Poll(true); err != nil {
			return nil, "", false, nil, err
		}
		if _, err := r.link.SyncStaging(ctx, r.mgr, ""); err != nil {
			return nil, "", false, nil, err
		}
	}
	tasks, err = r.snapshot(r.s)
	if err != nil {
		return nil, "", false, nil, err
	}
	if schedule.LevelDone(tasks, level) {
		return nil, "", false, nil, nil
	}
	if err := r.stopErr(); err != nil {
		return nil, "", false, err, nil
	}
	if why := schedule.Hopeless(tasks, level); why != "" {
		// Nothing of it can run in this rush: one line, not a table of
		// tasks that never moved.
		r.g.Note("level %d: skipped: %s", level, why)
		return nil, "", false, nil, nil
	}
	if level > 1 {
		// The levels below were merged, but perhaps their gates failed in
		// an earlier rush: never build on a staging that did not pass (a
		// tree that passed costs nothing here).
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

// levelLook is the start of each turn of a level's loop: the remote
// looked at by an idle host (tasks is the state the last turn read), and
// the state read and said.
func (r *rush) levelLook(level int, tasks []*state.Task, workers *pool) ([]*state.Task, error) {
	// A host with tasks running catches up with each of their
	// transitions; an idle one looks at the remote now and then,
	// unless what it holds already says the level is settled (no
	// other host can undo that): then it merges at once.
	if workers.idle() && r.link.Remote != "" && !schedule.LevelSettled(tasks, level) {
		if err := r.link.Poll(false); err != nil {
			return nil, err
		}
		if err := r.g.ExpireStale(); err != nil {
			return nil, err
		}
	}
	tasks, err := r.snapshot(r.s)
	if err != nil {
		return nil, err
	}
	r.g.Emit(engine.Event{Type: engine.EvProgress, Level: level, Tasks: tasks})
	return tasks, nil
}

// startLevelTasks starts the level's ready tasks on the free workers, from
// tip, unless the rush is stopping. The error is the tool's: no task
// starts after it but those claimed with it.
func (r *rush) startLevelTasks(level int, tasks []*state.Task, workers *pool, results chan<- slotResult, tip string) error {
	if len(workers.free) > 1 && !r.stopping() && r.link.Remote != "" {
		// Workers that start together (a level's start) claim in one
		// transaction: one push to the remote for this host, where one
		// each would queue behind the other hosts' pushes.
		claimed, err := r.claimTogether(tasks, level, workers.free, tip)
		for _, t := range claimed {
			slot := workers.take(t.ID())
			go func(t *state.Task, slot int) {
				results <- slotResult{slot: slot, task: t.ID(), err: r.runTask(t.ID(), slot, tip, level, t)}
			}(t, slot)
		}
		if err != nil {
			return err
		}
	}
	if len(workers.free) > 0 && !r.stopping() {
		for _, t := range r.policy.ReadyOrder(tasks, r.g.Time()) {
			if len(workers.free) == 0 {
				break
			}
			if t.Level != level || workers.runs(t.ID()) {
				continue
			}
			slot := workers.take(t.ID())
			go func(id string, slot int) {
				results <- slotResult{slot: slot, task: id, err: r.runTask(id, slot, tip, level, nil)}
			}(t.ID(), slot)
		}
	}
	return nil
}

// awaitRun waits for a task run's end, a tick or the tests' idle hook;
// the error is the tool's, from the run that ended.
func (r *rush) awaitRun(workers *pool, results <-chan slotResult) error {
	select {
	case res := <-results:
		return workers.put(res)
	case <-time.After(200 * time.Millisecond):
	case <-r.idleHook(len(workers.running), false):
	}
	return nil
}

// idleHook tells Options.Idle that the scheduler waits for its next event
// with running task runs, merging or not, and returns its channel: nil
// (never ready) without one.
func (r *rush) idleHook(running int, merging bool) <-chan struct{} {
	if r.idle == nil {
		return nil
	}
	return r.idle(running, merging)
}

// pool is a scheduler's worker slots: the free ones, handed out from the
// end, and the slot each running task holds.
type pool struct {
	free    []int
	running map[string]int
}

func newPool(n int) *pool {
	p := &pool{free: make([]int, 0, n), running: map[string]int{}}
	for i := n; i >= 1; i-- {
		p.free = append(p.free, i)
	}
	return p
}

// take hands a free slot to task.
func (p *pool) take(task string) int {
	slot := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	p.running[task] = slot
	return slot
}

// put takes a slot back when its task run ends, and returns the tool's
// error it ended with.
func (p *pool) put(res slotResult) error {
	delete(p.running, res.task)
	p.free = append(p.free, res.slot)
	return res.err
}

func (p *pool) runs(task string) bool { return p.running[task] != 0 }

func (p *pool) idle() bool { return len(p.running) == 0 }

// waitIdle is what a scheduler with nothing running does: it waits for
// the soonest backoff (or a poll) and reports true to look again, or
// false when it is done with tasks: they are settled (their work merges,
// whatever stops the rush next), the rush is stopping (what was verified
// still merges), or nothing can run any more (blocked dependencies).
func (r *rush) waitIdle(tasks []*state.Task, level int) bool {
	wait, settled := r.levelWait(tasks, level)
	if settled || r.stopErr() != nil || wait <= 0 {
		return false
	}
	r.pause(wait)
	return true
}

// pause waits d, or until the rush is interrupted.
func (r *rush) pause(d time.Duration) {
	select {
	case <-time.After(d):
	case <-r.stopCtx.Done():
	}
}

// levelWait is the pure levelWait at the rush's clock and policy, saying
// once for each backoff why nothing runs, and until when.
func (r *rush) levelWait(tasks []*state.Task, level int) (time.Duration, bool) {
	wait, settled, backoffs := schedule.LevelWait(tasks, level, r.policy, r.g.Time(), remote.Poll)
	r.noteBackoffs(backoffs)
	return wait, settled
}

// noteBackoffs says, once for each backoff, that a task waits and until
// when.
func (r *rush) noteBackoffs(backoffs []*state.Task) {
	for _, t := range backoffs {
		if r.waitNoted[t.ID()] != t.NotBefore {
			r.waitNoted[t.ID()] = t.NotBefore
			r.g.Note("%s waits until %s (backoff after attempt %d: %s)", t.ID(), t.NotBefore.Local().Format("15:04:05"), t.Attempts, t.Reason)
		}
	}
}

// finishLevel merges the level's verified work into staging and runs the
// quality gates, or stops the rush when the level cannot go on.
func (r *rush) finishLevel(level int, tasks []*state.Task, tip string) (error, error) {
	var pins []worktree.Pin
	total, blocked := 0, 0
	for _, t := range tasks {
		if t.Level != level {
			continue
		}
		total++
		switch t.Status {
		case state.Verified:
			pins = append(pins, worktree.Pin{Task: t.ID(), Commit: t.Commit})
		case state.Blocked:
			blocked++
		}
	}
	if total > 0 && blocked == total {
		r.g.Emit(engine.Event{Type: engine.EvLevelEnd, Level: level, Tasks: tasks})
		return engine.FailedError(fmt.Sprintf("rush aborted: every task of level %d is blocked", level), ""), nil
	}
	merge := func() (error, error) { return r.mergeAndGate(level, pins) }
	if r.link.Remote != "" {
		merge = func() (error, error) { return r.remoteMerge(level) }
	}
	if stop, err := merge(); stop != nil || err != nil {
		if stop != nil {
			if ts, err := r.snapshot(r.s); err == nil {
				r.g.Emit(engine.Event{Type: engine.EvLevelEnd, Level: level, Tasks: ts})
			}
		}
		return stop, err
	}
	tasks, err := r.snapshot(r.s)
	if err != nil {
		return nil, err
	}
	r.g.Emit(engine.Event{Type: engine.EvLevelEnd, Level: level, Tasks: tasks})
	if len(pins) > 0 {
		tip, _ := r.mgr.EnsureStaging(r.g.Context(), "")
		r.g.Emit(engine.Event{Type: engine.EvLevelMerged, Level: level, Text: tip})
	}
	return nil, nil
}

// mergeAndGate merges pins into staging (verified → done) and runs the
// gates on the result. Shared by rush and `git zerg merge`.
func (r *rush) mergeAndGate(level int, pins []worktree.Pin) (stop error, err error) {
	if len(pins) > 0 {
		stop, err := mergePins(r.g, r.mgr, pins)
		if stop != nil || err != nil {
			return stop, err
		}
	}
	return runQualityGates(r.g, r.mgr, false)
}

// runTask runs one task on a slot to a settled state: claimed, worked on
// (with checkpoints), committed, checked and verified — or failed or
// blocked. Errors returned are the tool's own.
func (r *rush) runTask(id string, slot int, tip string, level int, held *state.Task) error {
	ctx := r.g.Context()
	s, err := r.s.Repo().Open(ctx, r.s.Top) // a store per goroutine: a Store is not for concurrent use
	if err != nil {
		return err
	}
	defer s.Drop()
	s.Persistent = true
	if r.link.Remote != "" {
		r.link.Arbitrate(s)
	}
	w, err := r.slot(ctx, slot, tip)
	if err != nil {
		return err
	}
	req, t, err := r.firstClaim(s, w, id, tip, level, held)
	if err != nil || t == nil {
		return err
	}
	// Once a task settles, the worker claims the best ready task of the
	// level in the same state commit, and goes on with it here.
	next := req
	next.Task = ""
	next.Only = func(t *state.Task) bool { return t.Level == level }
	for t != nil {
		r.g.Transition(t.ID(), "claimed by "+w.Name+attemptNote(t.AttemptNumber()))
		refused, after, err := r.refuseEscape(ctx, s, t, w, &next)
		if err != nil {
			return err
		}
		if refused {
			t = after
			continue // nothing ran: the worktree is still at tip
		}
		stopBeat := r.heartbeat(s, w.Name)
		r.link.Working(1)
		res, runErr := r.work(ctx, s, t, w)
		r.link.Working(-1)
		stopBeat()
		var then *engine.ClaimRequest
		then, tip = r.thenClaim(&next, tip)
		if t, err = r.settleRun(ctx, s, t, w, res, runErr, then); err != nil || t == nil {
			return err
		}
		if w, err = r.slot(ctx, slot, tip); err != nil {
			return err
		}
	}
	return nil
}

// firstClaim claims the slot's first task for worker w (held: claimed
// already, with the workers that start together), and returns the claim
// asked for. A nil task with no error is a claim lost to another claimer,
// or a task no longer ready: the scheduler looks again.
func (r *rush) firstClaim(s *gitstore.Store, w *worktree.Worker, id, tip string, level int, held *state.Task) (engine.ClaimRequest, *state.Task, error) {
	req := engine.ClaimRequest{Worker: w.Name, Task: id, Base: tip, PID: os.Getpid(), Started: r.marker.Self().Started, InWorktree: true}
	if r.link.Remote != "" {
		// The other hosts go for the same tasks: the best ready one, picked
		// on the remote's state as the claim commits, loses no race but
		// the compare-and-swap, where a specific one would be refused.
		req.Task = ""
		req.Only = func(t *state.Task) bool { return t.Level == level }
		if r.flows() {
			// What the staging at tip holds the dependencies of.
			req.Only, req.Rank = r.flowClaim(tip)
		}
	}
	t := held
	var err error
	if t == nil {
		t, _, err = r.with(s).Claim(req)
	}
	if err != nil && r.link.Remote != "" {
		// A claim whose push got no answer may have reached the remote: the
		// retry then finds the worker holding it, and goes on with it.
		if held := heldBy(s, r.feature, w.Name); held != nil {
			t, err = held, nil
		}
	}
	if err != nil {
		var ref *gates.Refusal
		if errors.As(err, &ref) {
			return req, nil, nil // lost to another claimer or no longer ready: the scheduler looks again
		}
		return req, nil, err
	}
	return req, t, nil
}

// refuseEscape refuses the task, before its worker runs, when its owned
// files reach outside the worktree. refused says so, with after the
// worker's next task, claimed with the refusal.
func (r *rush) refuseEscape(ctx context.Context, s *gitstore.Store, t *state.Task, w *worktree.Worker, next *engine.ClaimRequest) (refused bool, after *state.Task, err error) {
	// The tree the agent gets is the one to check: a link committed by
	// an earlier level is in it, and nowhere else yet.
	esc, err := engine.OwnedEscape(ctx, engine.Git(s), w.Dir, t.Spec.Owned())
	if err != nil {
		return false, nil, err
	}
	if esc == nil {
		return false, nil, nil
	}
	// Refused for good: another attempt finds the same link.
	after, err = r.refuse(s, t, w, "not sent to the worker: "+esc.Error(), next)
	return true, after, err
}

// thenClaim is the claim a worker's transition carries for its next task
// (nil: none, the scheduler picks it) and the staging tip the worker goes
// on from.
func (r *rush) thenClaim(next *engine.ClaimRequest, tip string) (*engine.ClaimRequest, string) {
	then := next
	switch {
	case r.stopping():
		then = nil
	case r.flows() && r.link.Remote != "":
		// Shared, the next claim rides in the same push (a third of
		// each task's pushes, every one contested by the other
		// hosts), from the newest gated staging, picked as the
		// scheduler would.
		tip = r.newestGated(tip)
		next.Base = tip
		next.Only, next.Rank = r.flowClaim(tip)
	case r.flows():
		// The flow scheduler picks the next task itself: the best
		// ready one may be of any level, and it starts from the
		// newest gated staging, not from this one's start.
		then = nil
	}
	return then, tip
}

// settleRun settles a worker's run, or the attempt broken when the worker
// command could not start in its worktree, and returns the worker's next
// task.
func (r *rush) settleRun(ctx context.Context, s *gitstore.Store, t *state.Task, w *worktree.Worker, res workResult, runErr error, then *engine.ClaimRequest) (*state.Task, error) {
	if runErr != nil {
		// The worker command could not even start where its worktree
		// was: someone removed it. Any other error is the tool's.
		bad := r.mgr.Check(ctx, *w)
		var we *worktree.Error
		if !errors.As(bad, &we) {
			return nil, runErr
		}
		return r.brokenAttempt(ctx, s, t, w, bad, res, then)
	}
	return r.settle(ctx, s, t, w, res, then)
}

// claimTogether claims, in one transaction, a task of the level for each
// free slot that a ready task is there for (the slots from the end of
// free, as the scheduler hands them out), and returns the tasks claimed in
// that order. Fewer than two: nothing, and the slots claim on their own.
func (r *rush) claimTogether(tasks []*state.Task, level int, free []int, tip string) ([]*state.Task, error) {
	ready := 0
	for _, t := range r.policy.ReadyOrder(tasks, r.g.Time()) {
		if t.Level == level {
			ready++
		}
	}
	n := min(ready, len(free))
	if n < 2 {
		return nil, nil
	}
	only := func(t *state.Task) bool { return t.Level == level }
	reqs := make([]engine.ClaimRequest, n)
	for i := range reqs {
		slot := free[len(free)-1-i]
		reqs[i] = engine.ClaimRequest{Worker: hostWorker(r.s.Host(), WorkerName(slot)), Base: tip, PID: os.Getpid(), Started: r.marker.Self().Started, Only: only, InWorktree: true}
	}
	claimed, err := r.g.ClaimAll(reqs)
	var ref *gates.Refusal
	if errors.As(err, &ref) {
		return nil, nil
	}
	return claimed, err
}

// summary records how the rush ended and returns its verdict.
func (r *rush) summary() error {
	tasks, err := r.snapshot(r.s)
	if err != nil {
		return err
	}
	counts := words.Counts(tasks)
	end := engine.Event{Type: engine.EvRushEnd, Tasks: tasks, Text: "ended: " + words.CountsLine(counts)}
	if counts[string(state.Done)] == len(tasks) {
		end.Text = "complete"
	}
	if err := r.stopErr(); err != nil {
		end.Reason = err.Error()
	}
	defer r.g.Emit(end)
	r.result = &Result{Feature: r.feature, Tasks: len(tasks), Counts: counts, Staging: worktree.StagingBranch(r.feature)}
	now := r.g.Time()
	r.result.Flow = schedule.FlowOf(tasks, r.started, now.Sub(r.started), r.n)
	if counts[string(state.Done)] == len(tasks) {
		tip, _ := r.mgr.EnsureStaging(r.g.Context(), "")
		r.result.Complete, r.result.Tip = true, tip
		return nil
	}
	// Name what stopped the rush: blocked tasks, and tasks this rush could
	// never claim because they wait for `git zerg approve`.
	var stuck []string
	nblocked := 0
	for _, t := range tasks {
		switch {
		case t.Status == state.Blocked:
			nblocked++
			stuck = append(stuck, fmt.Sprintf("%s (%s)", t.ID(), t.Reason))
		case t.Status == state.Pending && t.NeedsApproval() && t.Approved == "":
			stuck = append(stuck, t.ID()+" (needs git zerg approve "+t.ID()+")")
		}
	}
	what := fmt.Sprintf("rush ended with %s", words.Plural(nblocked, "blocked task"))
	if nblocked == 0 {
		what = "rush ended with unfinished tasks"
	}
	return engine.FailedError(what, strings.Join(stuck, "; "))
}

// with is the engine on another store: each of the rush's goroutines has
// its own, since a Store is not for concurrent use.
func (r *rush) with(s *gitstore.Store) *engine.Engine {
	return r.g.WithRun(s, r.stopCtx, r.link.Remote != "")
}

func (r *rush) levelStart(level int, tasks []*state.Task) {
	n := 0
	for _, t := range tasks {
		if t.Level == level {
			n++
		}
	}
	r.g.Emit(engine.Event{Type: engine.EvLevelStart, Level: level, Text: fmt.Sprintf("level %d: %s", level, words.Plural(n, "task"))})
}
