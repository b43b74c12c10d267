// Package engine is git-zerg's core: the state machine's commands (plan,
// claim, done, fail, the transitions and their gates, trust and accept,
// locks, leases), the facts a done is judged on, the checks of state from
// elsewhere, sync, setup, logs, events and notifications. The rush
// (package rush), epics (epic), the forge flows (forge/flow) and fsck
// (fsck) are built on it, through the exported API of Engine. A command,
// a test and a second machine all drive it through one Engine value; it
// never prints, it reports Events.
package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/hooks"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/worktree"
)

// Engine is one feature's engine: the store, the configuration, a clock
// and a sink for progress. Build one per command; it holds no state of its
// own beyond what it is given.
type Engine struct {
	Ctx     context.Context
	Store   *gitstore.Store
	Config  *config.Config
	Feature string
	// Now is the clock. Tests give a fake one; subprocesses that git-zerg
	// starts read the same clock through the environment (see Clock).
	Now func() time.Time
	// Events receives progress; nil discards it.
	Events Sink

	// runCtx, when set, is what the commands the engine runs (a
	// verification, a gate) end with: a rush cancels it on an interrupt,
	// while its git calls go on under Ctx.
	runCtx context.Context
	// together lets a transition share its state commit (and its push to
	// the remote) with others of this process made at the same moment: a
	// rush's workers over a remote.
	together bool
}

// WithRun is the engine on store s whose commands (verifications, gates)
// end with run, while its git calls go on under Ctx: a rush cancels run
// on an interrupt and still saves the work. together lets its transitions
// share their state commit (and its push to the remote) with others of
// this process made at the same moment: a rush's workers over a remote.
// Each of a rush's goroutines has its own, since a Store is not for
// concurrent use.
func (g *Engine) WithRun(s *gitstore.Store, run context.Context, together bool) *Engine {
	c := *g
	c.Store, c.runCtx, c.together = s, run, together
	return &c
}

// RunContext is what the commands the engine runs end with (see WithRun).
func (g *Engine) RunContext() context.Context {
	if g.runCtx != nil {
		return g.runCtx
	}
	return g.Context()
}

// Time is the engine's clock (Now, else the wall clock).
func (g *Engine) Time() time.Time {
	if g.Now == nil {
		return time.Now()
	}
	return g.Now()
}

// Context is what the engine's git calls run under (Ctx, else
// context.Background).
func (g *Engine) Context() context.Context {
	if g.Ctx == nil {
		return context.Background()
	}
	return g.Ctx
}

// Emit reports ev, stamped with the clock and the feature, to Events.
func (g *Engine) Emit(ev Event) {
	if g.Events == nil {
		return
	}
	if ev.At.IsZero() {
		ev.At = g.Time()
	}
	if ev.Feature == "" {
		ev.Feature = g.Feature
	}
	g.Events(ev)
}

// Note emits a note.
func (g *Engine) Note(format string, args ...any) {
	g.Emit(Event{Type: EvNote, Text: fmt.Sprintf(format, args...)})
}

// Transition emits a task's transition, for a command that made it.
func (g *Engine) Transition(task, what string) {
	g.Emit(Event{Type: EvTransition, Task: task, Text: what})
}

// Policy is the retry policy the configuration asks for.
func (g *Engine) Policy() gates.Policy { return PolicyOf(g.Config) }

// PolicyOf is the retry policy of a configuration.
func PolicyOf(c *config.Config) gates.Policy {
	p := gates.DefaultPolicy
	if c == nil {
		return p
	}
	p.MaxAttempts = c.Retry.MaxAttempts
	p.Backoff = time.Duration(c.Retry.Backoff)
	if c.Retry.BackoffCap > 0 {
		p.BackoffCap = time.Duration(c.Retry.BackoffCap)
	}
	return p
}

// TTL is the lease of a claim and of its locks.
func (g *Engine) TTL() time.Duration {
	if g.Config == nil {
		return time.Duration(config.Default().Locks.TTL)
	}
	return time.Duration(g.Config.Locks.TTL)
}

// View is a read-only snapshot of the feature, refused when the state was
// changed outside git-zerg into something illegal (see CheckStateAt): what
// the engine reads, it acts on.
func (g *Engine) View() (*gitstore.Tx, error) {
	tx, err := g.Store.View(g.Feature)
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, NotPlanned(g.Feature)
	}
	if err != nil {
		return nil, err
	}
	if err := CheckStateAt(g.Context(), g.Store, g.Feature, tx.Tip()); err != nil {
		return nil, err
	}
	return tx, nil
}

// Tasks reads the feature's tasks as they are now.
func (g *Engine) Tasks() ([]*state.Task, error) {
	tx, err := g.View()
	if err != nil {
		return nil, err
	}
	return tx.Tasks()
}

// update runs one state transaction of the feature with the engine's
// clock and policy.
func (g *Engine) update(policy gates.Policy, ttl time.Duration, fn func(x *txn) (*gitstore.Message, error)) error {
	update := g.Store.Update
	if g.together {
		update = g.Store.UpdateTogether
	}
	return update(g.Context(), g.Feature, g.Time, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		// The tip this transaction builds on, not an earlier read: a
		// fetch may have moved it since.
		if err := CheckStateAt(g.Context(), g.Store, g.Feature, tx.Tip()); err != nil {
			return nil, err
		}
		return fn(&txn{tx: tx, now: g.Time().UTC(), policy: policy, ttl: ttl})
	})
}

