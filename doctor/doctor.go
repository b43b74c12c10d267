package doctor

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/engine/rushmarker"
	"github.com/git-zerg/git-zerg/engine/setup"
	"github.com/git-zerg/git-zerg/forge"
	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/hooks"
	"github.com/git-zerg/git-zerg/proc"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/worktree"
)

// Report is every check, in a fixed order. Its JSON is the documented
// output of `git zerg doctor --json`.
type Report struct {
	// Feature is the feature the feature checks looked at, "" for none.
	Feature string  `json:"feature"`
	OK      bool    `json:"ok"`
	Checks  []Check `json:"checks"`
}

// Options are what doctor runs on.
type Options struct {
	Ctx   context.Context
	Store *gitstore.Store
	// Feature is the feature named with -f, "" for the current one (none
	// planned is no error: the feature checks are skipped).
	Feature string
	Now     func() time.Time
	// Getenv reads the environment (the forge token, the identity).
	Getenv func(string) string
}

// Run makes every check. It only reads: git is asked questions, the state
// is read through a view, nothing is written. An error is one that keeps
// doctor from running at all (a feature named that is not planned).
func Run(o Options) (*Report, error) {
	s, ctx := o.Store, o.Ctx
	// The state is read through the same code as every command's, which
	// leaves caches behind to make the next read faster: not here.
	s.NoCacheWrites = true
	defer func() { s.NoCacheWrites = false }()
	git := engine.Git(s)
	r := &Report{}
	add := func(c Check) { r.Checks = append(r.Checks, c) }

	feature, whyNone, err := resolve(o)
	if err != nil {
		return nil, err
	}
	r.Feature = feature

	if v, err := git.Line(ctx, "version"); err != nil {
		add(fix("git", "git version: "+err.Error(), "install git"))
	} else {
		add(checkGitVersion(v, setup.MinGit, setup.GitVersion))
	}
	add(checkIdentity(identity(ctx, git, o.Getenv)))

	if s.Top != "" {
		add(checkHooks("", hookFacts(ctx, git)))
	} else {
		add(skipped("hooks", "a bare repository runs no commits"))
	}

	cfg, cfgErr := engine.LoadConfig(s)
	problem := ""
	if cfgErr != nil {
		problem = engine.Classify(cfgErr).Error()
		whyNone = "the configuration cannot be read"
	}
	present := false
	if s.Top != "" {
		_, err := os.Lstat(filepath.Join(s.Top, ".zerg", "config.toml"))
		present = err == nil
	}
	add(checkConfig(present, problem))
	g := &engine.Engine{Ctx: ctx, Store: s, Config: cfg, Feature: feature, Now: o.Now}
	if feature != "" && cfgErr == nil {
		var checks []Check
		ws, err := g.Manager().List(ctx)
		if err != nil {
			add(fix("worker-hooks", "cannot list the worker worktrees: "+err.Error(), "git worktree prune, then git zerg doctor again"))
		} else {
			for _, w := range ws {
				if w.Dir == "" || w.Interrupted {
					continue
				}
				checks = append(checks, checkHooks(w.Dir, hookFacts(ctx, &gitcmd.Runner{Dir: w.Dir})))
			}
			add(checkWorkerHooks(checks))
		}
	} else {
		add(skipped("worker-hooks", whyNone))
	}

	if cfgErr != nil {
		for _, name := range []string{"worker-command", "worker-script", "forge-token"} {
			add(skipped(name, whyNone))
		}
	} else {
		add(commandCheck(g))
		script := proc.LocalScript(cfg.WorkerCommand())
		if err := engine.ScriptCommitted(g, script); err != nil {
			ee := engine.Classify(err)
			add(checkWorkerScript(script, ee.Error(), ee.Hint))
		} else {
			add(checkWorkerScript(script, "", ""))
		}
		add(checkForgeToken(forgeFacts(cfg, s, feature, o.Getenv)))
	}

	add(locksCheck(g, o.Now()))
	add(checkStaging(stagingFacts(ctx, s, git, feature, cfg == nil || cfg.Rush.FollowBase)))
	add(trustCheck(s, feature))

	r.OK = true
	for _, c := range r.Checks {
		r.OK = r.OK && c.OK
	}
	return r, nil
}

