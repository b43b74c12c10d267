package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/worktree"
)

type cleanupOptions struct {
	state bool
	force bool
}

func cleanupCmd(e *env) *cli.Command {
	var o cleanupOptions
	return &cli.Command{
		Name:  "cleanup",
		Usage: "remove the feature's worktrees and worker branches",
		Description: "A worktree with uncommitted changes, or a worker branch with commits that staging\n" +
			"lacks, is kept (exit 3, naming it) unless --force. The staging branch is the result\n" +
			"and is always kept. --state also deletes the feature's refs under refs/zerg/.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "state", Usage: "also delete the feature's state refs", Destination: &o.state},
			&cli.BoolFlag{Name: "force", Usage: "discard uncommitted or unmerged worker work", Destination: &o.force},
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			return runCleanup(e, &o)
		},
	}
}

func runCleanup(e *env, o *cleanupOptions) error {
	feature, s, cfg, err := e.open()
	if err != nil {
		return err
	}
	if b, err := os.ReadFile(filepath.Join(s.ZergDir(), "rush", feature+".json")); err == nil {
		var h rushHolder
		if json.Unmarshal(b, &h) == nil && h.alive() {
			return refused("cleanup refused", fmt.Sprintf("a rush of %s is running (pid %d)", feature, h.PID))
		}
	}
	ctx := e.ctx
	mgr := e.manager(s, cfg, feature)
	if o.state && !o.force {
		// --state deletes the refs that keep failed attempts and verified
		// work: refuse while they hold commits staging lacks.
		args := []string{"rev-list", "--count"}
		for _, p := range mgr.Saved {
			args = append(args, "--glob="+p+"*")
		}
		if tip, err := s.ReadRef("refs/heads/" + worktree.StagingBranch(feature)); err != nil {
			return err
		} else if !tip.IsZero() {
			args = append(args, "--not", tip.String())
		}
		if n, err := s.Git.Line(ctx, args...); err != nil {
			return err
		} else if n != "0" {
			return &cliError{code: exitRefused, what: "cleanup --state refused",
				why:  fmt.Sprintf("%s commits of failed attempts or unmerged work are kept only under %s and %s", n, mgr.Saved[0], mgr.Saved[1]),
				hint: "git zerg cleanup --state --force deletes them; git branch NAME REF keeps one"}
		}
	}
	if _, err := s.Git.Run(ctx, "worktree", "prune"); err != nil {
		return err
	}
	workers, err := mgr.List(ctx)
	if err != nil {
		return err
	}
	// Worker branches left without a worktree go too.
	branches, err := s.Git.Fields(ctx, '\n', "for-each-ref", "--format=%(refname:short)", "refs/heads/zerg/"+feature+"/")
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, w := range workers {
		seen[w.Branch] = true
	}
	for _, b := range branches {
		if f, n, ok := worktree.ParseWorkerBranch(b); ok && f == feature && !seen[b] {
			workers = append(workers, worktree.Worker{N: n, Name: workerName(n), Branch: b})
		}
	}
	var kept []string
	removed := 0
	for _, w := range workers {
		if err := mgr.Remove(ctx, w, o.force); err != nil {
			var we *worktree.Error
			if errors.As(err, &we) {
				kept = append(kept, we.Error())
				continue
			}
			return err
		}
		removed++
		if w.Dir != "" {
			fmt.Fprintf(e.stderr, "removed %s (%s)\n", w.Dir, w.Branch)
		} else {
			fmt.Fprintf(e.stderr, "deleted branch %s\n", w.Branch)
		}
	}
	// The gates' scratch checkout holds nothing of anyone's.
	staging := filepath.Join(mgr.Root, "staging")
	if _, err := os.Stat(staging); err == nil {
		if _, err := s.Git.Run(ctx, "worktree", "remove", "--force", staging); err == nil {
			fmt.Fprintf(e.stderr, "removed %s\n", staging)
		}
	}
	os.Remove(mgr.Root) // only when empty
	if len(kept) > 0 {
		return &cliError{code: exitRefused, what: "cleanup kept work that is not merged", why: strings.Join(kept, "; "),
			hint: "merge or save it, or run git zerg cleanup --force to discard it"}
	}
	if o.state {
		if err := deleteState(e, s, feature); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.stdout, "cleaned up %s: %d removed (worktrees and worker branches)\n", feature, removed)
	return nil
}

// deleteState removes the feature's refs and local files, and the locks its
// tasks hold.
func deleteState(e *env, s *gitstore.Store, feature string) error {
	ctx := e.ctx
	// The feature itself gets a tombstone: deleting its ref would not
	// last, since the next sync with a machine that has it brings it back.
	err := s.Update(ctx, feature, e.now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		if !tx.Exists() {
			return nil, nil
		}
		who := e.userIdentity()
		return &gitstore.Message{Subject: "delete " + feature, Op: "delete", Worker: who}, tx.Delete("deleted by " + who)
	})
	if err != nil {
		return err
	}
	refs, err := s.Git.Fields(ctx, '\n', "for-each-ref", "--format=%(refname)",
		"refs/zerg/work/"+feature+"/", "refs/zerg/attempts/"+feature+"/")
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, r := range refs {
		fmt.Fprintf(&b, "delete %s\n", r)
	}
	if b.Len() > 0 {
		if _, err := s.Git.RunWith(ctx, gitcmdStdin(b.String()), "update-ref", "--stdin"); err != nil {
			return err
		}
	}
	err = s.Update(ctx, "", e.now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		locks, err := tx.Locks()
		if err != nil {
			return nil, err
		}
		var keep []state.Lock
		for _, l := range locks {
			if l.Feature != feature {
				keep = append(keep, l)
			}
		}
		if len(keep) == len(locks) {
			return nil, nil
		}
		tx.SetLocks(keep)
		return &gitstore.Message{Subject: "cleanup --state " + feature + ": drop its locks", Op: "unlock"}, nil
	})
	if err != nil {
		return err
	}
	s.DropCache(feature)
	for _, p := range []string{trustFile(s, feature),
		filepath.Join(s.ZergDir(), "run", feature)} {
		os.RemoveAll(p)
	}
	if s.CurrentFeature() == feature {
		os.Remove(filepath.Join(s.ZergDir(), "feature"))
	}
	fmt.Fprintf(e.stderr, "deleted the state of %s (a tombstone on %s; %d work refs removed)\n", feature, gitstore.FeatureRef(feature), len(refs))
	return nil
}

func gitcmdStdin(s string) gitcmd.Call { return gitcmd.Call{Stdin: strings.NewReader(s)} }
