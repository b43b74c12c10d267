package main

import (
	"crypto/sha1"
	"encoding/hex"

	"errors"
	"fmt"
	"github.com/git-zerg/git-zerg/hooks"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/proc"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/worktree"
)

type mergeOptions struct{ level int }

func mergeCmd(e *env) *cli.Command {
	var o mergeOptions
	return &cli.Command{
		Name:  "merge",
		Usage: "merge verified work into staging and run the quality gates",
		Description: "Merges the pinned commits of verified tasks (of level N, or of every level) into\n" +
			"zerg/<feature>/staging with a 3-way merge that touches no work tree, then runs the\n" +
			"quality gates on the result. Exit 1 on a conflict or a failed required gate.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "level", Usage: "merge only level `N`", Destination: &o.level},
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			if c.IsSet("level") && o.level < 1 {
				return usageErr("merge: --level must be at least 1")
			}
			return runMerge(e, &o)
		},
	}
}

func gatesCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:  "gates",
		Usage: "quality gates",
		Subcommands: []*cli.Command{{
			Name:  "run",
			Usage: "run the configured quality gates on staging",
			Description: "A tree that passed the configured gates is not gated again: the pass is recorded\n" +
				"under refs/zerg/gates/<tree id>, a commit naming the gate set and each gate's result.\n" +
				"Adding or changing a gate runs them again; a failed run is kept under\n" +
				"refs/zerg/gates-failed/<tree id>.",
			Action: func(c *cli.Context) error {
				if _, err := args(c, 0, 0); err != nil {
					return err
				}
				return runGates(e)
			},
		}},
	}
}

// manager is the worktree manager of the feature, as configured.
func (e *env) manager(s *gitstore.Store, cfg *config.Config, feature string) *worktree.Manager {
	// Each feature under a root of its own: two features' worker-1 must
	// not be one worktree.
	root := cfg.Worktrees.Root
	switch {
	case root == "":
		root = worktree.DefaultRoot(s.Top, feature)
	case filepath.IsAbs(root):
		root = filepath.Join(root, filepath.FromSlash(feature))
	default:
		root = filepath.Join(s.Top, root, filepath.FromSlash(feature))
	}
	readRef := func(name string) string {
		h, err := s.ReadRef(name)
		if err != nil || h.IsZero() {
			return ""
		}
		return h.String()
	}
	return &worktree.Manager{Git: &gitcmd.Runner{Dir: s.Top}, Root: root, Feature: feature, Setup: cfg.Worktrees.Setup, ReadRef: readRef,
		Saved: savedRefs(feature)}
}

