package rush

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/hooks"
	"github.com/git-zerg/git-zerg/proc"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
	"github.com/git-zerg/git-zerg/worktree"
)

// Merge merges the verified work of level (0: every level) into staging,
// then runs the quality gates on the result. A conflict or a failed
// required gate is an error of kind Failed.
func Merge(g *engine.Engine, level int) error {
	tx, err := g.View()
	if err != nil {
		return err
	}
	tasks, err := tx.Tasks()
	if err != nil {
		return err
	}
	if meta, err := tx.Meta(); err != nil {
		return err
	} else if level > len(meta.Levels) {
		return engine.UsageError("merge: feature %s has %s", g.Feature, words.Plural(len(meta.Levels), "level"))
	}
	var pins []worktree.Pin
	for _, t := range tasks {
		if t.Status == state.Verified && (level == 0 || t.Level == level) {
			pins = append(pins, worktree.Pin{Task: t.ID(), Commit: t.Commit})
		}
	}
	mgr := g.Manager()
	if _, err := mgr.EnsureStaging(g.Context(), ""); errors.Is(err, worktree.ErrNoStaging) || err != nil && len(pins) == 0 {
		head, herr := engine.HeadCommit(g.Store)
		if herr != nil {
			return herr
		}
		if _, err := mgr.EnsureStaging(g.Context(), head); err != nil {
			return err
		}
	}
	if len(pins) == 0 {
		g.Note("nothing verified to merge")
	} else {
		stop, err := mergePins(g, mgr, pins)
		if err != nil || stop != nil {
			if stop != nil {
				return stop
			}
			return err
		}
	}
	stop, err := runQualityGates(g, mgr, false)
	if err != nil {
		return err
	}
	return stop
}

// RunGates runs the quality gates on staging (a tree that passed them is
// not gated again).
func RunGates(g *engine.Engine) error {
	if _, err := g.View(); err != nil {
		return err
	}
	stop, err := runQualityGates(g, g.Manager(), false)
	if err != nil {
		return err
	}
	return stop
}

// mergePins merges verified work into staging, then records verified →
// done for what merged. A conflict blocks the task that did not merge and
// stops (exit 1) naming the files; staging does not move.
func mergePins(g *engine.Engine, mgr *worktree.Manager, pins []worktree.Pin) (stop error, err error) {
	res, stop, err := mergeOnly(g, mgr, pins)
	if stop != nil || err != nil {
		return stop, err
	}
	return nil, g.RecordMerged(pins, append(append([]string(nil), res.Merged...), res.Skipped...), res.Tip)
}

// mergeOnly merges verified work into the local staging branch and
// records nothing but a conflict (the task that did not merge is blocked,
// and stop names the files).
func mergeOnly(g *engine.Engine, mgr *worktree.Manager, pins []worktree.Pin) (res worktree.MergeResult, stop error, err error) {
	s := g.Store
	if stop, err := g.RefuseFrozen(pins); stop != nil || err != nil {
		return res, stop, err
	}
	if pins, err = g.Reverified(pins); err != nil {
		return res, nil, err
	}
	if len(pins) == 0 {
		// Nothing left to merge: staging stays where it is.
		tip, err := mgr.EnsureStaging(g.Context(), "")
		if err != nil {
			return res, nil, err
		}
		tree, err := s.TreeOf(tip)
		return worktree.MergeResult{Old: tip, Tip: tip, Tree: tree}, nil, err
	}
	res, err = fastMerge(g, mgr, pins)
	if errors.Is(err, gitstore.ErrNotDisjoint) {
		// From the tip the guard let through, not wherever staging is
		// now: a move since is refused (ErrStagingMoved).
		res, err = mgr.Merge(g.Context(), res.Old, pins)
	}
	if err != nil {
		return res, nil, err
	}
	if c := res.Conflict; c != nil {
		reason := "merge conflict in " + strings.Join(c.Files, ", ")
		if err := g.BlockConflict(c.Task, c.Commit, reason); err != nil {
			return res, nil, err
		}
		return res, engine.FailedError(fmt.Sprintf("merge of %s into staging conflicts", c.Task), strings.Join(c.Files, ", ")), nil
	}
	return res, nil, nil
}