// resolve picks the feature the feature checks look at: the one named,
// else the current one; none planned, or several and none chosen, is
// said in whyNone.
func resolve(o Options) (feature, whyNone string, err error) {
	s := o.Store
	if o.Feature != "" {
		f, err := engine.ResolveFeature(o.Feature, func() (*gitstore.Store, error) { return s, nil })
		if err != nil {
			return "", "", err
		}
		if _, err := engine.ViewFeature(s, f); err != nil {
			return "", "", err
		}
		return f, "", nil
	}
	f, err := engine.ResolveFeature("", func() (*gitstore.Store, error) { return s, nil })
	if err != nil {
		ee := engine.Classify(err)
		if ee.Kind != engine.Usage {
			return "", "", err
		}
		why := "no feature planned"
		if ee.What != why {
			why = ee.Error() + " (-f FEATURE picks one)"
		}
		return "", why, nil
	}
	if _, err := engine.ViewFeature(s, f); err != nil {
		return "", "no feature planned (" + f + " is not)", nil
	}
	return f, "", nil
}

// identity is the name and email git makes commits with, from its
// configuration or, as git also takes them, the environment.
func identity(ctx context.Context, git *gitcmd.Runner, getenv func(string) string) (name, email string) {
	first := func(keys []string, vars ...string) string {
		for _, v := range vars {
			if x := getenv(v); x != "" {
				return x
			}
		}
		for _, k := range keys {
			if x, err := git.Line(ctx, "config", "--get", k); err == nil && x != "" {
				return x
			}
		}
		return ""
	}
	name = first([]string{"committer.name", "user.name"}, "GIT_COMMITTER_NAME")
	email = first([]string{"committer.email", "user.email"}, "GIT_COMMITTER_EMAIL", "EMAIL")
	return name, email
}

// hookFacts reads where git runs hooks from in the work tree git is at,
// and each of git-zerg's hooks there.
func hookFacts(ctx context.Context, git *gitcmd.Runner) HookFacts {
	var f HookFacts
	loc, err := hooks.Locate(ctx, git)
	if err != nil {
		loc.Dir = "(" + err.Error() + ")"
	}
	f.Loc = loc
	hs, _ := hooks.Status(loc.Dir)
	for _, h := range hs {
		hf := HookFile{Name: h.Name, Path: h.Path, State: h.State, Binary: h.Binary}
		if fi, err := os.Stat(h.Path); err == nil {
			hf.Executable = fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
		}
		hf.Runs = h.Binary == "" || executable(h.Binary)
		if !hf.Runs {
			_, err := exec.LookPath("git-zerg")
			hf.Runs = err == nil
		}
		f.Files = append(f.Files, hf)
	}
	if loc.Default != "" && loc.Dir != loc.Default {
		if old, err := hooks.Status(loc.Default); err == nil {
			for _, h := range old {
				f.OursAtDefault = f.OursAtDefault || h.State == hooks.Installed
			}
		}
	}
	return f
}

func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

func commandCheck(g *engine.Engine) Check {
	cfg := g.Config
	f := CommandFacts{Command: cfg.Workers.Command, Agent: cfg.Workers.Agent, Runs: cfg.WorkerCommand()}
	if f.Runs != "" {
		f.Program, f.Err = proc.LookProgram(f.Runs)
	}
	return checkWorkerCommand(f)
}

