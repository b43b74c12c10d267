package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/engine/replay"
	"github.com/git-zerg/git-zerg/engine/trust"
	"github.com/git-zerg/git-zerg/gitstore"
)

// State can arrive without sync: a plain `git fetch` of refs/zerg/* moves
// the state refs to whatever the remote holds, and nothing would replay it.
// And a worker, running as the user, can write a state commit with plain
// git and move the ref to it, with the reflog message git-zerg uses. So
// before anything acts on a feature's state, its tip must be one this
// repository wrote or checked. The last tip that passed is kept in
// <common dir>/zerg/checked/<feature>, sealed with the repository's key; a
// tip that moved since is accepted cheaply when every new commit is a
// single-parent commit the store sealed here, and otherwise the new
// commits are replayed with the gates, as sync replays what it fetches
// (CheckIncoming). Neither the reflog nor a commit's message or author
// says who wrote a commit: anyone can write those.

// CheckState checks the feature's state as it is now (see CheckStateAt).
func (g *Engine) CheckState() error {
	tip, err := g.Store.ReadRef(gitstore.FeatureRef(g.Feature))
	if err != nil {
		return err
	}
	return CheckStateAt(g.Context(), g.Store, g.Feature, tip)
}

// CheckStateAt refuses (kind Refused) a state tip that holds transitions
// the gates would have refused and that this repository neither wrote nor
// checked before. A tip that passes is remembered, so each commit is
// replayed at most once.
func CheckStateAt(ctx context.Context, s *gitstore.Store, feature string, tip plumbing.Hash) error {
	if tip.IsZero() {
		return nil
	}
	last := trust.Checked(s, feature)
	if tip == last {
		return nil
	}
	if !last.IsZero() {
		// A last tip gone from the repository (gc'd after a rewrite)
		// cannot bound the replay: replay everything.
		if _, err := s.ReadCommit(last); err != nil {
			last = plumbing.ZeroHash
		}
	}
	walked, ok := writtenHere(s, tip, last)
	if ok && walked < rememberAfter {
		// Commits written here are taken again next time at the cost of
		// walking them, which is less than writing the file each time.
		return nil
	}
	if !ok {
		bad, err := replay.IllegalSince(ctx, s, feature, tip, last)
		if err != nil {
			return s.Damaged(ctx, gitstore.FeatureRef(feature), tip, err)
		}
		if len(bad) > 0 {
			hint := "git zerg fsck lists them; whoever wrote that state must repair it"
			if good := lastGood(s, feature, tip, last); !good.IsZero() {
				hint = fmt.Sprintf("git zerg fsck lists them; git update-ref %s %s puts back the last state checked here",
					gitstore.FeatureRef(feature), good)
			}
			return &Error{Kind: Refused,
				What: fmt.Sprintf("the state of %s was changed outside git-zerg (written with plain git, or fetched without sync) and holds %d illegal transition(s)", feature, len(bad)),
				Why:  strings.Join(firstFew(bad, 3), "; "), Hint: hint}
		}
	}
	// Racing writers may leave an older checked tip here: that only makes
	// the next check replay a little more.
	return trust.WriteChecked(s, feature, tip)
}

// maxWalk bounds the cheap path: past it, the replay is no dearer.
// rememberAfter is the walk past which the tip is written down.
const (
	maxWalk       = 256
	rememberAfter = 32
)

// writtenHere reports whether tip descends from last (or from nothing,
// when last is zero) by single-parent commits that the store sealed here:
// each a transition made here, walked commits in all. A merge, a commit
// that arrived by fetch or by push, or one written with plain git, says
// no, and the caller replays instead.
func writtenHere(s *gitstore.Store, tip, last plumbing.Hash) (walked int, ok bool) {
	h := tip
	for ; walked < maxWalk; walked++ {
		if h == last {
			return walked, true
		}
		c, err := s.ReadCommit(h)
		if err != nil || len(c.ParentHashes) > 1 || !s.SealedCommit(c) {
			return walked, false
		}
		if len(c.ParentHashes) == 0 {
			return walked + 1, last.IsZero()
		}
		h = c.ParentHashes[0]
	}
	return walked, false
}

// lastGood is the newest first-parent ancestor of tip that was written or
// checked here, zero when there is none: where to go back to.
func lastGood(s *gitstore.Store, feature string, tip, last plumbing.Hash) plumbing.Hash {
	h := tip
	for i := 0; i < maxWalk; i++ {
		if _, ok := writtenHere(s, h, last); ok {
			return h
		}
		c, err := s.ReadCommit(h)
		if err != nil || len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	return last
}
