package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
)

type syncOptions struct {
	remote string
	tries  int
}

func syncCmd(e *env) *cli.Command {
	var o syncOptions
	return &cli.Command{
		Name:      "sync",
		Usage:     "share state with a remote: fetch, merge, push",
		ArgsUsage: "[REMOTE]",
		Description: "Fetches the remote's refs/zerg/* into refs/zerg-remotes/<remote>/, merges each feature's\n" +
			"state with the local one (deterministically: every machine computes the same result),\n" +
			"and pushes the result with a compare-and-swap on the remote (--force-with-lease on the\n" +
			"exact value merged, --atomic), again when the remote moved meanwhile. REMOTE defaults to\n" +
			"sync.remote, else origin. Plain git push/fetch of refs/zerg/* works too.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "tries", Value: 5, Usage: "rounds before giving up when the remote keeps moving", Destination: &o.tries},
		},
		Action: func(c *cli.Context) error {
			a, err := args(c, 0, 1)
			if err != nil {
				return err
			}
			if len(a) == 1 {
				o.remote = a[0]
			}
			return runSync(e, &o)
		},
	}
}

type syncJSON struct {
	Remote   string            `json:"remote"`
	Rounds   int               `json:"rounds"`
	Features []syncFeatureJSON `json:"features"`
	Pushed   []string          `json:"pushed"`
}

type syncFeatureJSON struct {
	Feature   string   `json:"feature"`
	Result    string   `json:"result"`
	Conflicts []string `json:"conflicts"`
}

