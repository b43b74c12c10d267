package rush

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/proc"
	"github.com/git-zerg/git-zerg/state"
)

// stops is why a rush claims nothing more, and what a person's interrupt
// reaches: a rush stops early when interrupted, when it halts (a worker
// command that cannot run) or when its budget is reached, and its worker
// processes are ended with it.
type stops struct {
	// stopCtx ends what the rush runs (workers, verifications, gates) when
	// a person interrupts it; git calls keep the engine's context, so that
	// the work can still be saved and the claims given back.
	stopCtx    context.Context
	cancelStop context.CancelFunc
	stopped    atomic.Bool
	handleMu   sync.Mutex
	handles    map[*proc.Handle]bool
	// halt, once set, is why the rush claims nothing more (a worker
	// command that does not exist fails every task the same way).
	halt atomic.Pointer[engine.Error]
	// spent is what the agents reported, this rush and before; once it
	// reaches the budget, budget holds why the rush claims nothing more.
	spentMu sync.Mutex
	spent   state.Usage
	budget  atomic.Pointer[engine.Error]
}

// stopping reports whether the rush claims nothing more: interrupted, or
// halted by a worker command that cannot run.
func (r *stops) stopping() bool {
	return r.stopped.Load() || r.halt.Load() != nil || r.budget.Load() != nil
}

// spend adds an attempt's cost and reports whether the budget of cfg is
// reached; reached is the error when this call reached it.
func (r *stops) spend(u *state.Usage, cfg *config.Config) (over bool, reached *engine.Error) {
	r.spentMu.Lock()
	r.spent.Add(u)
	total := r.spent
	r.spentMu.Unlock()
	if err := budgetReached(cfg, total); err != nil && r.budget.CompareAndSwap(nil, err) {
		reached = err
	}
	return r.budget.Load() != nil, reached
}

// stopErr is why the rush stops early, nil while it goes on.
func (r *stops) stopErr() error {
	if r.stopped.Load() {
		return &engine.Error{Kind: engine.Interrupted, What: "rush interrupted", Why: "workers stopped, their work saved, claims given back",
			Hint: "git zerg rush --resume goes on where it stopped"}
	}
	if h := r.halt.Load(); h != nil {
		return h
	}
	if b := r.budget.Load(); b != nil {
		return b
	}
	return nil
}

// interrupt is a person's Ctrl-C (or SIGTERM, SIGHUP): the first ends
// every worker's process group gracefully and claims nothing more; the
// next kills what is left at once.
func (r *rush) interrupt() {
	if r.stopped.CompareAndSwap(false, true) {
		r.g.Note("interrupted: stopping the workers and saving their work (interrupt again to kill them now)")
		r.cancelStop()
		return
	}
	r.killAll()
}

// killAll kills every worker process group at once.
func (r *stops) killAll() {
	r.handleMu.Lock()
	defer r.handleMu.Unlock()
	for h := range r.handles {
		h.Kill()
	}
}

// runCommand runs a worker command where an interrupt can reach it.
func (r *stops) runCommand(spec proc.Spec) (proc.Result, error) {
	h, err := proc.Start(r.stopCtx, spec)
	if err != nil {
		return proc.Result{}, err
	}
	r.handleMu.Lock()
	if r.handles == nil {
		r.handles = map[*proc.Handle]bool{}
	}
	r.handles[h] = true
	r.handleMu.Unlock()
	defer func() {
		r.handleMu.Lock()
		delete(r.handles, h)
		r.handleMu.Unlock()
	}()
	return h.Wait()
}