func runMerge(e *env, o *mergeOptions) error {
	s, tx, feature, err := e.view()
	if err != nil {
		return err
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	tasks, err := tx.Tasks()
	if err != nil {
		return err
	}
	if meta, err := tx.Meta(); err != nil {
		return err
	} else if o.level > len(meta.Levels) {
		return usageErr("merge: feature %s has %s", feature, plural(len(meta.Levels), "level"))
	}
	var pins []worktree.Pin
	for _, t := range tasks {
		if t.Status == state.Verified && (o.level == 0 || t.Level == o.level) {
			pins = append(pins, worktree.Pin{Task: t.ID(), Commit: t.Commit})
		}
	}
	mgr := e.manager(s, cfg, feature)
	if _, err := mgr.EnsureStaging(e.ctx, ""); errors.Is(err, worktree.ErrNoStaging) || err != nil && len(pins) == 0 {
		head, herr := headCommit(s)
		if herr != nil {
			return herr
		}
		if _, err := mgr.EnsureStaging(e.ctx, head); err != nil {
			return err
		}
	}
	out := newProgress(e, feature)
	if len(pins) == 0 {
		out.note("nothing verified to merge")
	} else {
		stop, err := mergePins(e, s, mgr, feature, policyOf(cfg), pins, out)
		if err != nil || stop != nil {
			if stop != nil {
				return stop
			}
			return err
		}
	}
	stop, err := runQualityGates(e, s, mgr, cfg, out, false)
	if err != nil {
		return err
	}
	return stop
}

func runGates(e *env) error {
	s, _, feature, err := e.view()
	if err != nil {
		return err
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	mgr := e.manager(s, cfg, feature)
	stop, err := runQualityGates(e, s, mgr, cfg, newProgress(e, feature), false)
	if err != nil {
		return err
	}
	return stop
}

// mergePins merges verified work into staging, then records verified →
// done for what merged. A conflict blocks the task that did not merge and
// stops (exit 1) naming the files; staging does not move.
func mergePins(e *env, s *gitstore.Store, mgr *worktree.Manager, feature string, policy gates.Policy, pins []worktree.Pin, out *progress) (stop error, err error) {
	res, err := fastMerge(e, s, mgr, feature, pins)
	if errors.Is(err, gitstore.ErrNotDisjoint) {
		res, err = mgr.Merge(e.ctx, "", pins)
	}
	if err != nil {
		return nil, err
	}
	if c := res.Conflict; c != nil {
		reason := "merge conflict in " + strings.Join(c.Files, ", ")
		err := s.Update(e.ctx, feature, e.now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
			x := &txn{tx: tx, now: e.now().UTC(), policy: policy}
			t, err := tx.Task(c.Task)
			if err != nil {
				return nil, err
			}
			if t.Status != state.Verified {
				return nil, nil
			}
			t = t.Clone()
			t.Record(x.event("merge", state.Blocked, t.Worker, reason, c.Commit))
			t.Reason = reason
			if err := x.releaseLocks(t); err != nil {
				return nil, err
			}
			return &gitstore.Message{Subject: fmt.Sprintf("merge %s: conflict", t.ID()), Op: "merge", Task: t.ID(),
				From: string(state.Verified), To: string(state.Blocked), Reason: reason}, tx.Put(t)
		})
		if err != nil {
			return nil, err
		}
		out.transition(c.Task, "blocked: "+reason)
		return failed(fmt.Sprintf("merge of %s into staging conflicts", c.Task), strings.Join(c.Files, ", ")), nil
	}
	merged := append(append([]string(nil), res.Merged...), res.Skipped...)
	err = s.Update(e.ctx, feature, e.now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		x := &txn{tx: tx, now: e.now().UTC(), policy: policy}
		var ids []string
		for _, id := range merged {
			t, err := tx.Task(id)
			if err != nil {
				return nil, err
			}
			// Facts, not trust: the pinned commit must be in staging now.
			if t.Status != state.Verified || !containsPin(pins, id, t.Commit) {
				continue
			}
			t = t.Clone()
			t.Record(x.event("merge", state.Done, t.Worker, "", t.Commit))
			tx.SetRef(pinRef(feature, id), "") // reachable from staging now
			if err := x.releaseLocks(t); err != nil {
				return nil, err
			}
			if err := tx.Put(t); err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
		if len(ids) == 0 {
			return nil, nil
		}
		return &gitstore.Message{Subject: fmt.Sprintf("merge %s into staging %s", strings.Join(ids, ", "), shortHash(res.Tip)),
			Op: "merge", Task: ids[0], From: string(state.Verified), To: string(state.Done)}, nil
	})
	if err != nil {
		return nil, err
	}
	for _, id := range merged {
		out.transition(id, "done (merged into staging "+shortHash(res.Tip)+")")
	}
	return nil, nil
}

// fastMerge merges a level's work in-process when it is what a level's
// work normally is: disjoint changes, all started from the staging tip.
func fastMerge(e *env, s *gitstore.Store, mgr *worktree.Manager, feature string, pins []worktree.Pin) (worktree.MergeResult, error) {
	var res worktree.MergeResult
	tip, err := mgr.EnsureStaging(e.ctx, "")
	if err != nil {
		return res, err
	}
	if err := mgr.StagingFree(e.ctx); err != nil {
		return res, err
	}
	tx, err := s.View(feature)
	if err != nil {
		return res, err
	}
	var fp []gitstore.Pin
	for _, p := range pins {
		t, err := tx.Task(p.Task)
		if err != nil {
			return res, err
		}
		fp = append(fp, gitstore.Pin{Task: p.Task, Commit: p.Commit, Base: t.Base})
	}
	name, email := worktree.IdentityName, worktree.IdentityEmail
	newTip, tree, err := s.MergeDisjoint(e.ctx, mgr.StagingRef(), tip, fp, gitstore.Signature(name, email, e.now()))
	if err != nil {
		return res, err
	}
	res = worktree.MergeResult{Old: tip, Tip: newTip, Tree: tree}
	for _, p := range pins {
		if p.Commit == tip {
			res.Skipped = append(res.Skipped, p.Task)
		} else {
			res.Merged = append(res.Merged, p.Task)
		}
	}
	return res, nil
}

func containsPin(pins []worktree.Pin, id, commit string) bool {
	for _, p := range pins {
		if p.Task == id && (p.Commit == commit || strings.HasPrefix(commit, p.Commit)) {
			return true
		}
	}
	return false
}

// savedRefs are where a rush keeps work outside the worker branches:
// verified work until it is merged, failed attempts and rescued leftovers.
func savedRefs(feature string) []string {
	return []string{"refs/zerg/work/" + feature + "/", "refs/zerg/attempts/" + feature + "/"}
}

// gatesRef records that the quality gates passed on a tree: the pre-push
// hook lets staging out only when its tree has one. It points at a commit
// of that tree whose message names the gate set and each gate's result.
func gatesRef(tree string) string { return hooks.GatesRef(tree) }

// gatesFailedRef keeps the results of the last failed run on a tree, for
// the record; it goes when the tree passes.
func gatesFailedRef(tree string) string { return "refs/zerg/gates-failed/" + tree }

// gateSet names the configured gates: a pass counts only for the set that
// passed (a gate added or changed since must run). Timeouts are left out:
// a tree that passed within a limit passed.
func gateSet(gs []config.Gate) string {
	h := sha1.New()
	for _, g := range gs {
		fmt.Fprintf(h, "%q %q %t\n", g.Name, g.Command, g.Required)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// recordedSet is the gate set a gates record was made for.
func recordedSet(s *gitstore.Store, record plumbing.Hash) string {
	c, err := object.GetCommit(s.Objects(), record)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(c.Message, "\n") {
		if v, ok := strings.CutPrefix(line, "Zerg-Gates: "); ok {
			return v
		}
	}
	return ""
}

// runQualityGates runs the configured gates on the staging tip, unless its
// tree already passed them (ZERG re-ran gates 15–30 times a rush; a tree
// that passed never needs them again). quiet leaves out the note that it
// did.
func runQualityGates(e *env, s *gitstore.Store, mgr *worktree.Manager, cfg *config.Config, out *progress, quiet bool) (stop error, err error) {
	tip, err := mgr.EnsureStaging(e.ctx, "")
	if err != nil {
		return nil, err
	}
	tree, err := s.TreeOf(tip)
	if err != nil {
		return nil, err
	}
	set := gateSet(cfg.Gates)
	if h, _ := s.ReadRef(gatesRef(tree)); !h.IsZero() && recordedSet(s, h) == set {
		if !quiet && len(cfg.Gates) > 0 {
			out.note("gates: tree %s already passed", shortHash(tree))
		}
		return nil, nil
	}
	var results, failedGates []string
	if len(cfg.Gates) > 0 {
		dir, err := mgr.StagingWorktree(e.ctx)
		if err != nil {
			return nil, err
		}
		for _, g := range cfg.Gates {
			timeout := time.Duration(g.Timeout)
			if timeout == 0 {
				timeout = time.Duration(cfg.Workers.Timeout)
			}
			res, err := proc.Run(e.ctx, proc.Spec{Command: g.Command, Dir: dir, Timeout: timeout,
				Env: []string{"ZERG_FEATURE=" + mgr.Feature, "ZERG_STAGING=" + tip}})
			if err != nil {
				return nil, err
			}
			verdict := "passed"
			switch {
			case res.TimedOut:
				verdict = "timed out"
			case res.ExitCode != 0:
				verdict = fmt.Sprintf("failed (exit %d): %s", res.ExitCode, proc.LastLines(res.Tail, 3))
			}
			req := ""
			if !g.Required {
				req = " (optional)"
			}
			took := res.Duration.Round(time.Millisecond)
			out.note("gate %s%s %s in %s", g.Name, req, verdict, took)
			results = append(results, fmt.Sprintf("Zerg-Gate: %s%s %s in %s", g.Name, req, verdict, took))
			if verdict != "passed" && g.Required {
				failedGates = append(failedGates, g.Name)
			}
		}
	}
	subject := "gates passed on tree " + tree
	if len(failedGates) > 0 {
		subject = "gates failed on tree " + tree + ": " + strings.Join(failedGates, ", ")
	}
	msg := subject + "\n\nZerg-Gates: " + set + "\n" + strings.Join(results, "\n")
	sig := gitstore.Signature(worktree.IdentityName, worktree.IdentityEmail, e.now())
	record, err := s.CommitTree(tree, []string{tip}, strings.TrimRight(msg, "\n")+"\n", sig)
	if err != nil {
		return nil, err
	}
	if len(failedGates) > 0 {
		// A pass under another gate set no longer holds: the hook must
		// refuse this tree until it passes these gates.
		if err := s.DeleteRef(e.ctx, gatesRef(tree)); err != nil {
			return nil, err
		}
		if err := s.SetRef(e.ctx, gatesFailedRef(tree), record); err != nil {
			return nil, err
		}
		return failed("quality gates failed on staging "+shortHash(tip), strings.Join(failedGates, ", ")), nil
	}
	if err := s.SetRef(e.ctx, gatesRef(tree), record); err != nil {
		return nil, err
	}
	return nil, s.DeleteRef(e.ctx, gatesFailedRef(tree))
}