func runSync(e *env, o *syncOptions) error {
	s, err := e.Store()
	if err != nil {
		return err
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	remote := o.remote
	if remote == "" {
		remote = cfg.Sync.Remote
	}
	if remote == "" {
		remote = "origin"
	}
	if strings.HasPrefix(remote, "-") {
		return usageErr("bad remote %q", remote)
	}
	if o.tries < 1 {
		return usageErr("--tries must be at least 1")
	}
	var report syncJSON
	for round := 1; round <= o.tries; round++ {
		report = syncJSON{Remote: remote, Rounds: round, Features: []syncFeatureJSON{}, Pushed: []string{}}
		done, err := syncRound(e, s, remote, &report)
		if err != nil {
			return err
		}
		if done {
			if e.json {
				return writeJSON(e.stdout, report)
			}
			for _, f := range report.Features {
				line := fmt.Sprintf("%s: %s", f.Feature, f.Result)
				if len(f.Conflicts) > 0 {
					line += "; " + strings.Join(f.Conflicts, "; ")
				}
				fmt.Fprintln(e.stdout, line)
			}
			fmt.Fprintf(e.stdout, "synced with %s: %s pushed\n", remote, plural(len(report.Pushed), "ref"))
			return nil
		}
		fmt.Fprintf(e.stderr, "%s moved during the sync; trying again\n", remote)
		time.Sleep(time.Duration(round*50) * time.Millisecond)
	}
	return refused("sync gave up", fmt.Sprintf("%s kept moving for %d rounds", remote, o.tries))
}

// syncRound fetches, merges, updates the local refs and pushes. done is
// false when a compare-and-swap (local or remote) lost a race.
func syncRound(e *env, s *gitstore.Store, remote string, report *syncJSON) (bool, error) {
	ctx := e.ctx
	prefix := gitstore.TrackingPrefix(remote)
	if _, err := s.Git.Run(ctx, "fetch", "--quiet", "--no-tags", "--prune", remote, "+refs/zerg/*:"+prefix+"*"); err != nil {
		return false, &cliError{code: exitFailed, what: "cannot fetch from " + remote, why: err.Error()}
	}
	remoteRefs, err := refsUnder(e, s, prefix)
	if err != nil {
		return false, err
	}
	localRefs, err := refsUnder(e, s, "refs/zerg/")
	if err != nil {
		return false, err
	}
	newLocal := map[string]string{} // ref (relative to refs/zerg/) -> merged value
	features := map[string]bool{}
	for rel := range remoteRefs {
		if f, ok := strings.CutPrefix(rel, "features/"); ok {
			features[f] = true
		}
	}
	for rel := range localRefs {
		if f, ok := strings.CutPrefix(rel, "features/"); ok {
			features[f] = true
		}
	}
	merged := map[string]plumbing.Hash{}
	for _, f := range sortedKeys(features) {
		rel := "features/" + f
		l, r := plumbing.NewHash(localRefs[rel]), plumbing.NewHash(remoteRefs[rel])
		if localRefs[rel] == "" {
			l = plumbing.ZeroHash
		}
		if remoteRefs[rel] == "" {
			r = plumbing.ZeroHash
		}
		if err := checkIncoming(ctx, s, f, l, r); err != nil {
			return false, err
		}
		res, err := s.MergeFeature(ctx, f, l, r)
		if err != nil {
			return false, err
		}
		merged[f] = res.Commit
		fj := syncFeatureJSON{Feature: f, Result: res.Kind, Conflicts: []string{}}
		for _, c := range res.Conflicts {
			fj.Conflicts = append(fj.Conflicts, fmt.Sprintf("conflict on %s: %s wins, %s lost", c.Task, c.Winner, c.Loser))
		}
		report.Features = append(report.Features, fj)
		newLocal[rel] = res.Commit.String()
	}
	// Locks: merged, then cleared of the locks whose claim was lost.
	keep := s.LockKeeper(merged)
	ll, rl := plumbing.ZeroHash, plumbing.ZeroHash
	if h := localRefs["locks"]; h != "" {
		ll = plumbing.NewHash(h)
	}
	if h := remoteRefs["locks"]; h != "" {
		rl = plumbing.NewHash(h)
	}
	lres, err := s.MergeLocks(ctx, ll, rl, keep)
	if err != nil {
		return false, err
	}
	if !lres.Commit.IsZero() {
		newLocal["locks"] = lres.Commit.String()
	}
	// Content refs (pinned work, saved attempts, gate passes) only keep
	// commits reachable: each side gets those it lacks, never overwritten.
	for rel, h := range remoteRefs {
		if !strings.HasPrefix(rel, "features/") && rel != "locks" && localRefs[rel] == "" {
			newLocal[rel] = h
		}
	}
	// Local refs first, compare-and-swap against what we merged.
	var tx strings.Builder
	tx.WriteString("start\n")
	n := 0
	for _, rel := range sortedKeys(newLocal) {
		if newLocal[rel] == localRefs[rel] {
			continue
		}
		old := localRefs[rel]
		if old == "" {
			old = plumbing.ZeroHash.String()
		}
		fmt.Fprintf(&tx, "update refs/zerg/%s %s %s\n", rel, newLocal[rel], old)
		n++
	}
	tx.WriteString("prepare\ncommit\n")
	if n > 0 {
		if _, err := s.Git.RunWith(ctx, gitcmd.Call{Stdin: strings.NewReader(tx.String())}, "update-ref", "--stdin"); err != nil {
			if gitcmd.ExitCode(err) > 0 {
				return false, nil // a local writer got there first
			}
			return false, err
		}
	}
	// Then the remote, compare-and-swap on the values we fetched.
	args := []string{"push", "--quiet", "--atomic", "--porcelain", remote}
	var refspecs []string
	all := map[string]string{}
	for rel, h := range localRefs {
		all[rel] = h
	}
	for rel, h := range newLocal {
		all[rel] = h
	}
	for _, rel := range sortedKeys(all) {
		if all[rel] == remoteRefs[rel] {
			continue
		}
		ref := "refs/zerg/" + rel
		args = append(args, "--force-with-lease="+ref+":"+remoteRefs[rel])
		refspecs = append(refspecs, all[rel]+":"+ref)
		report.Pushed = append(report.Pushed, ref)
	}
	if len(refspecs) == 0 {
		return true, nil
	}
	if _, err := s.Git.Run(ctx, append(args, refspecs...)...); err != nil {
		var ge *gitcmd.Error
		if asGitErr(err, &ge) && (strings.Contains(ge.Stderr, "stale info") || strings.Contains(ge.Stderr, "rejected") ||
			strings.Contains(ge.Stderr, "failed to push")) {
			return false, nil
		}
		return false, &cliError{code: exitFailed, what: "cannot push to " + remote, why: err.Error()}
	}
	sort.Strings(report.Pushed)
	return true, nil
}

func asGitErr(err error, target **gitcmd.Error) bool {
	ge, ok := err.(*gitcmd.Error)
	if ok {
		*target = ge
	}
	return ok
}

// refsUnder lists refs under prefix, relative to it.
func refsUnder(e *env, s *gitstore.Store, prefix string) (map[string]string, error) {
	lines, err := s.Git.Fields(e.ctx, '\n', "for-each-ref", "--format=%(objectname) %(refname)", prefix)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, l := range lines {
		h, name, ok := strings.Cut(l, " ")
		if ok {
			out[strings.TrimPrefix(name, prefix)] = h
		}
	}
	return out, nil
}

// checkIncoming refuses a history received from a remote that the gates
// would not have allowed (see fsck). It is called before anything merges.
var checkIncoming = engine.CheckIncoming
