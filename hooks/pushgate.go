package hooks

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
)

// What a push may send to a non-zerg branch is judged by its commits, not
// by the name of the branch pushed: `git merge --ff-only zerg/f/staging &&
// git push origin main`, a push of the staging's sha, or a --no-ff merge of
// it send a staging as surely as `git push origin zerg/f/staging:main`.
//
// The rule: among the commits the push sends, the merges git-zerg made
// into staging (two parents, "merge <task> into staging", as the level
// merge writes them in git or in-process) are staging work; each one that
// no other sent merge contains is the newest staging work the push brings,
// and its tree must have passed the quality gates here (a verified gate
// record of the configured set). A merge that a passed one contains was
// gated with it: the gates run on a batch's last merge, not on each.
//
// "Sent" is what the target branch lacks as far as this repository knows:
// the local sha's history minus the remote sha it replaces and the
// remote's tracking branches, except those under zerg/: staging pushed to
// the remote's zerg/<f>/staging (allowed ungated) has not reached any of
// its real branches by that.

// stagingMergeSubject is the first line git-zerg gives a merge of a task's
// work into staging.
func isStagingMerge(subject string, parents int) bool {
	task, ok := strings.CutPrefix(subject, "merge ")
	if !ok || parents != 2 {
		return false
	}
	task, ok = strings.CutSuffix(task, " into staging")
	return ok && task != "" && !strings.ContainsAny(task, " \t")
}

// stagingInUse reports whether staging work can be in this repository at
// all: a feature is planned, or a staging branch exists here or on a
// remote's tracking branches. Read in-process: a push with none costs no
// git process.
func stagingInUse(s *gitstore.Store) (bool, error) {
	for _, prefix := range []string{gitstore.FeaturePrefix, "refs/heads/zerg/", "refs/remotes/"} {
		refs, err := s.RefsUnder(prefix)
		if err != nil {
			return false, err
		}
		for name := range refs {
			if prefix == gitstore.FeaturePrefix || strings.HasSuffix(name, "/staging") && strings.Contains(name, "/zerg/") {
				return true, nil
			}
		}
	}
	return false, nil
}

// ungatedStaging returns a problem for each newest staging merge line l
// sends whose tree has not passed the gates of gateSet here.
func ungatedStaging(ctx context.Context, s *gitstore.Store, remote, url string, l PushLine, gateSet string) ([]Problem, error) {
	if none, err := noStagingWithin(s, remote, url, l); err != nil || none {
		return nil, err
	}
	sent, err := sentCommits(ctx, s, remote, url, l)
	if err != nil {
		return nil, err
	}
	var ps []Problem
	for _, c := range newestStaging(sent) {
		if ok, why := gatesPassed(s, c.hash, gateSet); !ok {
			if why != "" {
				why = ": " + why
			}
			ps = append(ps, Problem{Ref: refPair(l),
				What: fmt.Sprintf("sends staging work the quality gates have not passed on (commit %s, %q)%s", short(c.hash), c.subject, why),
				Hint: "run git zerg gates run on that feature's staging and push again once they pass"})
		}
	}
	return ps, nil
}

// sentWalkLimit bounds the in-process walk of a push's commits.
const sentWalkLimit = 256

// noStagingWithin answers the common push, a few commits on top of what
// the remote has, in-process: it walks back from the local sha, not past
// the remote sha it replaces nor the tips of the remote's tracking
// branches (those under zerg/ aside), at most sentWalkLimit commits. A
// walk that ends within that saw every commit the push sends (and maybe
// some the remote has by another way); true when none is a staging merge.
// Anything else (a long or new history, a staging merge met) is for git
// to list exactly. Commits are read as they are stored: git's replace
// refs and grafts, which a worker could set, change neither this walk
// nor what the push sends.
func noStagingWithin(s *gitstore.Store, remote, url string, l PushLine) (bool, error) {
	if !plumbing.IsHash(l.LocalSHA) {
		return false, nil
	}
	stops := map[plumbing.Hash]bool{}
	if !l.NewRef() && plumbing.IsHash(l.RemoteSHA) {
		stops[plumbing.NewHash(l.RemoteSHA)] = true
	}
	prefix := "refs/remotes/"
	if remote != url && remote != "" {
		prefix += remote + "/"
	}
	tracking, err := s.RefsUnder(prefix)
	if err != nil {
		return false, err
	}
	for name, h := range tracking {
		// Fewer stops than git's exclusions, never more: the walk sees at
		// least what git would list.
		if !strings.Contains(strings.TrimPrefix(name, "refs/remotes/"), "zerg/") {
			stops[h] = true
		}
	}
	seen := map[plumbing.Hash]bool{}
	queue := []plumbing.Hash{plumbing.NewHash(l.LocalSHA)}
	for len(queue) > 0 {
		h := queue[0]
		queue = queue[1:]
		if stops[h] || seen[h] {
			continue
		}
		if seen[h] = true; len(seen) > sentWalkLimit {
			return false, nil
		}
		c, err := s.ReadCommit(h)
		if err != nil {
			return false, nil // for git to say
		}
		subject, _, _ := strings.Cut(c.Message, "\n")
		if isStagingMerge(subject, len(c.ParentHashes)) {
			return false, nil
		}
		queue = append(queue, c.ParentHashes...)
	}
	return true, nil
}

// sentCommit is one commit a push sends.
type sentCommit struct {
	hash, subject string
	parents       []string
}

// sentCommits lists the commits line l sends, children before parents.
func sentCommits(ctx context.Context, s *gitstore.Store, remote, url string, l PushLine) ([]sentCommit, error) {
	// rev-list, not log: no log.* setting of the user's changes what it
	// prints. Without replace refs and grafts: a worker could set either
	// to hide a merge from the walk, and the push sends the commits as
	// they are.
	args := []string{"--no-replace-objects", "rev-list", "--topo-order", "--no-commit-header", "--format=%H %P%x09%s", l.LocalSHA, "--not"}
	if remote == url || remote == "" {
		args = append(args, "--exclude=*/zerg/*", "--remotes")
	} else {
		args = append(args, "--exclude="+remote+"/zerg/*", "--remotes="+remote)
	}
	if !l.NewRef() && hasObject(s, l.RemoteSHA) {
		args = append(args, l.RemoteSHA)
	}
	git := &gitcmd.Runner{Dir: s.Dir()}
	out, err := git.RunWith(ctx, gitcmd.Call{Env: []string{"GIT_GRAFT_FILE=" + os.DevNull}}, append(args, "--")...)
	if err != nil {
		return nil, err
	}
	var sent []sentCommit
	for _, line := range strings.Split(string(out), "\n") {
		head, subject, ok := strings.Cut(line, "\t")
		if f := strings.Fields(head); ok && len(f) > 0 {
			sent = append(sent, sentCommit{hash: f[0], subject: subject, parents: f[1:]})
		}
	}
	return sent, nil
}

// newestStaging picks the staging merges of sent (children before
// parents) that no other of them contains. A merge one of them contains
// is reached through commits sent too (were one of those on the remote,
// so would be the merge), so one pass down sent marks them all.
func newestStaging(sent []sentCommit) []sentCommit {
	contained := map[string]bool{}
	var out []sentCommit
	for _, c := range sent {
		merge := isStagingMerge(c.subject, len(c.parents))
		if merge && !contained[c.hash] {
			out = append(out, c)
		}
		if merge || contained[c.hash] {
			for _, p := range c.parents {
				contained[p] = true
			}
		}
	}
	return out
}
