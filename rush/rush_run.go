package rush

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/agent"
	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/proc"
	"github.com/git-zerg/git-zerg/prompt"
	"github.com/git-zerg/git-zerg/state"
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
	marker  *engine.RushMarker
	mgr     *worktree.Manager
	shared

	result *Result

	stops

	waitNoted map[string]time.Time // backoffs already told, by task

	slotsMu sync.Mutex
	slots   map[int]*worktree.Worker // worktrees set up by this rush

	info *infoGuard // keeps the repository's info/exclude and info/attributes as the user had them
}

// slot returns the slot's worktree at tip. The first time, the worktree is
// added (or reused, or rescued from a crash); after that, the previous
// task's work is committed and pinned or saved, so a reset is all it takes
// — a git process instead of the dozen that checking from scratch costs.
func (r *rush) slot(ctx context.Context, n int, tip string) (*worktree.Worker, error) {
	r.slotsMu.Lock()
	w := r.slots[n]
	r.slotsMu.Unlock()
	if w != nil {
		if w, err := r.reuseSlot(ctx, w, tip); w != nil || err != nil {
			return w, err
		}
	}
	w, err := r.mgr.Add(ctx, n, tip)
	var we *worktree.Error
	if errors.As(err, &we) && (errors.Is(err, worktree.ErrDirty) || errors.Is(err, worktree.ErrUnmerged)) && w == nil {
		// Leftovers of an earlier rush on this slot: keep them under a
		// ref, then start the slot afresh.
		w, err = r.rescueSlot(ctx, n, tip)
	}
	if err != nil && !r.usableSlot(n, w, err) {
		return nil, err
	}
	r.noteRepaired(workerName(n), w.Dir, w.Repaired)
	if r.remote != "" {
		w.Name = hostWorker(r.s.Host(), w.Name)
	}
	r.slotsMu.Lock()
	if r.slots == nil {
		r.slots = map[int]*worktree.Worker{}
	}
	r.slots[n] = w
	r.slotsMu.Unlock()
	return w, nil
}

// reuseSlot resets the slot's worktree to tip for its next task. It
// returns nil (and no error) when the worktree has to be made again: it
// was broken since its last task (by any worker: they all can reach it),
// or git fails in it; what was in it is then moved aside or mended first.
func (r *rush) reuseSlot(ctx context.Context, w *worktree.Worker, tip string) (*worktree.Worker, error) {
	if err := r.mgr.Check(ctx, *w); err != nil {
		var we *worktree.Error
		if !errors.As(err, &we) {
			return nil, err
		}
		r.dropSlot(w.N) // Add mends it, or moves it aside, and says so
		return nil, nil
	}
	err := r.mgr.ResetForTask(ctx, *w, tip)
	if err == nil {
		return w, nil
	}
	aside, merr := r.mgr.MoveAside(ctx, *w)
	if merr != nil {
		return nil, err
	}
	r.g.Note("%s: git fails in worktree %s (%s): moved aside to %s, with everything in it", w.Name, w.Dir, gitReason(err), aside)
	r.dropSlot(w.N)
	return nil, nil
}

// usableSlot reports whether a worktree that Add returned with err can
// take tasks all the same, and notes what is missing from it: the rush
// carries on without a failed setup, or without files of .worktreeinclude
// left out because a symbolic link was in their way there (a worker may
// have committed it to have the user's secrets written elsewhere).
func (r *rush) usableSlot(n int, w *worktree.Worker, err error) bool {
	if w == nil {
		return false
	}
	var ie *worktree.IncludeError
	var se *worktree.SetupError
	switch {
	case errors.As(err, &ie):
		note := engine.IncludeNote(ie)
		if r.mgr.Setup != "" {
			note += "; worktrees.setup did not run there"
		}
		r.g.Note("%s: %s", workerName(n), note)
	case errors.As(err, &se):
		r.g.Note("%s: worktree setup failed: %v", workerName(n), err)
	default:
		return false
	}
	return true
}

// slotResult is what one worker slot reports when its task run ends.
type slotResult struct {
	slot int
	task string
	err  error // an error of the tool itself (not of the worker)
}