// fastMerge merges a level's work in-process when it is what a level's
// work normally is: disjoint changes, all started from the staging tip.
func fastMerge(g *engine.Engine, mgr *worktree.Manager, pins []worktree.Pin) (worktree.MergeResult, error) {
	s, feature := g.Store, g.Feature
	var res worktree.MergeResult
	tip, err := mgr.EnsureStaging(g.Context(), "")
	if err != nil {
		return res, err
	}
	res.Old = tip
	if err := mgr.StagingFree(g.Context()); err != nil {
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
	newTip, tree, err := s.MergeDisjoint(g.Context(), mgr.StagingRef(), tip, fp, gitstore.Signature(name, email, g.Time()))
	if err != nil {
		return res, err
	}
	if err := mgr.Moved(newTip); err != nil {
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

// gatesRef records that the quality gates passed on a tree: the pre-push
// hook lets staging out only when its tree has one made here. It points at
// a commit of that tree whose message names the gate set and each gate's
// result, signed (hooks.SignGateRecord).
func gatesRef(tree string) string { return gitstore.GatesRef(tree) }

// gatesFailedRef keeps the results of the last failed run on a tree, for
// the record; it goes when the tree passes.
func gatesFailedRef(tree string) string { return gitstore.GatesFailedRef(tree) }

// runQualityGates runs the configured gates on the staging tip, unless its
// tree already passed them (ZERG re-ran gates 15–30 times a rush; a tree
// that passed never needs them again). quiet leaves out the note that it
// did.
func runQualityGates(g *engine.Engine, mgr *worktree.Manager, quiet bool) (stop error, err error) {
	s, cfg := g.Store, g.Config
	tip, err := mgr.EnsureStaging(g.Context(), "")
	if err != nil {
		return nil, err
	}
	tree, err := s.TreeOf(tip)
	if err != nil {
		return nil, err
	}
	set := hooks.GateSet(cfg.Gates)
	if hooks.PassedHere(s, tree, set) {
		if !quiet && len(cfg.Gates) > 0 {
			g.Note("gates: tree %s already passed", words.ShortHash(tree))
		}
		return nil, nil
	}
	var results, failedGates []string
	start := g.Time()
	if len(cfg.Gates) > 0 {
		dir, err := mgr.StagingWorktree(g.Context())
		if err != nil {
			return nil, err
		}
		for _, gate := range cfg.Gates {
			line, failed, stop, err := runGate(g, mgr, gate, dir, tip)
			if stop != nil || err != nil {
				return stop, err
			}
			results = append(results, line)
			if failed {
				failedGates = append(failedGates, gate.Name)
			}
		}
	}
	return recordGates(g, mgr, gateRun{tip: tip, tree: tree, set: set, start: start, results: results, failed: failedGates})
}

// runGate runs one gate in the staging worktree dir and says its verdict.
// line is its line in the gate record; failed is a required gate that did
// not pass. stop is an interrupt: the tree was not judged.
func runGate(g *engine.Engine, mgr *worktree.Manager, gate config.Gate, dir, tip string) (line string, failed bool, stop, err error) {
	timeout := time.Duration(gate.Timeout)
	if timeout == 0 {
		timeout = time.Duration(g.Config.Workers.Timeout)
	}
	// A gate runs in a process group of its own, out of reach of a
	// kill of the rush's: recorded, so that the next rush ends
	// what a dead one left running in the staging worktree.
	group, mark := g.Store.Layout().GateGroup(mgr.Feature), proc.NewMark()
	res, err := proc.Run(g.RunContext(), proc.Spec{Command: gate.Command, Dir: dir, Timeout: timeout,
		Env: []string{"ZERG_FEATURE=" + mgr.Feature, "ZERG_STAGING=" + tip}, Unset: engine.Withheld(gate.PassEnv),
		Mark: mark, Started: func(pgid int) { recordGroup(group, pgid, mark) }})
	os.Remove(group)
	if err != nil {
		return "", false, nil, err
	}
	if res.Interrupted {
		// Nothing is recorded: the tree was not judged.
		return "", false, &engine.Error{Kind: engine.Interrupted, What: "interrupted while gate " + gate.Name + " ran", Why: "no gate result recorded",
			Hint: "git zerg gates run, or git zerg rush --resume, runs the gates again"}, nil
	}
	verdict := "passed"
	switch {
	case res.TimedOut:
		verdict = "timed out"
	case res.ExitCode != 0:
		verdict = fmt.Sprintf("failed (exit %d): %s", res.ExitCode, proc.LastLines(res.Tail, 3))
	}
	req := ""
	if !gate.Required {
		req = " (optional)"
	}
	took := res.Duration.Round(time.Millisecond)
	g.Note("gate %s%s %s in %s", gate.Name, req, verdict, took)
	return fmt.Sprintf("Zerg-Gate: %s%s %s in %s", gate.Name, req, verdict, took), verdict != "passed" && gate.Required, nil, nil
}

// gateRun is one run of the gates on the staging tip, to record.
type gateRun struct {
	tip, tree string
	set       string    // the gate set, as gateSet says it
	start     time.Time // on the engine's clock
	results   []string  // each gate's line in the record
	failed    []string  // the required gates that did not pass
}

// recordGates records the run's verdict on its tree as a signed gate
// record, under the ref of a pass or of a failure, the other ref deleted;
// failed gates stop the rush.
func recordGates(g *engine.Engine, mgr *worktree.Manager, run gateRun) (stop error, err error) {
	s, tree, tip, failedGates := g.Store, run.tree, run.tip, run.failed
	subject := "gates passed on tree " + tree
	if len(failedGates) > 0 {
		subject = "gates failed on tree " + tree + ": " + strings.Join(failedGates, ", ")
	}
	msg, err := hooks.SignGateRecord(s, tree, subject+"\n\nZerg-Gates: "+run.set+"\n"+hooks.GateRunLines(mgr.Feature, run.start, g.Time())+strings.Join(run.results, "\n"))
	if err != nil {
		return nil, err
	}
	sig := gitstore.Signature(worktree.IdentityName, worktree.IdentityEmail, g.Time())
	record, err := s.CommitTree(tree, []string{tip}, msg, sig)
	if err != nil {
		return nil, err
	}
	if len(failedGates) > 0 {
		// A pass under another gate set no longer holds: the hook must
		// refuse this tree until it passes these gates.
		if err := s.DeleteRef(g.Context(), gatesRef(tree)); err != nil {
			return nil, err
		}
		if err := s.SetRef(g.Context(), gatesFailedRef(tree), record); err != nil {
			return nil, err
		}
		return engine.FailedError("quality gates failed on staging "+words.ShortHash(tip), strings.Join(failedGates, ", ")), nil
	}
	if err := s.SetRef(g.Context(), gatesRef(tree), record); err != nil {
		return nil, err
	}
	return nil, s.DeleteRef(g.Context(), gatesFailedRef(tree))
}
