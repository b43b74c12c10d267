package remotes

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/gitstore/refs"
)

// A host of a rush shared through a remote (rush --remote) fetches and
// pushes only the refs each step needs: the feature's state and the locks
// for a transition (the arbiter's catch-up), the staging branch and the
// level's pinned work for a level merge.

// CatchUp merges the arbiter's state of feature and its locks into the
// local refs of s (checked as sync checks what it fetches), between
// transactions: a host that waits sees what the others did. Nothing
// without an arbiter.
func CatchUp(ctx context.Context, s *gitstore.Store, feature string) error {
	a := arbiterOf(s)
	if a == nil {
		return nil
	}
	mu := s.ProcessLock()
	mu.Lock()
	defer mu.Unlock()
	_, err := a.catchUp(ctx, feature)
	if errors.Is(err, refs.ErrRace) {
		return nil // a local writer moved first: the next look catches up
	}
	return err
}

// stagingTracking is where a remote's staging branch of feature is
// fetched: not under the remote's tracking prefix, which a sync prunes.
func stagingTracking(remote, feature string) string {
	return "refs/zerg-staging/" + strings.TrimPrefix(trackingPrefix(remote), "refs/zerg-remotes/") + feature
}

// FetchStaging fetches the remote's branch (a full ref name) and returns
// its commit, "" when the remote has no such branch.
func FetchStaging(ctx context.Context, gs *gitstore.Store, remote, feature, branch string) (string, error) {
	s := wrap(gs)
	track := stagingTracking(remote, feature)
	if _, err := s.git.Run(ctx, fetchArgs(remote, "+"+branch+":"+track)...); err != nil {
		var ge *gitcmd.Error
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "couldn't find remote ref") {
			return "", nil
		}
		return "", &RemoteError{Op: "fetch", Remote: remote, Err: err}
	}
	h, err := s.ReadRef(track)
	if err != nil || h.IsZero() {
		return "", err
	}
	return h.String(), nil
}

// PushStaging moves the remote's branch from old ("" for none yet) to
// commit, by compare-and-swap. lost says another host moved it first.
func PushStaging(ctx context.Context, gs *gitstore.Store, remote, branch, commit, old string) (lost bool, err error) {
	s := wrap(gs)
	_, err = s.git.Run(ctx, "push", "--quiet", "--porcelain", "--no-verify", remote,
		"--force-with-lease="+branch+":"+old, commit+":"+branch)
	if err == nil {
		return false, nil
	}
	if pushLost(err) {
		return true, nil
	}
	return false, &RemoteError{Op: "push", Remote: remote, Err: err}
}

// FetchWork brings the commits of the named refs under refs/zerg/work/
// from remote, those whose commit this repository lacks, into the remote's
// tracking refs: the local pins stay what this host pinned.
func FetchWork(ctx context.Context, gs *gitstore.Store, remote string, refs map[string]string) error {
	s := wrap(gs)
	var specs []string
	for ref, commit := range refs {
		if !strings.HasPrefix(ref, gitstore.WorkPrefix) || !plumbing.IsHash(commit) || s.HasObject(plumbing.NewHash(commit)) {
			continue
		}
		specs = append(specs, "+"+ref+":"+trackingPrefix(remote)+strings.TrimPrefix(ref, gitstore.ZergPrefix))
	}
	if len(specs) == 0 {
		return nil
	}
	if _, err := s.git.Run(ctx, fetchArgs(remote, specs...)...); err != nil {
		var ge *gitcmd.Error
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "couldn't find remote ref") {
			// Answered: the pin is gone (merged and dropped meanwhile).
			return fmt.Errorf("fetch work from %s: %w", remote, err)
		}
		return &RemoteError{Op: "fetch", Remote: remote, Err: err}
	}
	return nil
}

// PushRefs pushes refs under refs/zerg/ that only keep commits reachable
// (gate records; deletes as empty values), in one push that is not atomic:
// one that fails does not hold back the others, and nothing depends on them.
func PushRefs(ctx context.Context, gs *gitstore.Store, remote string, refs map[string]string) {
	s := wrap(gs)
	var specs []string
	for ref, commit := range refs {
		if !strings.HasPrefix(ref, gitstore.ZergPrefix) {
			continue
		}
		if commit == "" {
			specs = append(specs, ":"+ref)
		} else {
			specs = append(specs, "+"+commit+":"+ref)
		}
	}
	if len(specs) > 0 {
		s.git.Run(ctx, append([]string{"push", "--quiet", "--no-verify", remote}, specs...)...)
	}
}

// fetchArgs is the command line of every fetch of state and work: quiet,
// no tags, and none of the side work a fetch does for a person (FETCH_HEAD,
// a background maintenance process): a rush fetches hundreds of times, and
// the fetched refs are all it wants.
func fetchArgs(remote string, specs ...string) []string {
	return append([]string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-auto-maintenance", remote}, specs...)
}