func (r *rush) run() error {
	s := r.s
	s.Persistent = true // hundreds of transitions: one update-ref process for all
	ctx := r.g.Context()
	defer func() {
		r.background.Wait()
		if r.fresher != nil {
			r.fresher.Drop()
		}
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
	if r.remote != "" {
		fresh, stop := context.WithCancel(ctx)
		defer stop() // before the wait above
		r.background.Add(1)
		go func() {
			defer r.background.Done()
			r.keepFresh(fresh)
		}()
	}
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
	if r.remote != "" {
		if tip, err = r.syncStaging(ctx, head); err != nil {
			return err
		}
	}
	if err := r.rescueLeftovers(ctx, tip); err != nil {
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
	for i := range meta.Levels {
		level := i + 1
		stop, err := r.runLevel(level)
		if err != nil {
			return err
		}
		if stop != nil {
			if r.remote != "" {
				r.poll(true) // the counts every host reports, as far as the remote answers
			}
			if err := r.summary(); err == nil && r.result.Complete && stop == error(r.budget.Load()) {
				// The last task crossed the budget: nothing is left to
				// stop, and --resume would find nothing to do.
				r.g.Note("%s (the feature is complete)", r.budget.Load().What)
				return nil
			}
			return stop
		}
	}
	if r.remote != "" {
		// Every host ends with the remote's state and staging, and so
		// says the same.
		if err := r.poll(true); err != nil {
			return err
		}
		if _, err := r.syncStaging(ctx, ""); err != nil {
			return err
		}
	}
	return r.summary()
}

// levelTasks reads the current state of the feature.
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
	ctx := r.g.Context()
	synced := r.levelSynced
	r.levelSynced = false
	if synced {
		r.lastPoll = time.Now() // the level's first idle look is this one
	}
	if r.remote != "" && !synced {
		// Every host starts the level from the remote's state and staging.
		if err := r.poll(true); err != nil {
			return nil, err
		}
		if _, err := r.syncStaging(ctx, ""); err != nil {
			return nil, err
		}
	}
	tasks, err := r.snapshot(r.s)
	if err != nil {
		return nil, err
	}
	if levelDone(tasks, level) {
		return nil, nil
	}
	if err := r.stopErr(); err != nil {
		return err, nil
	}
	if why := hopeless(tasks, level); why != "" {
		// Nothing of it can run in this rush: one line, not a table of
		// tasks that never moved.
		r.g.Note("level %d: skipped: %s", level, why)
		return nil, nil
	}
	if level > 1 {
		// The levels below were merged, but perhaps their gates failed in
		// an earlier rush: never build on a staging that did not pass (a
		// tree that passed costs nothing here).
		if stop, err := runQualityGates(r.g, r.mgr, true); stop != nil || err != nil {
			return stop, err
		}
	}
	tip, err := r.mgr.EnsureStaging(ctx, "")
	if err != nil {
		return nil, err
	}
	r.levelStart(level, tasks)
	free := make([]int, 0, r.n)
	for i := r.n; i >= 1; i-- {
		free = append(free, i)
	}
	running := map[string]int{} // task -> slot
	results := make(chan slotResult)
	var firstErr error
	for {
		// A host with tasks running catches up with each of their
		// transitions; an idle one looks at the remote now and then,
		// unless what it holds already says the level is settled (no
		// other host can undo that): then it merges at once.
		if len(running) == 0 && r.remote != "" && !levelSettled(tasks, level) {
			if err := r.poll(false); err != nil {
				return nil, err
			}
			if err := r.g.ExpireStale(); err != nil {
				return nil, err
			}
		}
		tasks, err = r.snapshot(r.s)
		if err != nil {
			return nil, err
		}
		r.g.Emit(engine.Event{Type: engine.EvProgress, Level: level, Tasks: tasks})
		if firstErr == nil && len(free) > 1 && !r.stopping() && r.remote != "" {
			// Workers that start together (a level's start) claim in one
			// transaction: one push to the remote for this host, where one
			// each would queue behind the other hosts' pushes.
			claimed, err := r.claimTogether(tasks, level, free, tip)
			if err != nil {
				firstErr = err
			}
			for _, t := range claimed {
				slot := free[len(free)-1]
				free = free[:len(free)-1]
				running[t.ID()] = slot
				go func(t *state.Task, slot int) {
					results <- slotResult{slot: slot, task: t.ID(), err: r.runTask(t.ID(), slot, tip, level, t)}
				}(t, slot)
			}
		}
		if firstErr == nil && len(free) > 0 && !r.stopping() {
			for _, t := range r.policy.ReadyOrder(tasks, r.g.Time()) {
				if len(free) == 0 {
					break
				}
				if t.Level != level || running[t.ID()] != 0 {
					continue
				}
				slot := free[len(free)-1]
				free = free[:len(free)-1]
				running[t.ID()] = slot
				go func(id string, slot int) {
					results <- slotResult{slot: slot, task: id, err: r.runTask(id, slot, tip, level, nil)}
				}(t.ID(), slot)
			}
		}
		if len(running) == 0 {
			if firstErr != nil {
				return nil, firstErr
			}
			if r.stopped.Load() {
				return r.stopErr(), nil
			}
			wait, done := r.levelWait(tasks, level)
			if done {
				break // settled: its work merges, whatever stops the rush next
			}
			if r.stopErr() != nil {
				break // what was verified still merges; then the rush stops
			}
			if wait > 0 {
				select {
				case <-time.After(wait):
				case <-r.stopCtx.Done():
				}
				continue
			}
			break // nothing can run any more: blocked dependencies
		}
		select {
		case res := <-results:
			delete(running, res.task)
			free = append(free, res.slot)
			if res.err != nil && firstErr == nil {
				firstErr = res.err
			}
		case <-time.After(200 * time.Millisecond):
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

// levelWait is the pure levelWait at the rush's clock and policy, saying
// once for each backoff why nothing runs, and until when.
func (r *rush) levelWait(tasks []*state.Task, level int) (time.Duration, bool) {
	wait, settled, backoffs := levelWait(tasks, level, r.policy, r.g.Time(), remotePoll)
	for _, t := range backoffs {
		if r.waitNoted[t.ID()] != t.NotBefore {
			r.waitNoted[t.ID()] = t.NotBefore
			r.g.Note("%s waits until %s (backoff after attempt %d: %s)", t.ID(), t.NotBefore.Local().Format("15:04:05"), t.Attempts, t.Reason)
		}
	}
	return wait, settled
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
	if r.remote != "" {
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
	if r.remote != "" {
		s.SetArbiter(r.remote, engine.CheckCaughtUp)
		s.SetArbiterWait(r.remoteWait())
		s.SetRepushPins(r.g.ReviewMode() == "")
	}
	w, err := r.slot(ctx, slot, tip)
	if err != nil {
		return err
	}
	req := engine.ClaimRequest{Worker: w.Name, Task: id, Base: tip, PID: os.Getpid(), Started: r.marker.Self().Started, InWorktree: true}
	if r.remote != "" {
		// The other hosts go for the same tasks: the best ready one, picked
		// on the remote's state as the claim commits, loses no race but
		// the compare-and-swap, where a specific one would be refused.
		req.Task = ""
		req.Only = func(t *state.Task) bool { return t.Level == level }
	}
	t := held
	if t == nil {
		t, _, err = r.with(s).Claim(req)
	}
	if err != nil && r.remote != "" {
		// A claim whose push got no answer may have reached the remote: the
		// retry then finds the worker holding it, and goes on with it.
		if held := heldBy(s, r.feature, w.Name); held != nil {
			t, err = held, nil
		}
	}
	if err != nil {
		var ref *gates.Refusal
		if errors.As(err, &ref) {
			return nil // lost to another claimer or no longer ready: the scheduler looks again
		}
		return err
	}
	// Once a task settles, the worker claims the best ready task of the
	// level in the same state commit, and goes on with it here.
	next := req
	next.Task = ""
	next.Only = func(t *state.Task) bool { return t.Level == level }
	for t != nil {
		r.g.Transition(t.ID(), "claimed by "+w.Name+attemptNote(t.Attempts))
		// The tree the agent gets is the one to check: a link committed by
		// an earlier level is in it, and nowhere else yet.
		if esc, err := engine.OwnedEscape(ctx, engine.Git(s), w.Dir, t.Spec.Owned()); err != nil {
			return err
		} else if esc != nil {
			// Refused for good: another attempt finds the same link.
			if t, err = r.refuse(s, t, w, "not sent to the worker: "+esc.Error(), &next); err != nil {
				return err
			}
			continue // nothing ran: the worktree is still at tip
		}
		stopBeat := r.heartbeat(s, w.Name)
		r.working.Add(1)
		res, runErr := r.work(ctx, s, t, w)
		r.working.Add(-1)
		stopBeat()
		then := &next
		if r.stopping() {
			then = nil
		}
		if runErr != nil {
			// The worker command could not even start where its worktree
			// was: someone removed it. Any other error is the tool's.
			bad := r.mgr.Check(ctx, *w)
			var we *worktree.Error
			if !errors.As(bad, &we) {
				return runErr
			}
			t, err = r.brokenAttempt(ctx, s, t, w, bad, res, then)
		} else {
			t, err = r.settle(ctx, s, t, w, res, then)
		}
		if err != nil || t == nil {
			return err
		}
		if w, err = r.slot(ctx, slot, tip); err != nil {
			return err
		}
	}
	return nil
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
		reqs[i] = engine.ClaimRequest{Worker: hostWorker(r.s.Host(), workerName(slot)), Base: tip, PID: os.Getpid(), Started: r.marker.Self().Started, Only: only, InWorktree: true}
	}
	claimed, err := r.g.ClaimAll(reqs)
	var ref *gates.Refusal
	if errors.As(err, &ref) {
		return nil, nil
	}
	return claimed, err
}

// refuse blocks a claimed task before its worker runs, and returns the
// worker's next task.
func (r *rush) refuse(s *gitstore.Store, t *state.Task, w *worktree.Worker, reason string, then *engine.ClaimRequest) (*state.Task, error) {
	ft, next, err := r.with(s).Fail(engine.Failure{Worker: w.Name, Task: t.ID(), Reason: reason, Block: true, Then: then})
	if err != nil {
		return nil, err
	}
	r.g.Emit(engine.Event{Type: engine.EvTransition, Task: t.ID(), Text: string(ft.Status) + ": " + reason, Status: ft.Status, Reason: reason})
	return next, nil
}

func workerName(slot int) string { return fmt.Sprintf("worker-%d", slot) }

func attemptNote(n int) string {
	if n > 1 {
		return fmt.Sprintf(" (attempt %d)", n)
	}
	return ""
}

// heartbeat renews the worker's lease while its command runs, so a live
// worker never loses its claim and a dead rush's claims expire.
func (r *rush) heartbeat(s *gitstore.Store, worker string) func() {
	every := r.ttl / 3
	if every > time.Minute {
		every = time.Minute
	}
	if every < 50*time.Millisecond {
		every = 50 * time.Millisecond
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				r.with(s).RenewLease(worker, r.ttl)
			}
		}
	}()
	return func() { close(stop); wg.Wait() }
}

// workResult is how a worker's command ended.
type workResult struct {
	exit     int
	timedOut bool
	// stalled: stopped by workers.stall_timeout.
	stalled bool
	tail    string
	errTail string // stderr alone: where a worker that gives up says why
	log     string
	// interrupted: a person stopped the rush while the worker ran.
	interrupted bool
	// notFound: the shell could not find or run the command (126, 127).
	notFound bool
	// result is the agent's own account of its run, when it printed one.
	result *agent.Result
}

func (w workResult) usage() *state.Usage {
	if w.result == nil {
		return nil
	}
	return w.result.Usage
}

// why is what the worker said when it gave up: its last stderr lines, or
// its last output when it wrote nothing to stderr.
func (w workResult) why() string {
	if w.errTail != "" {
		return w.errTail
	}
	return w.tail
}

// work runs the worker command for the task, again after each checkpoint
// (exit 2), up to workers.max_checkpoints times.
func (r *rush) work(ctx context.Context, s *gitstore.Store, t *state.Task, w *worktree.Worker) (workResult, error) {
	dir := r.runDir(t)
	if err := privateRunDir(r.s, dir); err != nil {
		return workResult{}, err
	}
	env, promptFile, taskFile := r.workerEnv(t, w)
	// What the worker could print of secrets: those of the rush's
	// environment, which its own holds, and those added to it.
	secrets := append(os.Environ(), env...)
	text, err := r.tmpl.Render(prompt.Data{Feature: r.feature, Worker: w.Name, Level: t.Level, Attempt: t.Attempts,
		Mode: "worktree", Worktree: w.Dir, Branch: w.Branch, Task: t.Spec, Done: r.doneDeps(s, t), NoteFile: r.noteFile(t),
		NoCommit: r.agentNoCommit()})
	if err != nil {
		return workResult{}, fmt.Errorf("render prompt of %s: %w", t.ID(), err)
	}
	tj, _ := json.MarshalIndent(t.Spec, "", "  ")
	if err := engine.WritePrivate(promptFile, []byte(text)); err != nil {
		return workResult{}, err
	}
	if err := engine.WritePrivate(taskFile, tj); err != nil {
		return workResult{}, err
	}
	logPath := r.s.Layout().AttemptLog(r.feature, t.ID(), t.Attempts)
	logf, err := createAttemptLog(logPath, secrets)
	if err != nil {
		return workResult{}, err
	}
	defer logf.Close()
	defer scrubNote(r.noteFile(t), secrets)
	command := r.cfg.WorkerCommand()
	if r.mode == "container" {
		command = containerCommand(r.cfg.Workers.Image, w.Dir, r.s.CommonDir, dir, env, r.cfg.Workers.PassEnv, command)
	}
	for checkpoint := 0; ; checkpoint++ {
		if r.stopping() {
			return workResult{interrupted: true, log: logPath}, nil
		}
		fmt.Fprintf(logf.Stdout, "== %s %s run %d\n", time.Now().UTC().Format(time.RFC3339), t.ID(), checkpoint+1)
		mark := proc.NewMark()
		res, err := r.runCommand(proc.Spec{Command: command, Dir: w.Dir, Env: env, Unset: engine.Withheld(r.cfg.Workers.PassEnv),
			Timeout: time.Duration(r.cfg.Workers.Timeout), Stdout: logf.Stdout, Stderr: logf.Stderr, SplitStderr: true,
			Stall: time.Duration(r.cfg.Workers.StallTimeout), Progress: worktree.Activity(r.s.CommonDir, w.Dir),
			Mark: mark, Started: func(pgid int) { recordGroup(r.s.Layout().ProcessGroup(r.feature, t.ID()), pgid, mark) }})
		if err != nil {
			return workResult{}, err
		}
		if err := logf.Flush(); err != nil {
			return workResult{}, err
		}
		wr := workResult{exit: res.ExitCode, timedOut: res.TimedOut, stalled: res.Stalled, tail: proc.LastLines(res.Tail, 3),
			errTail: proc.LastLines(res.StderrTail, 3), log: logPath, interrupted: res.Interrupted, notFound: res.NotFound()}
		if !wr.interrupted && res.ExitCode == 2 && !res.TimedOut && !res.Stalled {
			if checkpoint < r.cfg.Workers.MaxCheckpoints {
				r.g.Transition(t.ID(), fmt.Sprintf("checkpoint %d, starting %s again", checkpoint+1, w.Name))
				continue
			}
			wr.tail = fmt.Sprintf("checkpointed more than %d times", r.cfg.Workers.MaxCheckpoints)
		}
		// The agent's result object is in its output, which went to the
		// log: every run of the attempt, checkpoints included, adds up.
		if out, err := os.ReadFile(logPath); err == nil {
			wr.result = agent.Parse(out)
		}
		if wr.result != nil {
			for _, why := range wr.result.Refused {
				fmt.Fprintf(logf.Stdout, "== git-zerg: reported figures not recorded: %s\n", why)
				r.g.Transition(t.ID(), "reported figures not recorded: "+why)
			}
		}
		return wr, nil
	}
}

// agentNoCommit tells whether the workers' agent cannot commit, whatever
// command line starts it: it is the agent that cannot.
func (r *rush) agentNoCommit() bool {
	p, ok := agent.Lookup(r.cfg.Workers.Agent)
	return ok && p.NoCommit
}

// noteFile is where a task's worker may leave a note for the tasks that
// depend on it.
func (r *rush) noteFile(t *state.Task) string { return r.s.Layout().Note(r.feature, t.ID()) }

// Bounds of what a prompt says about the tasks before it: enough to go on,
// never enough to crowd out the task itself.
const (
	depSubjects = 10
	depFiles    = 40
	depNote     = 2000
)

// doneDeps tells a task what its finished dependencies did. A dependency
// whose facts cannot be read is told by its title alone: the prompt is
// help, not a gate.
func (r *rush) doneDeps(s *gitstore.Store, t *state.Task) []prompt.Dep {
	tx, err := s.View(r.feature)
	if err != nil {
		return nil
	}
	var out []prompt.Dep
	for _, id := range append(append([]string(nil), t.Spec.Dependencies...), t.Spec.SoftDependencies...) {
		d, err := tx.Task(id)
		if err != nil || d.Status != state.Done {
			continue
		}
		dep := prompt.Dep{ID: d.ID(), Title: d.Spec.Title}
		if d.Base != "" && d.Commit != "" && d.Base != d.Commit {
			if subjects, err := engine.Git(s).Fields(r.g.Context(), '\n', "log", "--format=%s", "-n", strconv.Itoa(depSubjects), d.Base+".."+d.Commit); err == nil {
				dep.Subjects = subjects
			}
			if files, err := s.ChangedPaths(plumbing.NewHash(d.Base), plumbing.NewHash(d.Commit)); err == nil {
				if len(files) > depFiles {
					files = append(files[:depFiles:depFiles], fmt.Sprintf("and %d more", len(files)-depFiles))
				}
				dep.Files = files
			}
		}
		if b, err := os.ReadFile(r.noteFile(d)); err == nil {
			note := strings.TrimSpace(proc.Scrub(string(b), os.Environ()))
			if len(note) > depNote {
				note = strings.ToValidUTF8(note[:depNote], "") + " …"
			}
			dep.Note = strings.Join(strings.Fields(note), " ")
		}
		out = append(out, dep)
	}
	return out
}

func (r *rush) runDir(t *state.Task) string {
	return engine.RunDir(r.s, r.feature, t.ID())
}

// workerEnv is the environment of a task's worker command, and of its
// verification: a check that starts a server needs the worker's ports.
func (r *rush) workerEnv(t *state.Task, w *worktree.Worker) (env []string, promptFile, taskFile string) {
	l := r.s.Layout()
	promptFile = l.Prompt(r.feature, t.ID(), t.Attempts)
	taskFile = l.TaskFile(r.feature, t.ID())
	return []string{
		"ZERG_FEATURE=" + r.feature,
		"ZERG_TASK=" + t.ID(),
		"ZERG_WORKER=" + w.Name,
		fmt.Sprintf("ZERG_LEVEL=%d", t.Level),
		fmt.Sprintf("ZERG_ATTEMPT=%d", t.Attempts),
		"ZERG_WORKTREE=" + w.Dir,
		"ZERG_BRANCH=" + w.Branch,
		"ZERG_PROMPT_FILE=" + promptFile,
		"ZERG_TASK_FILE=" + taskFile,
		"ZERG_NOTE_FILE=" + r.noteFile(t),
		fmt.Sprintf("ZERG_PORT_BASE=%d", worktree.PortBase(w.N)),
		fmt.Sprintf("ZERG_RUSH_PID=%d", os.Getpid()),
	}, promptFile, taskFile
}

// containerCommand wraps the worker command in `docker run`, the worktree
// mounted at the same path so that paths in the prompt stay true, the
// repository's git directory too (a linked worktree's .git file points
// there, and the worker commits), and the task's run directory
// (ZERG_PROMPT_FILE, ZERG_TASK_FILE) read-only. The container can write
// refs like any process of the user's; what it claims is checked all the
// same. It does not see git-zerg's own directory (an empty one is mounted
// over it): there, unlike on the host, a worker cannot read the
// repository's key and seal state of its own.
//
// The credentials passed through go by name alone (-e NAME): docker reads
// their values from its own environment, so they are not on its command
// line for any process to read.
func containerCommand(image, dir, gitDir, runDir string, env, pass []string, command string) string {
	// As the user, not root: what the worker writes in the worktree must
	// stay the user's to commit, change and delete.
	args := []string{"docker", "run", "--rm", "-i", "--user", fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()),
		"-v", dir + ":" + dir, "-v", gitDir + ":" + gitDir, "--tmpfs", gitstore.LayoutOf(gitDir).Dir(),
		"-v", runDir + ":" + runDir + ":ro", "-w", dir}
	for _, kv := range env {
		args = append(args, "-e", kv)
	}
	for _, name := range pass {
		args = append(args, "-e", name)
	}
	args = append(args, image, "sh", "-c", command)
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// settle turns the worker's exit into a transition, checked by the gates.
// The worker's next task, claimed in the same transaction when then is
// set, is returned.
func (r *rush) settle(ctx context.Context, s *gitstore.Store, t *state.Task, w *worktree.Worker, res workResult, then *engine.ClaimRequest) (*state.Task, error) {
	r.prefetch()
	over, reached := r.spend(res.usage(), r.cfg)
	if reached != nil {
		r.g.Emit(engine.Event{Type: engine.EvBudget, Text: reached.What})
	}
	if over {
		then = nil // the budget is spent: nothing new is claimed
	}
	if err := r.mgr.Check(ctx, *w); err != nil {
		var we *worktree.Error
		if !errors.As(err, &we) {
			return nil, err
		}
		return r.brokenAttempt(ctx, s, t, w, err, res, then)
	}
	// Whatever the exit, the worker's edits are kept: committed on its
	// branch (and saved under a ref when the attempt fails). What the
	// worker's ignore rules hide is left out: the verification, run on the
	// commit alone, judges without it.
	commit, err := r.commitLeftovers(ctx, t, w)
	if err != nil {
		return r.brokenAttempt(ctx, s, t, w, fmt.Errorf("worktree %s: git fails in it: %s", w.Dir, gitReason(err)), res, then)
	}
	r.putBackInfo(t, res.log)
	fail := func(reason string, block bool) (*state.Task, error) {
		if commit != "" && commit != t.Base {
			r.saveAttempt(ctx, t, commit)
		}
		ft, next, err := r.with(s).Fail(engine.Failure{Worker: w.Name, Task: t.ID(), Reason: reason, Block: block, Then: then, Usage: res.usage()})
		if err != nil {
			return nil, err
		}
		r.g.Emit(engine.Event{Type: engine.EvTransition, Task: t.ID(), Text: string(ft.Status) + ": " + reason, Status: ft.Status, Reason: reason})
		return next, nil
	}
	switch {
	case res.interrupted:
		return r.giveBack(s, t, w, commit, res.usage())
	case res.notFound:
		reason := fmt.Sprintf("worker command not found (exit %d): %s", res.exit, res.why())
		r.halt.CompareAndSwap(nil, &engine.Error{Kind: engine.Failed, What: "rush stopped: the worker command cannot run",
			Why: res.why(), Hint: "check workers.command in .zerg/config.toml, then git zerg retry " + t.ID() + " and git zerg rush --resume"})
		then = nil // the next task would fail the same way
		return fail(reason, true)
	case res.timedOut:
		return fail("worker timed out", false)
	case res.stalled:
		return fail(fmt.Sprintf("no progress for %s: no output and no change in its worktree", time.Duration(r.cfg.Workers.StallTimeout)), false)
	case res.result != nil && res.result.IsError:
		// What the agent said goes into the shared state: no secrets in it.
		msg := proc.Scrub(res.result.Message, os.Environ())
		if msg == "" {
			msg = res.why()
		}
		return fail("the agent reported an error: "+msg, false)
	case res.exit == 3:
		reason := "worker says blocked (no reason on its stderr)"
		if why := res.why(); why != "" {
			reason = "worker says blocked: " + why
		}
		return fail(reason, true)
	case res.exit == 4:
		return fail("escalation: "+res.why(), true)
	case res.exit != 0:
		return fail(fmt.Sprintf("worker exited %d: %s", res.exit, res.tail), false)
	}
	facts, err := r.with(s).WorkFacts(t, commit, gates.Worktree)
	if err != nil {
		var ce *engine.Error
		if errors.As(err, &ce) {
			return fail(ce.Error(), true)
		}
		return nil, err
	}
	facts.Worker, facts.Owner, facts.Now = w.Name, engine.Owner(s.Host(), w.Name), r.g.Time().UTC()
	tx, err := s.View(r.feature)
	if err != nil {
		return nil, err
	}
	if facts.Locks, err = tx.Locks(); err != nil {
		return nil, err
	}
	if err := gates.DoneWork(facts); err != nil {
		var ref *gates.Refusal
		if !errors.As(err, &ref) {
			return nil, err
		}
		// No commit at all is a failed attempt; work outside the task's
		// files (or on someone's lock) is refused for good.
		block := facts.NewCommit || len(t.Spec.Owned()) == 0
		return fail(strings.Join(ref.Reasons, "; "), block)
	}
	dir, err := r.verifyCheckout(ctx, w, facts.Commit)
	if err != nil {
		var ce *worktree.CheckoutError
		if errors.As(err, &ce) {
			return fail(ce.Error(), false)
		}
		return nil, err
	}
	env, _, _ := r.workerEnv(t, w)
	v, err := r.with(s).Verify(t, dir, append(env, "ZERG_WORKTREE="+dir))
	if err != nil {
		return nil, err
	}
	to, reason := gates.Outcome(gates.Worktree, v)
	if to == state.Failed && r.stopping() {
		// Cut short by the interrupt: not the work's failure.
		return r.giveBack(s, t, w, facts.Commit, res.usage())
	}
	if to == state.Failed {
		r.saveAttempt(ctx, t, facts.Commit)
	}
	final, next, err := r.with(s).RecordDone(w.Name, facts, to, reason, res.usage(), then)
	if err != nil {
		var ref *gates.Refusal
		if errors.As(err, &ref) {
			r.g.Transition(t.ID(), "claim lost: "+strings.Join(ref.Reasons, "; "))
			return nil, nil
		}
		return nil, err
	}
	if to == state.Failed {
		r.g.Transition(t.ID(), string(final.Status)+": "+reason)
	} else {
		r.g.Transition(t.ID(), "verified "+engine.ShortHash(facts.Commit))
	}
	return next, nil
}

// saveAttempt keeps a failed attempt's commit reachable, so nothing a
// worker did is lost when its branch moves on.
func (r *rush) saveAttempt(ctx context.Context, t *state.Task, commit string) {
	if _, err := r.s.SaveAttempt(ctx, r.feature, t.ID(), strconv.Itoa(t.Attempts), commit); err != nil {
		// The commit is still on the worker branch until its next reset.
		r.g.Note("%s: could not save attempt %d (%v)", t.ID(), t.Attempts, err)
	}
}

// commitLeftovers commits whatever the worker left uncommitted in its
// worktree, and returns the worktree's HEAD.
func (r *rush) commitLeftovers(ctx context.Context, t *state.Task, w *worktree.Worker) (string, error) {
	msg := fmt.Sprintf("%s: %s\n\nCommitted by git-zerg: %s left these changes uncommitted.", t.ID(), t.Spec.Title, w.Name)
	if err := r.mgr.CommitLeftovers(ctx, *w, msg); err != nil {
		return "", err
	}
	// A handle of its own: a look at a HEAD the worker controls shares
	// nothing with the rush's stores.
	ws, err := gitstore.Open(ctx, w.Dir)
	if err != nil {
		return "", err
	}
	defer ws.Drop()
	return engine.HeadCommit(ws)
}

// rescueLeftovers saves what a crashed rush left in any worker worktree of
// the feature — not only in the slots this rush will use — so that nothing
// is lost and a later cleanup has nothing to refuse.
func (r *rush) rescueLeftovers(ctx context.Context, tip string) error {
	before := time.Now()
	ws, err := r.mgr.List(ctx)
	if err != nil {
		return err
	}
	for _, w := range ws {
		// A worktree broken while the dead rush ran is mended first, so
		// that its leftovers are saved like any other's; one that cannot
		// be is moved aside whole. (One left half-made by `git worktree
		// add` was never a worker's: Add rebuilds it.)
		var rep *worktree.Repaired
		if !w.Interrupted {
			if rep, err = r.mgr.Repair(ctx, w); err != nil {
				return err
			}
		}
		if r.noteRepaired(w.Name, w.Dir, rep); rep != nil && rep.Aside != "" {
			continue
		}
		for _, p := range r.mgr.DropStaleLocks(w, before) {
			r.g.Note("%s: removed %s, left by a git process of a rush that was killed", w.Name, p)
		}
		if _, err := os.Stat(w.Dir); err != nil || w.Interrupted {
			continue // gone (git worktree prune's business) or never used (Add rebuilds it)
		}
		dirty, err := r.mgr.Dirty(ctx, w.Dir)
		if err != nil {
			r.g.Note("%s: cannot tell whether %s holds work (%v); leaving it as it is", w.Name, w.Dir, err)
			continue
		}
		if dirty {
			// A worktree that is usable but incomplete is noted when its
			// slot is first used.
			if nw, err := r.rescueSlot(ctx, w.N, tip); err != nil && nw == nil {
				return err
			}
		}
	}
	return nil
}

// rescueSlot frees a slot whose worktree holds leftovers (a crash in the
// middle of a task): they are committed and saved under a ref, then the
// worktree is reset to the level's start.
func (r *rush) rescueSlot(ctx context.Context, slot int, tip string) (*worktree.Worker, error) {
	ws, err := r.mgr.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, w := range ws {
		if w.N != slot {
			continue
		}
		head, err := r.mgr.SaveLeftovers(ctx, w, "leftovers of "+w.Name+", saved by git-zerg")
		if err != nil {
			return nil, err
		}
		// The usual case is no crash: the slot's last task of this level
		// left its work pinned (verified) or saved (failed attempt), and
		// the branch only needs to start afresh.
		kept, err := r.s.SavedCommit(ctx, r.feature, head)
		if err != nil {
			return nil, err
		}
		if kept == "" {
			ref, err := r.s.SaveAttempt(ctx, r.feature, w.Name, head[:12], head)
			if err != nil {
				return nil, err
			}
			r.g.Note("%s: saved leftovers %s under %s", w.Name, engine.ShortHash(head), ref)
		}
		if err := r.mgr.ResetWorker(ctx, w, tip); err != nil {
			return nil, err
		}
		break
	}
	w, err := r.mgr.Add(ctx, slot, tip)
	if err != nil && w == nil {
		// Last resort for a branch without a worktree: its commits are in
		// no worktree to save from, so save the branch tip itself.
		if h, herr := r.mgr.BranchTip(ctx, slot); herr == nil && h != "" {
			if _, err := r.s.SaveAttempt(ctx, r.feature, workerName(slot), h[:12], h); err != nil {
				return nil, err
			}
			if err := r.mgr.ResetBranch(ctx, slot, tip); err != nil {
				return nil, err
			}
			return r.mgr.Add(ctx, slot, tip)
		}
		return nil, err
	}
	return w, nil
}

// releaseOwn gives back, without counting an attempt, every claim this
// rush still holds when it stops on an error of its own: a failure of the
// tool is no task's failure, and must not leave claims that only lease
// expiry would free.
func (r *rush) releaseOwn() {
	tx, err := r.s.View(r.feature)
	if err != nil {
		return
	}
	ws, err := tx.Workers()
	if err != nil {
		return
	}
	for _, w := range ws {
		if w.PID == os.Getpid() && r.s.Host().Holds(w) {
			if _, err := r.g.Interrupt(w.Name, w.Task, nil); err == nil {
				r.g.Transition(w.Task, "given back, the attempt not counted: the rush stopped on an error")
			}
		}
	}
}

// takeBack returns the claims of a dead rush of this host (dead, or every
// one that is gone when nil) to pending, killing first what their workers
// left running.
func takeBack(g *engine.Engine, dead *engine.RushHolder) error {
	l := g.Store.Layout()
	return g.TakeBack(dead, func(w *state.Worker) { killRecordedGroup(l.ProcessGroup(g.Feature, w.Task)) })
}

// recordGroup notes a worker's process group with its leader's start time
// and the mark of its processes, for a later rush to kill what a dead one
// left running, in the group and out of it.
func recordGroup(path string, pgid int, mark string) {
	start := proc.StartTime(pgid)
	if start == "" {
		start = "-" // unknown (the leader exited): the mark stays the third field
	}
	os.WriteFile(path, []byte(fmt.Sprintf("%d %s %s\n", pgid, start, mark)), 0o600)
}

// killRecordedGroup kills a recorded worker process group, unless its id
// now names another process (a reboot, a wrapped pid counter). A group
// whose leader is gone is still ours: Linux does not hand out an id while
// a group of that id has members.
func killRecordedGroup(path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return
	}
	pgid, err := strconv.Atoi(f[0])
	if err != nil {
		return
	}
	if len(f) > 2 {
		// Bearing the worker's mark, what it detached is its own,
		// whatever the group's leader became.
		defer proc.EndMarked(f[2])
	}
	if now := proc.StartTime(pgid); now != "" && (len(f) < 2 || f[1] != now) {
		return // another process has this id now
	}
	// TERM first: an agent may save its session; the grace is short.
	proc.EndGroup(pgid, 0)
}

// stopDeadRush ends what a dead rush of the feature left running on this
// host and takes its claims back, so that its worktrees can be reused or
// removed with nothing still writing into them.
func stopDeadRush(g *engine.Engine, dead *engine.RushHolder) error {
	l := g.Store.Layout()
	ents, _ := os.ReadDir(l.RunFeature(g.Feature))
	for _, e := range ents {
		killRecordedGroup(l.ProcessGroup(g.Feature, e.Name()))
	}
	return takeBack(g, dead)
}

// processIn names a process whose working directory is dir or below it,
// "" when none is (or when the system does not say).
func processIn(dir string) string {
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return ""
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return ""
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil {
			continue
		}
		if cwd == dir || strings.HasPrefix(cwd, dir+string(filepath.Separator)) {
			if f := proc.StatFields(pid); len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
				continue
			}
			return strconv.Itoa(pid)
		}
	}
	return ""
}