// forgeFacts: a forge is configured when a forge setting is set, or the
// feature's tasks carry issues (planned from them).
func forgeFacts(cfg *config.Config, s *gitstore.Store, feature string, getenv func(string) string) ForgeFacts {
	f := ForgeFacts{Reads: forge.TokenVars}
	switch {
	case cfg.Forge.Repo != "":
		f.Why = "forge.repo = " + cfg.Forge.Repo
	case cfg.Forge.Review != "":
		f.Why = "forge.review = " + cfg.Forge.Review
	case cfg.Forge.RequireIssue:
		f.Why = "forge.require_issue"
	case cfg.Forge.API != "":
		f.Why = "forge.api = " + cfg.Forge.API
	case feature != "":
		if tx, err := engine.ViewFeature(s, feature); err == nil {
			if tasks, err := tx.Tasks(); err == nil {
				for _, t := range tasks {
					if t.Issue() != 0 {
						f.Why = "the tasks of " + feature + " are issues"
						break
					}
				}
			}
		}
	}
	for _, v := range f.Reads {
		if getenv(v) != "" {
			f.Tokens = append(f.Tokens, v)
		}
	}
	return f
}

// locksCheck reads every stored lock, expired ones too, and the leases of
// the claims that hold them.
func locksCheck(g *engine.Engine, now time.Time) Check {
	s := g.Store
	tx, err := s.View("")
	if err != nil {
		return fix("locks", "cannot read the locks: "+err.Error(), "git zerg fsck")
	}
	locks, err := tx.Locks()
	if err != nil {
		return fix("locks", "cannot read the locks: "+err.Error(), "git zerg fsck")
	}
	dead := map[string]bool{}
	if len(locks) == 0 {
		return checkStaleLocks(nil, dead, now)
	}
	// Read only when there are locks: a clone's host identity is made on
	// first use, and a repository with locks has one already.
	self := s.Host()
	seen := map[string]bool{}
	for _, l := range locks {
		if l.Feature == "" || seen[l.Feature] {
			continue
		}
		seen[l.Feature] = true
		ftx, err := engine.ViewFeature(s, l.Feature)
		if err != nil {
			continue
		}
		ws, err := ftx.Workers()
		if err != nil {
			continue
		}
		for _, w := range ws {
			if workerGone(self, w, now) {
				dead[w.Owner] = true
			}
		}
	}
	return checkStaleLocks(locks, dead, now)
}

// workerGone: the claim's rush ran on this host and no longer does, or
// its lease ran out.
func workerGone(self gitstore.HostIdentity, w *state.Worker, now time.Time) bool {
	if !w.Expires.IsZero() && !now.Before(w.Expires) {
		return true
	}
	return self.Holds(w) && w.PID > 0 && !rushmarker.ClaimHolderAlive(self, w)
}

func stagingFacts(ctx context.Context, s *gitstore.Store, git *gitcmd.Runner, feature string, follows bool) StagingFacts {
	f := StagingFacts{Feature: feature, Follows: follows}
	if feature == "" {
		return f
	}
	f.Branch = worktree.StagingBranch(feature)
	tip, err := s.ReadRef("refs/heads/" + f.Branch)
	if err != nil || tip.IsZero() {
		return f
	}
	f.Exists = true
	// The branch staging follows (its upstream) when a rush set one,
	// else the one checked out, which the first rush would follow.
	if f.Base, f.Behind = engine.StagingBehind(ctx, s, feature); f.Base != "" {
		return f
	}
	f.Base = engine.CurrentBranch(s)
	if f.Base == "" {
		return f
	}
	if n, err := git.Line(ctx, "rev-list", "--count", tip.String()+"..HEAD"); err == nil {
		f.Behind, _ = strconv.Atoi(n)
	}
	return f
}

func trustCheck(s *gitstore.Store, feature string) Check {
	if feature == "" {
		return checkTrust("", 0, 0)
	}
	rv, err := engine.ReviewTrust(s, feature)
	if err != nil {
		var ee *engine.Error
		if errors.As(err, &ee) {
			return fix("trust", ee.Error(), "git zerg fsck")
		}
		return fix("trust", "cannot read the trust of "+feature+": "+err.Error(), "git zerg fsck")
	}
	changed := len(rv.Changed)
	if rv.Old {
		changed = len(rv.Tasks)
	}
	return checkTrust(feature, changed, len(rv.Removed))
}
