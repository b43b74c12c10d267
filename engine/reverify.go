package engine

import (
	"fmt"
	"strings"

	"github.com/git-zerg/git-zerg/engine/trust"
	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
	"github.com/git-zerg/git-zerg/worktree"
)

// A task's state says "verified", but the state may come from another
// host (anyone with push access to the shared remote writes it), or from a
// worker that sealed what it wrote with a key it read. What counts is
// that the verification passed here: each pass this repository saw is
// recorded, sealed, by task, commit and command, and work without such a
// record is verified again, on a clean checkout of its commit, before it
// is merged or built on. The hosts the configuration trusts
// (sync.trusted_hosts) are taken at their word.

// trustedVerifier reports whether the configuration takes t's host at its
// word. The host is what the state says, which whoever wrote the state
// chose: trusting a host is trusting every clone that can push.
func (g *Engine) trustedVerifier(t *state.Task) bool {
	if g.Config == nil || t.Host == "" {
		return false
	}
	for _, h := range g.Config.Sync.TrustedHosts {
		if h == "*" || h == t.Host {
			return true
		}
	}
	return false
}

// verifyAgain runs t's verification on commit, in a checkout of its own,
// and records a pass.
func (g *Engine) verifyAgain(t *state.Task, commit string) (ok bool, why string, err error) {
	where := "not verified here"
	if t.Host != "" && t.Host != g.Store.Host().Name {
		where = "verified on " + t.Host
	}
	g.Note("%s: %s: running its verification here on %s", t.ID(), where, words.ShortHash(commit))
	to, reason, err := g.verifyCommit(t, commit, gates.Worktree)
	if err != nil {
		return false, "", err
	}
	if to != state.Verified {
		return false, fmt.Sprintf("%s, and its verification failed when run here on %s: %s", where, words.ShortHash(commit), strings.TrimSpace(reason)), nil
	}
	trust.RecordVerified(g.Store, g.Feature, t, commit)
	return true, "", nil
}

// Reverified returns the pins whose work passed its verification here (or
// on a trusted host), verifying again, on a clean checkout of its commit,
// the work that did not. A pin that fails is left out, and its task
// blocked with the reason: its work is not merged.
func (g *Engine) Reverified(pins []worktree.Pin) ([]worktree.Pin, error) {
	tx, err := g.View()
	if err != nil {
		return nil, err
	}
	var keep []worktree.Pin
	for _, p := range pins {
		t, err := tx.Task(p.Task)
		if err != nil {
			return nil, err
		}
		if trust.VerifiedHere(g.Store, g.Feature, t, p.Commit) || g.trustedVerifier(t) {
			keep = append(keep, p)
			continue
		}
		ok, why, err := g.verifyAgain(t, p.Commit)
		if err != nil {
			return nil, err
		}
		if ok {
			keep = append(keep, p)
			continue
		}
		if err := g.blockAtMerge(t.ID(), p.Commit, why, "not verified here"); err != nil {
			return nil, err
		}
	}
	return keep, nil
}