// summary records how the rush ended and returns its verdict.
func (r *rush) summary() error {
	tasks, err := r.snapshot(r.s)
	if err != nil {
		return err
	}
	counts := engine.CountStatuses(tasks)
	end := engine.Event{Type: engine.EvRushEnd, Tasks: tasks, Text: "ended: " + engine.CountsLine(counts)}
	if counts[string(state.Done)] == len(tasks) {
		end.Text = "complete"
	}
	if err := r.stopErr(); err != nil {
		end.Reason = err.Error()
	}
	defer r.g.Emit(end)
	r.result = &Result{Feature: r.feature, Tasks: len(tasks), Counts: counts, Staging: worktree.StagingBranch(r.feature)}
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
	what := fmt.Sprintf("rush ended with %s", engine.Plural(nblocked, "blocked task"))
	if nblocked == 0 {
		what = "rush ended with unfinished tasks"
	}
	return engine.FailedError(what, strings.Join(stuck, "; "))
}

// giveBack returns an interrupted task to pending without counting the
// attempt; what its worker made is saved under the attempt refs first.
func (r *rush) giveBack(s *gitstore.Store, t *state.Task, w *worktree.Worker, commit string, usage *state.Usage) (*state.Task, error) {
	if commit != "" && commit != t.Base {
		r.saveAttempt(r.g.Context(), t, commit)
	}
	if _, err := r.with(s).Interrupt(w.Name, t.ID(), usage); err != nil {
		return nil, err
	}
	if r.stopped.Load() {
		r.g.Transition(t.ID(), "interrupted: given back, the attempt not counted")
	} else {
		r.g.Transition(t.ID(), "given back, the attempt not counted: the rush stopped")
	}
	return nil, nil
}

// with is the engine on another store: each of the rush's goroutines has
// its own, since a Store is not for concurrent use.
func (r *rush) with(s *gitstore.Store) *engine.Engine {
	return r.g.WithRun(s, r.stopCtx, r.remote != "")
}

func (r *rush) levelStart(level int, tasks []*state.Task) {
	n := 0
	for _, t := range tasks {
		if t.Level == level {
			n++
		}
	}
	r.g.Emit(engine.Event{Type: engine.EvLevelStart, Level: level, Text: fmt.Sprintf("level %d: %s", level, engine.Plural(n, "task"))})
}
