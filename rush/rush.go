// Package rush runs a feature's task graph with parallel workers, each in
// a worktree of its own: the scheduler (level by level), the workers'
// processes, the level merge into staging and the quality gates, the
// coordination of hosts that share a rush through a remote (its fetches
// and pushes are rush/remote's), and cleanup.
// Its pure decisions (decide.go) take what they decide on as arguments.
// Every state change goes through the engine's commands.
package rush

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/proc"
	"github.com/git-zerg/git-zerg/prompt"
	"github.com/git-zerg/git-zerg/rush/remote"
	"github.com/git-zerg/git-zerg/rush/schedule"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
)

// Options are a rush's settings beyond the configuration.
type Options struct {
	Workers int    // 0: workers.count
	Mode    string // subprocess, container or task
	Resume  bool
	// Remote, when set (else rush.remote), shares the rush with the other
	// clones that run it through this remote (see rush_remote.go).
	Remote string
	// Interrupt delivers a person's interrupts (Ctrl-C, SIGTERM, SIGHUP):
	// the first stops the workers gracefully, saves their work and gives
	// their claims back; the next kills what is left at once.
	Interrupt <-chan struct{}
	// BeforeDone, when set (only tests set it), runs once a merge batch's
	// gates passed, just before its tasks are recorded done: the point a
	// crash test stops a rush at.
	BeforeDone func(tasks []string)
	// Idle, when set (only benchmarks set it), hears from the scheduler
	// each time it is about to wait for its next event: how many task runs
	// are going on, and whether a merge is. Nothing more could be started
	// then. The scheduler looks again when the channel it returns yields
	// (or closes), as when its timer ticks. A virtual clock goes by it: it
	// skips time forward only while every run is a worker waiting on that
	// clock and the scheduler has nothing else to do.
	Idle func(running int, merging bool) <-chan struct{}
}

// Result is how a rush ended.
type Result struct {
	Feature  string
	Complete bool
	Tasks    int
	Counts   map[string]int
	Staging  string // the staging branch
	Tip      string // its commit
	// Flow is where the rush's wall time went.
	Flow schedule.Flow
}

// Modes a rush runs in.
const (
	ModeSubprocess = "subprocess"
	ModeContainer  = "container"
	ModeTask       = "task"
)

// Run runs the feature to the end with parallel workers. The error, when
// the rush ran but did not finish everything, is of kind Failed; the result
// is there whenever the rush got to its end.
func Run(g *engine.Engine, o Options) (*Result, error) {
	spent, tmpl, err := checkRun(g, &o)
	if err != nil {
		return nil, err
	}
	s, feature, cfg := g.Store, g.Feature, g.Config
	marker, err := engine.AcquireRush(s, feature)
	if err != nil {
		return nil, err
	}
	defer marker.Release()
	r := &rush{g: g, s: s, feature: feature, cfg: cfg, tmpl: tmpl, n: o.Workers, mode: o.Mode,
		policy: g.Policy(), ttl: g.TTL(), marker: marker, waitNoted: map[string]time.Time{},
		beforeDone: o.BeforeDone, idle: o.Idle}
	r.spent = spent
	if n, err := uncommitted(g); err == nil && n > 0 {
		g.Note("warning: your work tree has %s not committed; the workers start from commits and will not see %s",
			words.Plural(n, "change"), map[bool]string{true: "it", false: "them"}[n == 1])
	}
	stopCtx, cancel := context.WithCancel(g.Context())
	defer cancel()
	r.stopCtx, r.cancelStop = stopCtx, cancel
	g = g.WithRun(g.Store, stopCtx, false)
	r.g = g
	r.link = &remote.Link{Store: s, Remote: o.Remote, Feature: feature, Ctx: g.Context(), Stop: stopCtx,
		Wait: time.Duration(cfg.Rush.RemoteWait), Repush: g.ReviewMode() == "", Flows: r.flows(), Note: g.Note}
	defer OnInterrupt(o.Interrupt, r.interrupt)()
	if marker.Previous() != nil && !o.Resume {
		g.Note("an earlier rush (pid %d) died; continuing from the state in refs", marker.Previous().PID)
	}
	if marker.Previous() != nil {
		// A gate the dead rush left running would go on writing in the
		// staging worktree this rush gates in.
		killRecordedGroup(s.Layout().GateGroup(feature))
	}
	// Claims of a rush of this host that is gone come back now, however it
	// ended: killed, or stopped on an error after it removed its marker.
	if err := takeBack(g, nil); err != nil {
		return nil, err
	}
	err = r.run()
	var ee *engine.Error
	if err != nil && !errors.As(err, &ee) {
		r.releaseOwn()
	}
	return r.result, err
}

