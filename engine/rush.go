package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/proc"
	"github.com/git-zerg/git-zerg/prompt"
	"github.com/git-zerg/git-zerg/state"
)

// RushOptions are a rush's settings beyond the configuration.
type RushOptions struct {
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
}

// RushResult is how a rush ended.
type RushResult struct {
	Feature  string
	Complete bool
	Tasks    int
	Counts   map[string]int
	Staging  string // the staging branch
	Tip      string // its commit
}

// Modes a rush runs in.
const (
	ModeSubprocess = "subprocess"
	ModeContainer  = "container"
	ModeTask       = "task"
)

// Rush runs the feature to the end with parallel workers. The error, when
// the rush ran but did not finish everything, is of kind Failed; the result
// is there whenever the rush got to its end.
func (g *Engine) Rush(o RushOptions) (*RushResult, error) {
	switch o.Mode {
	case ModeSubprocess, ModeContainer:
	case "", ModeTask:
		return nil, usageErr("rush: mode %q runs through TaskBatch", o.Mode)
	default:
		return nil, usageErr("rush: unknown mode %q (subprocess, container or task)", o.Mode)
	}
	s, feature, cfg := g.Store, g.Feature, g.Config
	if o.Workers == 0 {
		o.Workers = cfg.Workers.Count
	}
	tasks, err := g.Tasks()
	if err != nil {
		return nil, err
	}
	if err := EpicHold(s, feature); err != nil {
		return nil, err
	}
	if err := g.trustedAll("rush refused", tasks); err != nil {
		return nil, err
	}
	var spent state.Usage
	for _, t := range tasks {
		u := t.Spent()
		spent.Add(&u)
	}
	if err := BudgetReached(cfg, spent); err != nil && !allDone(tasks) {
		return nil, err
	}
	tmpl, err := g.promptTemplate()
	if err != nil {
		return nil, err
	}
	if o.Remote == "" {
		o.Remote = cfg.Rush.Remote
	}
	if strings.HasPrefix(o.Remote, "-") {
		return nil, usageErr("rush: bad remote %q", o.Remote)
	}
	if o.Remote != "" {
		s.SetArbiter(o.Remote, checkCaughtUp)
		s.SetArbiterWait(time.Duration(cfg.Rush.RemoteWait))
		s.SetRepushPins(g.reviewMode() == "")
		s.Repo().OnRemoteWait(func(remote string, err error, wait time.Duration) {
			(&rush{g: g, remote: remote}).remoteWaiting(remote, err, wait)
		})
		s.Repo().OnRemoteLost(func(remote, ref string, here bool) {
			if here {
				g.noteRecreated(remote, ref)
			} else {
				g.note("remote %s had lost %s; another host re-created it from its state, merged here with this host's", remote, ref)
			}
		})
	}
	if o.Mode == ModeContainer && cfg.Workers.Image == "" {
		return nil, usageErr("rush --mode container needs workers.image in .zerg/config.toml")
	}
	if err := g.preflight(o.Mode); err != nil {
		return nil, err
	}
	marker, err := acquireRush(s, feature)
	if err != nil {
		return nil, err
	}
	defer marker.release()
	r := &rush{g: g, s: s, feature: feature, cfg: cfg, tmpl: tmpl, n: o.Workers, mode: o.Mode,
		policy: g.Policy(), ttl: g.TTL(), marker: marker, spent: spent, waitNoted: map[string]time.Time{}, remote: o.Remote}
	if n, err := g.uncommitted(); err == nil && n > 0 {
		g.note("warning: your work tree has %s not committed; the workers start from commits and will not see %s",
			Plural(n, "change"), map[bool]string{true: "it", false: "them"}[n == 1])
	}
	stopCtx, cancel := context.WithCancel(g.ctx())
	defer cancel()
	r.stopCtx, r.cancelStop = stopCtx, cancel
	g.runCtx = stopCtx
	defer func() { g.runCtx = nil }()
	defer onInterrupt(o.Interrupt, r.interrupt)()
	if marker.previous != nil && !o.Resume {
		g.note("an earlier rush (pid %d) died; continuing from the state in refs", marker.previous.PID)
	}
	// Claims of a rush of this host that is gone come back now, however it
	// ended: killed, or stopped on an error after it removed its marker.
	if err := r.takeBack(nil); err != nil {
		return nil, err
	}
	err = r.run()
	var ee *Error
	if err != nil && !errors.As(err, &ee) {
		r.releaseOwn()
	}
	return r.result, err
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

// BudgetReached is the error of a spending that reached the configured
// budget, nil while it is under.
func BudgetReached(cfg *config.Config, spent state.Usage) *Error {
	b := cfg.Budget
	hint := "raise it in .zerg/config.toml ([budget]), then git zerg rush --resume"
	switch {
	case b.MaxCostUSD > 0 && spent.CostUSD >= b.MaxCostUSD:
		return &Error{Kind: NeedsPerson, What: fmt.Sprintf("budget reached: %s of %s", state.USD(spent.CostUSD), state.USD(b.MaxCostUSD)), Hint: hint}
	case b.MaxTokens > 0 && spent.Tokens() >= b.MaxTokens:
		return &Error{Kind: NeedsPerson, What: fmt.Sprintf("budget reached: %d of %d tokens", spent.Tokens(), b.MaxTokens), Hint: hint}
	}
	return nil
}

// uncommitted counts the changes in the user's work tree (untracked files
// too) that no worker will see.
func (g *Engine) uncommitted() (int, error) {
	out, err := gitOf(g.Store).Fields(g.ctx(), 0, "status", "--porcelain", "-z", "--untracked-files=normal")
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
func (g *Engine) preflight(mode string) error {
	command := g.Config.WorkerCommand()
	if mode == ModeContainer {
		command = "docker"
	}
	if _, err := proc.LookProgram(command); err != nil {
		return &Error{Kind: Usage, What: "worker command not found", Why: err.Error(),
			Hint: "install it, or set workers.command in .zerg/config.toml"}
	}
	if _, err := gitOf(g.Store).Line(g.ctx(), "var", "GIT_COMMITTER_IDENT"); err != nil {
		return &Error{Kind: Usage, What: "no git identity for the workers' commits",
			Hint: `git config user.name "Your Name" && git config user.email you@example.com`}
	}
	return nil
}

func (g *Engine) promptTemplate() (*prompt.Template, error) {
	tmpl, err := prompt.Load(filepath.Join(g.Store.Top, ".zerg", "prompt.tmpl"))
	if err != nil {
		return nil, usageErr("bad prompt template (%v)", err)
	}
	return tmpl, nil
}

// rushMarker says which process runs a feature's rush on this host, so a
// second rush is refused and --resume can tell a dead rush from a live one.
type rushMarker struct {
	path     string
	self     rushHolder
	previous *rushHolder // a dead rush found at start, whose claims we take back
}

type rushHolder struct {
	PID     int    `json:"pid"`
	Started string `json:"started"` // process start time, against pid reuse
	Host    string `json:"host"`
	// Instance tells this clone from a copy of it (cp -r) that kept its
	// marker: there, the pid is another clone's rush, or nobody's.
	Instance string `json:"instance,omitempty"`
}

// processStart returns an identifier of when pid started (its start time in
// clock ticks since boot on Linux), "" when unknown.
func processStart(pid int) string {
	if f := procStat(pid); len(f) >= 20 {
		return f[19]
	}
	return ""
}

// procStat returns the fields of /proc/<pid>/stat after the command name
// (f[0] is the state), nil when unknown.
func procStat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// alive reports whether the holder's process still runs (same pid, same
// start time) on self, this clone's host.
func (h rushHolder) alive(self gitstore.HostIdentity) bool {
	if !self.Holds(&state.Worker{Host: h.Host, Instance: h.Instance}) || h.PID <= 0 {
		return false
	}
	if err := syscall.Kill(h.PID, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	// A killed rush stays a zombie until its parent (often init, or a
	// container's PID 1 that never reaps) waits for it: dead all the same.
	if f := procStat(h.PID); len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
		return false
	}
	if h.Started != "" {
		if st := processStart(h.PID); st != "" && st != h.Started {
			return false
		}
	}
	return true
}

func acquireRush(s *gitstore.Store, feature string) (*rushMarker, error) {
	path := s.Layout().Rush(feature)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	host := s.Host()
	self := rushHolder{PID: os.Getpid(), Started: processStart(os.Getpid()), Host: host.Name, Instance: host.Instance}
	data, _ := json.Marshal(self)
	m := &rushMarker{path: path, self: self}
	for attempt := 0; attempt < 3; attempt++ {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, werr := f.Write(data)
			f.Close()
			return m, werr
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		var prev rushHolder
		b, _ := os.ReadFile(path)
		if json.Unmarshal(b, &prev) == nil && prev.alive(host) {
			return nil, &Error{Kind: Refused, What: "rush refused",
				Why:  fmt.Sprintf("a rush of %s is already running (pid %d)", feature, prev.PID),
				Hint: "wait for it, or stop it; git zerg rush --resume takes over once it is gone"}
		}
		if json.Unmarshal(b, &prev) == nil {
			m.previous = &prev
		}
		// A dead holder: remove its marker and try again (another resumer
		// may win the O_EXCL race, and then we are refused above).
		os.Remove(path)
	}
	return nil, refused("rush refused", "could not take the rush marker")
}

func (m *rushMarker) release() {
	b, err := os.ReadFile(m.path)
	if err != nil {
		return
	}
	var h rushHolder
	if json.Unmarshal(b, &h) == nil && h.PID == m.self.PID {
		os.Remove(m.path)
	}
}

// TaskBatch is what `rush --mode task` hands the driving agent: the ready
// tasks of the lowest unfinished level, each with a suggested worker name
// and its rendered prompt.
type TaskBatch struct {
	Feature  string
	Complete bool
	Level    int
	Workers  int
	Counts   map[string]int
	Batch    []BatchTask
	// Waiting explains an empty batch: claimed tasks still running,
	// backoffs, or blocked dependencies.
	Waiting string
}

// BatchTask is one task of a TaskBatch.
type BatchTask struct {
	Task            *state.Task
	SuggestedWorker string
	Prompt          string
}

// Batch computes the ready batch for task mode. It claims nothing: the
// driving agent claims each task with the suggested worker name, runs it,
// then calls done or fail.
func (g *Engine) Batch(n int) (*TaskBatch, error) {
	feature, cfg := g.Feature, g.Config
	if n == 0 {
		n = cfg.Workers.Count
	}
	tasks, err := g.Tasks()
	if err != nil {
		return nil, err
	}
	if err := EpicHold(g.Store, feature); err != nil {
		return nil, err
	}
	if err := g.trustedAll("rush --mode task refused", tasks); err != nil {
		return nil, err
	}
	tmpl, err := g.promptTemplate()
	if err != nil {
		return nil, err
	}
	policy := g.Policy()
	now := g.now()
	counts := CountStatuses(tasks)
	out := &TaskBatch{Feature: feature, Workers: n, Counts: counts, Batch: []BatchTask{}}
	out.Complete = counts[string(state.Done)] == len(tasks)
	level := 0
	for _, t := range tasks {
		if !t.Status.Settled() && (level == 0 || t.Level < level) {
			level = t.Level
		}
	}
	out.Level = level
	busy := map[string]bool{}
	for _, t := range tasks {
		if t.Status == state.Claimed {
			busy[t.Worker] = true
		}
	}
	for _, t := range policy.ReadyOrder(tasks, now) {
		if t.Level != level || len(out.Batch) >= n {
			continue
		}
		worker := ""
		for i := 1; worker == ""; i++ {
			if w := fmt.Sprintf("w%d", i); !busy[w] {
				worker = w
				busy[w] = true
			}
		}
		text, err := tmpl.Render(prompt.Data{Feature: feature, Worker: worker, Level: t.Level, Attempt: t.Attempts + 1,
			Mode: "shared", Task: t.Spec})
		if err != nil {
			return nil, fmt.Errorf("render prompt of %s: %w", t.ID(), err)
		}
		out.Batch = append(out.Batch, BatchTask{t, worker, text})
	}
	if len(out.Batch) == 0 && !out.Complete {
		out.Waiting = WaitingFor(tasks, policy, now)
		if c := counts[string(state.Claimed)]; c > 0 {
			out.Waiting = strconv.Itoa(c) + " claimed task(s) still running; " + out.Waiting
		}
	}
	return out, nil
}

// ClaimHolderAlive reports whether the rush process that holds a claim
// still runs on self, this clone's host: a claim whose rush died here is
// taken back by the next rush --resume, whatever its lease says.
func ClaimHolderAlive(self gitstore.HostIdentity, w *state.Worker) bool {
	return rushHolder{PID: w.PID, Started: w.Started, Host: w.Host, Instance: w.Instance}.alive(self)
}

// RunDir is where a task's rush files are: its prompts, its task file,
// each attempt's log (attempt-N.log) and its worker's note.
func RunDir(s *gitstore.Store, feature, task string) string {
	return s.Layout().RunDir(feature, task)
}

// LogPath is the log of a task's attempt; attempt 0 is the latest one that
// has a log.
func (g *Engine) LogPath(task string, attempt int) (string, error) {
	tx, err := g.View()
	if err != nil {
		return "", err
	}
	if _, err := tx.Task(task); err != nil {
		return "", noTask(g.Feature, task)
	}
	l := g.Store.Layout()
	if attempt > 0 {
		p := l.AttemptLog(g.Feature, task, attempt)
		if _, err := os.Stat(p); err != nil {
			return "", &Error{Kind: Usage, What: fmt.Sprintf("no log of attempt %d of %s", attempt, task), Hint: "git zerg logs " + task + " shows the latest"}
		}
		return p, nil
	}
	ents, _ := os.ReadDir(l.RunDir(g.Feature, task))
	best := 0
	for _, e := range ents {
		if n, ok := gitstore.AttemptOf(e.Name()); ok && n > best {
			best = n
		}
	}
	if best == 0 {
		return "", &Error{Kind: Usage, What: fmt.Sprintf("%s has no worker log on this machine", task),
			Why: "logs are kept where the rush ran its worker"}
	}
	return l.AttemptLog(g.Feature, task, best), nil
}

// onInterrupt calls fn for each interrupt that arrives on ch until the
// returned stop is called.
func onInterrupt(ch <-chan struct{}, fn func()) (stop func()) {
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