// Owner is the lock owner identity of a worker on host.
func Owner(host gitstore.HostIdentity, worker string) string { return worker + "@" + host.Name }

// UserIdentity is who owns manual locks and approvals: the worker named by
// ZERG_WORKER when a shared-mode worker runs us, else the git user.
func (g *Engine) UserIdentity() string {
	if w := os.Getenv("ZERG_WORKER"); w != "" && g.Store != nil {
		return Owner(g.Store.Host(), w)
	}
	if g.Store != nil {
		if out, err := Git(g.Store).Line(g.Context(), "config", "--get", "user.email"); err == nil && out != "" {
			return out
		}
	}
	u := os.Getenv("USER")
	if u == "" {
		u = "user"
	}
	if g.Store == nil {
		return u
	}
	return u + "@" + g.Store.Host().Name
}

// Manager is the worktree manager of the feature, as configured.
func (g *Engine) Manager() *worktree.Manager {
	s, cfg, feature := g.Store, g.Config, g.Feature
	if cfg == nil {
		cfg = config.Default()
	}
	// Each feature under a root of its own: two features' worker-1 must
	// not be one worktree.
	root := filepath.Join(g.WorktreesRoot(), filepath.FromSlash(feature))
	readRef := func(name string) string {
		h, err := s.ReadRef(name)
		if err != nil || h.IsZero() {
			return ""
		}
		return h.String()
	}
	m := &worktree.Manager{Git: &gitcmd.Runner{Dir: s.Top}, Root: root, Feature: feature, Setup: cfg.Worktrees.Setup,
		SetupUnset: Withheld(cfg.Workers.PassEnv), ReadRef: readRef,
		Saved: savedRefs(feature), CommonDir: s.CommonDir, HooksPath: hooks.WorktreeHooksPath(s)}
	m.Guard = &stagingGuard{g: g, m: m}
	return m
}

// StagingBehind says how many commits of the branch a feature's staging
// follows it lacks, for status: the next rush takes them in (unless
// rush.follow_base is false). "" and 0 when it follows none, or on any
// error: status does not fail for it.
func StagingBehind(ctx context.Context, s *gitstore.Store, feature string) (branch string, n int) {
	m := &worktree.Manager{Git: &gitcmd.Runner{Dir: s.Top}, Feature: feature, CommonDir: s.CommonDir}
	branch, n, err := m.Behind(ctx)
	if err != nil {
		return "", 0
	}
	return branch, n
}

// WorktreesRoot is the directory under which each feature's worktrees get
// a directory of their own: worktrees.root (relative to the main work
// tree), else beside the repository, outside it, so that the user's
// checkout never sees them.
func (g *Engine) WorktreesRoot() string {
	cfg := g.Config
	if cfg == nil {
		cfg = config.Default()
	}
	switch root := cfg.Worktrees.Root; {
	case root == "":
		return worktree.DefaultBase(g.Store.Top)
	case filepath.IsAbs(root):
		return filepath.Clean(root)
	default:
		return filepath.Join(g.Store.Top, root)
	}
}

// savedRefs are where a rush keeps work outside the worker branches:
// verified work until it is merged, failed attempts and rescued leftovers.
func savedRefs(feature string) []string {
	return gitstore.SavedPrefixes(feature)
}

// HeadCommit resolves HEAD of the work tree the store was opened in,
// in-process: it runs in every claim and done.
func HeadCommit(s *gitstore.Store) (string, error) {
	b, err := os.ReadFile(filepath.Join(s.GitDir, "HEAD"))
	if err != nil {
		return "", err
	}
	head := strings.TrimSpace(string(b))
	if ref, ok := strings.CutPrefix(head, "ref: "); ok {
		h, err := s.ReadRef(ref)
		if err != nil {
			return "", err
		}
		if h.IsZero() {
			return "", &Error{Kind: Usage, What: "HEAD has no commit yet", Hint: "commit something first: work is compared with the commit it started from"}
		}
		return h.String(), nil
	}
	if plumbing.IsHash(head) {
		return head, nil
	}
	return "", fmt.Errorf("cannot read HEAD: %q", head)
}

// CurrentBranch is the branch checked out in the store's work tree, read
// without starting git: it runs on every command and in every hook.
func CurrentBranch(s *gitstore.Store) string { return gitcmd.HeadBranch(s.GitDir) }

// Task reads one task of the feature as it is now.
func (g *Engine) Task(id string) (*state.Task, error) {
	tx, err := g.View()
	if err != nil {
		return nil, err
	}
	t, err := tx.Task(id)
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, noTask(g.Feature, id)
	}
	return t, err
}

// Git runs git in the store's repository, for what only the git binary
// answers (ancestry, logs, the work tree's status); refs under refs/zerg/
// are written by gitstore alone.
func Git(s *gitstore.Store) *gitcmd.Runner { return &gitcmd.Runner{Dir: s.Dir()} }