// checkRun is what a rush checks before it takes the feature's marker:
// the mode, the tasks held by an epic, trusted and within the budget, the
// remote (shared from here on) and what the mode needs. It fills in
// o's defaults from the configuration, and returns what the tasks spent
// already and the workers' prompt template.
func checkRun(g *engine.Engine, o *Options) (state.Usage, *prompt.Template, error) {
	var spent state.Usage
	switch o.Mode {
	case ModeSubprocess, ModeContainer:
	case "", ModeTask:
		return spent, nil, engine.UsageError("rush: mode %q runs through TaskBatch", o.Mode)
	default:
		return spent, nil, engine.UsageError("rush: unknown mode %q (subprocess, container or task)", o.Mode)
	}
	s, feature, cfg := g.Store, g.Feature, g.Config
	if o.Workers == 0 {
		o.Workers = cfg.Workers.Count
	}
	tasks, err := g.Tasks()
	if err != nil {
		return spent, nil, err
	}
	if err := engine.EpicHold(s, feature); err != nil {
		return spent, nil, err
	}
	if err := g.TrustedAll("rush refused", tasks); err != nil {
		return spent, nil, err
	}
	for _, t := range tasks {
		u := t.Spent()
		spent.Add(&u)
	}
	if err := budgetReached(cfg, spent); err != nil && !allDone(tasks) {
		return spent, nil, err
	}
	tmpl, err := g.PromptTemplate()
	if err != nil {
		return spent, nil, err
	}
	if o.Remote == "" {
		o.Remote = cfg.Rush.Remote
	}
	if strings.HasPrefix(o.Remote, "-") {
		return spent, nil, engine.UsageError("rush: bad remote %q", o.Remote)
	}
	if o.Remote != "" {
		remote.Share(g, o.Remote)
	}
	if o.Mode == ModeContainer && cfg.Workers.Image == "" {
		return spent, nil, engine.UsageError("rush --mode container needs workers.image in .zerg/config.toml")
	}
	if err := preflight(g, o.Mode); err != nil {
		return spent, nil, err
	}
	return spent, tmpl, nil
}

// allDone tells a complete feature, which a reached budget does not stop:
// it has nothing left to spend on.
func allDone(tasks []*state.Task) bool {
	for _, t := range tasks {
		if t.Status != state.Done {
			return false
		}
	}
	return true
}

// budgetReached is the error of a spending that reached the configured
// budget, nil while it is under.
func budgetReached(cfg *config.Config, spent state.Usage) *engine.Error {
	b := cfg.Budget
	hint := "raise it in .zerg/config.toml ([budget]), then git zerg rush --resume"
	switch {
	case b.MaxCostUSD > 0 && spent.CostUSD >= b.MaxCostUSD:
		return &engine.Error{Kind: engine.NeedsPerson, What: fmt.Sprintf("budget reached: %s of %s", state.USD(spent.CostUSD), state.USD(b.MaxCostUSD)), Hint: hint}
	case b.MaxTokens > 0 && spent.Tokens() >= b.MaxTokens:
		return &engine.Error{Kind: engine.NeedsPerson, What: fmt.Sprintf("budget reached: %d of %d tokens", spent.Tokens(), b.MaxTokens), Hint: hint}
	}
	return nil
}

// uncommitted counts the changes in the user's work tree (untracked files
// too) that no worker will see.
func uncommitted(g *engine.Engine) (int, error) {
	out, err := engine.Git(g.Store).Fields(g.Context(), 0, "status", "--porcelain", "-z", "--untracked-files=normal")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, l := range out {
		// -z lists a rename's old path after it, without a status.
		if len(l) > 3 && l[2] == ' ' {
			n++
		}
	}
	return n, nil
}

// preflight checks, before anything is claimed, what would make every
// task fail the same way: a worker program that is not there, no identity
// for the commits workers make.
func preflight(g *engine.Engine, mode string) error {
	command := g.Config.WorkerCommand()
	if mode == ModeContainer {
		command = "docker"
	}
	if _, err := proc.LookProgram(command); err != nil {
		return &engine.Error{Kind: engine.Usage, What: "worker command not found", Why: err.Error(),
			Hint: "install it, or set workers.command in .zerg/config.toml"}
	}
	if mode != ModeContainer {
		if err := engine.ScriptCommitted(g, proc.LocalScript(command)); err != nil {
			return err
		}
	}
	if _, err := engine.Git(g.Store).Line(g.Context(), "var", "GIT_COMMITTER_IDENT"); err != nil {
		return &engine.Error{Kind: engine.Usage, What: "no git identity for the workers' commits",
			Hint: `git config user.name "Your Name" && git config user.email you@example.com`}
	}
	return nil
}

// OnInterrupt calls fn for each interrupt that arrives on ch until the
// returned stop is called (an epic rush hands its features' rushes the
// person's interrupts through it).
func OnInterrupt(ch <-chan struct{}, fn func()) (stop func()) {
	if ch == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-ch:
				fn()
			}
		}
	}()
	return func() { close(done) }
}
