// Package fsck replays features' state histories and reports every
// transition the gates would have refused, and a state ref moved back or
// rewritten by hand. The replay itself is engine/replay's (replay.History),
// which engine also runs on the state that arrives from elsewhere before
// it is used.
package fsck

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/engine/replay"
	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/words"
)

// Report is what fsck found in one feature's history.
type Report struct {
	Feature  string
	Tip      string
	Commits  int // state commits replayed
	Problems []gates.Problem
	// Moved: the state ref moved back or was rewritten since the last
	// fsck (file SeenFile names what it saw).
	Moved    bool
	SeenFile string
}

// Features checks each feature in turn, passing each report to each as
// it is made.
func Features(g *engine.Engine, features []string, each func(*Report)) ([]*Report, error) {
	var rs []*Report
	for _, feature := range features {
		f := *g
		f.Feature = feature
		r, err := checkFeature(&f)
		if err != nil {
			return nil, err
		}
		rs = append(rs, r)
		each(r)
	}
	return rs, nil
}

// Verdict fails when any report has a problem, naming the features
// that have them.
func Verdict(rs []*Report) error {
	total := 0
	var bad []string
	for _, r := range rs {
		if len(r.Problems) > 0 {
			total += len(r.Problems)
			bad = append(bad, r.Feature)
		}
	}
	if total > 0 {
		return engine.FailedError("fsck found "+words.Plural(total, "problem"), "in feature "+strings.Join(bad, ", "))
	}
	return nil
}

// checkFeature replays the feature's state history and reports every transition
// the gates would have refused, and a state ref moved back by hand.
func checkFeature(g *engine.Engine) (*Report, error) {
	s, feature := g.Store, g.Feature
	// Before anything reads the state (a read merges lost updates back):
	// what git undid, for instance a pack-refs racing an update, is
	// reported as such.
	rolled, err := s.Rollbacks(feature)
	if err != nil {
		return nil, err
	}
	tip, err := s.ReadRef(gitstore.FeatureRef(feature))
	if err != nil {
		return nil, err
	}
	if tip.IsZero() {
		return nil, engine.NotPlanned(feature)
	}
	problems, commits, err := replay.History(g.Context(), s, feature, tip.String(), "")
	if err != nil {
		return nil, s.Damaged(g.Context(), gitstore.FeatureRef(feature), tip, err)
	}
	moved, err := checkSeen(g.Context(), s, feature, tip.String())
	if err != nil {
		return nil, err
	}
	for _, r := range rolled {
		problems = append(problems, gates.Problem{Commit: r.Commit.String(),
			Msg: fmt.Sprintf("transition %q undone by a concurrent ref update at %s; it is merged back now", r.Subject, r.When.UTC().Format(time.RFC3339))})
	}
	return &Report{Feature: feature, Tip: tip.String(), Commits: commits, Problems: append(problems, moved...),
		Moved: len(moved) > 0, SeenFile: s.Layout().Seen(feature)}, nil
}

// checkSeen compares the tip with the one the last fsck saw, kept in
// <common dir>/zerg/seen/<feature>: a state ref that no longer contains it
// was moved back, rewritten or replaced by hand (the tool only ever adds
// commits: cleanup --state leaves a tombstone, sync a merge). The file moves
// on only when nothing moved back, so the problem is reported until someone
// looks (and removes the file).
func checkSeen(ctx context.Context, s *gitstore.Store, feature, tip string) ([]gates.Problem, error) {
	file := s.Layout().Seen(feature)
	var problems []gates.Problem
	if b, err := os.ReadFile(file); err == nil {
		if was := strings.TrimSpace(string(b)); plumbing.IsHash(was) && was != tip {
			ancestor := func(a, b string) (bool, error) {
				_, err := engine.Git(s).Run(ctx, "merge-base", "--is-ancestor", a, b)
				switch gitcmd.ExitCode(err) {
				case -1:
					return err == nil, err
				case 0:
					return true, nil
				}
				// 1: not an ancestor; 128: the old tip is gone (gc'd), so
				// it is not in this history either.
				return false, nil
			}
			fwd, err := ancestor(was, tip)
			if err != nil {
				return nil, err
			}
			if !fwd {
				back, err := ancestor(tip, was)
				if err != nil {
					return nil, err
				}
				msg := fmt.Sprintf("state ref moved backwards by hand (was %s)", words.ShortHash(was))
				if !back {
					msg = fmt.Sprintf("state ref rewritten by hand: it no longer contains %s, the tip the last fsck saw", words.ShortHash(was))
				}
				problems = append(problems, gates.Problem{Commit: tip, Msg: msg})
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if len(problems) == 0 {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return nil, err
		}
		tmp := file + ".tmp"
		if err := os.WriteFile(tmp, []byte(tip+"\n"), 0o644); err != nil {
			return nil, err
		}
		if err := os.Rename(tmp, file); err != nil {
			return nil, err
		}
	}
	return problems, nil
}
