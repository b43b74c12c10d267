package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/engine/replay"
	"github.com/git-zerg/git-zerg/engine/trust"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/gitstore/remotes"
	"github.com/git-zerg/git-zerg/levels"
)

// SyncResult is a finished sync: the last round's report and how many
// rounds it took.
type SyncResult struct {
	remotes.SyncReport
	Rounds int
}

// Sync shares the state with remote: fetch, check what arrived, merge,
// push, again while the remote keeps moving (at most tries rounds). The
// remote defaults to sync.remote, else origin.
func (g *Engine) Sync(remote string, tries int) (*SyncResult, error) {
	if remote == "" && g.Config != nil {
		remote = g.Config.Sync.Remote
	}
	if remote == "" {
		remote = "origin"
	}
	if strings.HasPrefix(remote, "-") {
		return nil, UsageError("bad remote %q", remote)
	}
	if tries < 1 {
		return nil, UsageError("--tries must be at least 1")
	}
	// A clone that shares state has its host identity from its first sync:
	// a copy made of it afterwards (a prepared clone copied to more
	// runners) keeps it, and is told apart as a copy, not taken for it.
	if h := g.Store.Host(); h.Err != nil {
		g.Note("warning: %v; this clone's host is its machine's name, %s", h.Err, h.Name)
	}
	for round := 1; round <= tries; round++ {
		report, done, err := remotes.SyncRound(g.Context(), g.Store, remote, CheckIncoming)
		var re *remotes.RemoteError
		if errors.As(err, &re) {
			return nil, &Error{Kind: Failed, What: re.What(), Why: re.Reason()}
		}
		if err != nil {
			return nil, err
		}
		if done {
			for _, ref := range report.Recreated {
				g.NoteRecreated(remote, ref)
			}
			return &SyncResult{SyncReport: report, Rounds: round}, nil
		}
		g.Note("%s moved during the sync; trying again", remote)
		time.Sleep(time.Duration(round*50) * time.Millisecond)
	}
	return nil, RefusedError("sync gave up", fmt.Sprintf("%s kept moving for %d rounds", remote, tries))
}

// NoteRecreated says that remote had lost ref (a state ref nothing here
// deletes, or the pin of a verified task's work) and that this host put it
// back from its own state.
func (g *Engine) NoteRecreated(remote, ref string) {
	g.Note("remote %s had lost %s; re-created from this host's state", remote, ref)
}

// CheckIncoming is what sync runs on a feature's state fetched from
// a remote, before merging it: the commits the remote has and we do not
// are replayed, and any transition the gates would have refused is
// refused here (exit 3). Work commits that are not here (made on the other
// machine, their branch not fetched) cannot be checked, and do not refuse
// the history: fsck reports them once the state is merged.
func CheckIncoming(ctx context.Context, s *gitstore.Store, feature string, local, remote plumbing.Hash) error {
	if remote.IsZero() || remote == local {
		return nil
	}
	// A feature no command here could name (nor plan) could be neither
	// managed nor cleaned up once merged: refuse it with the rest.
	if err := levels.ValidFeatureName(feature); err != nil {
		return &Error{Kind: Refused, What: fmt.Sprintf("sync refused: the remote has a feature named %q", feature),
			Why: nameProblem(err), Hint: "nothing was merged; delete refs/zerg/features/" + feature + " on the remote, or rename it there"}
	}
	bad, err := replay.IllegalSince(ctx, s, feature, remote, local)
	if err != nil {
		return err
	}
	if len(bad) == 0 {
		return nil
	}
	return &Error{Kind: Refused, What: fmt.Sprintf("sync refused: the remote's state of %s holds %d illegal transition(s)", feature, len(bad)),
		Why: strings.Join(firstFew(bad, 3), "; "), Hint: "nothing was merged; whoever wrote that state must repair it"}
}

// CheckCaughtUp, the check of every store given an arbiter, judges what
// an arbiter's catch-up brings in as sync judges what it fetches. It is
// CheckIncoming for an arbiter's catch-up, which runs
// before every transition: the local tip checked first (at no cost when
// it was written or checked here), then the arbiter's new commits replayed.
// Together they cover the arbiter's whole history, so its tip is
// remembered as checked: the transition that follows, and the next
// catch-up, replay none of it again.
func CheckCaughtUp(ctx context.Context, s *gitstore.Store, feature string, local, remote plumbing.Hash) error {
	if err := CheckStateAt(ctx, s, feature, local); err != nil {
		return err
	}
	if err := CheckIncoming(ctx, s, feature, local, remote); err != nil {
		return err
	}
	return trust.WriteChecked(s, feature, remote)
}
