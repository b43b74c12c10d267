package remotes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/gitstore/refs"
	"github.com/git-zerg/git-zerg/state"
)

// SyncFeature is what a sync did with one feature's state.
type SyncFeature struct {
	Feature   string
	Result    string // MergeFeature's kind: same, fast-forward, merged, …
	Conflicts []string
}

// SyncReport is one sync round.
type SyncReport struct {
	Remote   string
	Features []SyncFeature
	Pushed   []string // refs pushed, sorted
	// Recreated are the refs the remote had lost (this clone had fetched
	// them from it, and it no longer has them) and this round pushed again
	// from the local state: the same history, so nothing is overwritten.
	Recreated []string
	// Rewound are the state refs the remote holds with a history that
	// lacks what this clone fetched from it before: the remote lost them
	// and another clone re-created them from its own state. The merge keeps
	// both sides.
	Rewound []string
}

// IncomingCheck judges a feature's state fetched from a remote before it
// merges: the engine replays its history with the gates. A non-nil error
// stops the sync with nothing merged.
type IncomingCheck func(ctx context.Context, s *gitstore.Store, feature string, local, remote plumbing.Hash) error

// RemoteError is a remote that could not be fetched from or pushed to.
type RemoteError struct {
	Op     string // "fetch" or "push"
	Remote string
	Err    error
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("%s: %s", e.What(), e.Reason())
}

// What says which remote could not be reached and for what.
func (e *RemoteError) What() string {
	dir := "from"
	if e.Op == "push" {
		dir = "to"
	}
	return fmt.Sprintf("cannot %s %s %s", e.Op, dir, e.Remote)
}

// Reason is what git said, without the command line.
func (e *RemoteError) Reason() string {
	var ge *gitcmd.Error
	if errors.As(e.Err, &ge) {
		return ge.Reason()
	}
	return e.Err.Error()
}

func (e *RemoteError) Unwrap() error { return e.Err }

// syncOptions say what one syncRound does.
type syncOptions struct {
	Remote string
	// Check judges each feature's incoming state before it merges; nil
	// merges nothing that differs (the round fails closed).
	Check IncomingCheck
	// Arbiter is the catch-up of arbiter mode (sync.arbiter, rush
	// --remote): only Feature's state and the locks are fetched and merged
	// into the local refs, nothing is pushed (the transaction that follows
	// pushes its own moves, with a lease on the values this round saw).
	Arbiter bool
	Feature string // with Arbiter: the feature the transaction is about, "" for the locks alone
	// RepushPins: with Arbiter, see SetRepushPins.
	RepushPins bool
}

// SyncRound is one sync of s's state with remote: it fetches the remote's
// zerg refs, merges every feature (after check) and the locks with the
// local state, moves the local refs by compare-and-swap, then pushes the
// result with a lease on the values fetched. done is false when either
// compare-and-swap lost a race: the caller runs another round.
func SyncRound(ctx context.Context, s *gitstore.Store, remote string, check IncomingCheck) (report SyncReport, done bool, err error) {
	report, _, done, err = wrap(s).syncRound(ctx, syncOptions{Remote: remote, Check: check})
	return report, done, err
}

// syncRound is SyncRound, and the arbiter's catch-up (o.Arbiter): the
// remote's zerg refs are fetched into its tracking prefix. fetched holds
// the remote's values (relative to refs/zerg/) the merge was made with:
// the arbiter's lease.
func (s store) syncRound(ctx context.Context, o syncOptions) (report SyncReport, fetched map[string]string, done bool, err error) {
	report = SyncReport{Remote: o.Remote, Features: []SyncFeature{}, Pushed: []string{}}
	in, err := s.fetchRound(ctx, o)
	report.Rewound = in.few.rewound
	if err != nil {
		return report, nil, false, err
	}
	newLocal, merged, err := s.mergeRound(ctx, o, in, &report)
	if err != nil {
		return report, nil, false, err
	}
	// Local refs first, compare-and-swap against what we merged.
	var updates []refs.Update
	for _, rel := range sortedKeys(newLocal) {
		if newLocal[rel] != in.local[rel] {
			updates = append(updates, refs.Update{Name: gitstore.ZergPrefix + rel, New: plumbing.NewHash(newLocal[rel]), Old: hashOf(in.local, rel)})
		}
	}
	if len(updates) > 0 {
		if err := s.MoveRefs(ctx, updates); err != nil {
			if errors.Is(err, refs.ErrRace) {
				return report, in.remote, false, nil // a local writer got there first
			}
			return report, in.remote, false, err
		}
	}
	if o.Arbiter {
		if o.RepushPins {
			report.Recreated = s.pushLostPins(ctx, o.Remote, in.few.unpinned, merged[o.Feature])
		}
		return report, in.remote, true, nil
	}
	done, err = s.pushRound(ctx, o.Remote, in, newLocal, &report)
	return report, in.remote, done, err
}

// roundRefs is what a round starts from: the remote's refs under
// refs/zerg/ and this clone's, each named relative to it.
type roundRefs struct {
	remote, local map[string]string
	// trackedBefore is what this clone last fetched from the remote (a
	// plain sync's), few what the arbiter's fetch brought.
	trackedBefore map[string]plumbing.Hash
	few           fewFetched
}

// fetchRound fetches the remote's state: a few refs for the arbiter, all
// of refs/zerg/ for a plain sync.
func (s store) fetchRound(ctx context.Context, o syncOptions) (in roundRefs, err error) {
	remote := o.Remote
	if o.Arbiter {
		in.few, err = s.fetchFew(ctx, remote, o.Feature, o.RepushPins)
		in.remote, in.local = in.few.remote, in.few.local
		return in, err
	}
	prefix := trackingPrefix(remote)
	// What this clone last fetched from the remote: a state ref in it
	// that the remote no longer has was lost there.
	if in.trackedBefore, err = s.RefsUnder(prefix); err != nil {
		return in, err
	}
	if _, err = s.git.Run(ctx, append(fetchArgs(remote, "+refs/zerg/*:"+prefix+"*"), "--prune")...); err != nil {
		return in, &RemoteError{Op: "fetch", Remote: remote, Err: err}
	}
	if in.remote, err = s.refsUnder(ctx, prefix); err == nil {
		in.local, err = s.refsUnder(ctx, gitstore.ZergPrefix)
	}
	if err == nil {
		err = s.keepLostEvidence(ctx, prefix, in.trackedBefore, in.remote)
	}
	return in, err
}

func hashOf(m map[string]string, rel string) plumbing.Hash {
	if m[rel] == "" {
		return plumbing.ZeroHash
	}
	return plumbing.NewHash(m[rel])
}

// mergeRound merges each feature's state and the locks with the remote's,
// and returns the refs (relative to refs/zerg/) to set here and each
// feature's merged state.
func (s store) mergeRound(ctx context.Context, o syncOptions, in roundRefs, report *SyncReport) (newLocal map[string]string, merged map[string]plumbing.Hash, err error) {
	newLocal = map[string]string{}
	features := map[string]bool{}
	for _, m := range []map[string]string{in.remote, in.local} {
		for rel := range m {
			if f, ok := strings.CutPrefix(rel, "features/"); ok {
				features[f] = true
			}
		}
	}
	merged = map[string]plumbing.Hash{}
	for _, f := range sortedSet(features) {
		rel := "features/" + f
		l, r := hashOf(in.local, rel), hashOf(in.remote, rel)
		if !r.IsZero() && r != l {
			// State from elsewhere is judged before anything here acts on
			// it, whichever way it came in.
			if o.Check == nil {
				return nil, nil, fmt.Errorf("state of %s fetched from %s with nothing to check it", f, o.Remote)
			}
			if err := o.Check(ctx, s.Store, f, l, r); err != nil {
				return nil, nil, err
			}
		}
		res, err := s.MergeFeature(ctx, f, l, r)
		if err != nil {
			return nil, nil, err
		}
		merged[f] = res.Commit
		sf := SyncFeature{Feature: f, Result: res.Kind, Conflicts: []string{}}
		for _, c := range res.Conflicts {
			sf.Conflicts = append(sf.Conflicts, fmt.Sprintf("conflict on %s: %s wins, %s lost", c.Task, c.Winner, c.Loser))
		}
		report.Features = append(report.Features, sf)
		newLocal[rel] = res.Commit.String()
	}
	// Locks: merged, then cleared of the locks whose claim was lost.
	lres, err := s.MergeLocks(ctx, hashOf(in.local, "locks"), hashOf(in.remote, "locks"), s.LockKeeper(merged))
	if err != nil {
		return nil, nil, err
	}
	if !lres.Commit.IsZero() {
		newLocal["locks"] = lres.Commit.String()
	}
	// Content refs (pinned work, saved attempts, gate records) only keep
	// commits reachable: each side gets those it lacks, never overwritten.
	for rel, h := range in.remote {
		if !strings.HasPrefix(rel, "features/") && rel != "locks" && in.local[rel] == "" {
			newLocal[rel] = h
		}
	}
	return newLocal, merged, nil
}

// pushRound pushes what this clone has that the remote lacks, with a
// compare-and-swap on the values fetched; done is false when another
// push got there first.
func (s store) pushRound(ctx context.Context, remote string, in roundRefs, newLocal map[string]string, report *SyncReport) (done bool, err error) {
	prefix := trackingPrefix(remote)
	args := []string{"push", "--quiet", "--atomic", "--porcelain", "--no-verify", remote}
	var refspecs []string
	all := map[string]string{}
	for rel, h := range in.local {
		all[rel] = h
	}
	for rel, h := range newLocal {
		all[rel] = h
	}
	for _, rel := range sortedKeys(all) {
		if all[rel] == in.remote[rel] {
			continue
		}
		ref := gitstore.ZergPrefix + rel
		args = append(args, "--force-with-lease="+ref+":"+in.remote[rel])
		refspecs = append(refspecs, all[rel]+":"+ref)
		report.Pushed = append(report.Pushed, ref)
		if stateRef(rel) && in.remote[rel] == "" && !in.trackedBefore[prefix+rel].IsZero() {
			report.Recreated = append(report.Recreated, ref)
		}
	}
	if len(refspecs) == 0 {
		return true, nil
	}
	if _, err := s.git.Run(ctx, append(args, refspecs...)...); err != nil {
		report.Recreated = nil
		if pushLost(err) {
			return false, nil
		}
		return false, &RemoteError{Op: "push", Remote: remote, Err: err}
	}
	s.trackPushed(ctx, remote, refspecs)
	sort.Strings(report.Pushed)
	return true, nil
}

// keepLostEvidence puts back the tracking refs of state refs the fetch's
// --prune just dropped because the remote lost them: the stale tracking
// ref is what tells a later round (or a transition's push) that the push
// re-creating the ref puts back what the remote lost, and a round whose
// push loses its race must not take that evidence with it. The next fetch
// that finds the ref on the remote again replaces it.
func (s store) keepLostEvidence(ctx context.Context, prefix string, before map[string]plumbing.Hash, remote map[string]string) error {
	var back []refs.Update
	for ref, h := range before {
		rel := strings.TrimPrefix(ref, prefix)
		if stateRef(rel) && remote[rel] == "" && !h.IsZero() {
			back = append(back, refs.Update{Name: ref, New: h, Unchecked: true})
		}
	}
	if len(back) == 0 {
		return nil
	}
	return s.MoveRefs(ctx, back)
}

// stateRef reports whether rel (relative to refs/zerg/) is a state ref: a
// feature's state or the locks, which git-zerg never deletes (a deleted
// feature is a tombstone commit). One the remote lacks was lost there.
func stateRef(rel string) bool {
	return rel == "locks" || strings.HasPrefix(rel, "features/")
}

// pushLost tells a push refused by a lease (someone pushed first) from a
// push that did not get through.
func pushLost(err error) bool {
	var ge *gitcmd.Error
	return errors.As(err, &ge) && (strings.Contains(ge.Stderr, "stale info") || strings.Contains(ge.Stderr, "rejected") ||
		strings.Contains(ge.Stderr, "failed to push"))
}

// fewFetched is what fetchFew brought: the remote's and the local values
// of the locks and the feature's state (relative to refs/zerg/), and the
// pins of this clone's work the remote lacks.
type fewFetched struct {
	remote, local map[string]string
	unpinned      map[string]plumbing.Hash
	rewound       []string // see SyncReport.Rewound
}

// fetchFew fetches only the feature's state, the locks and the feature's
// pinned work (one round trip).
//
// A state ref the remote lacks though this clone fetched it from there
// before (its tracking ref exists) was lost on the remote (deleted by hand,
// a remote restored from an older copy): the remote's value is then none,
// so that the transaction's push leases on its absence and puts back this
// clone's state, the same history, instead of leasing on a value the remote
// no longer has and losing every try.
func (s store) fetchFew(ctx context.Context, remote, feature string, repushPins bool) (fewFetched, error) {
	prefix := trackingPrefix(remote)
	rels := []string{"locks"}
	if feature != "" {
		rels = append(rels, "features/"+feature)
	}
	var specs []string
	before := map[string]plumbing.Hash{}
	for _, rel := range rels {
		specs = append(specs, "+"+gitstore.ZergPrefix+rel+":"+prefix+rel)
		before[rel], _ = s.ReadRef(prefix + rel)
	}
	if feature != "" {
		// The other machines' verified work comes along (a pattern, which
		// fails nothing when there is none): the level merge then has it
		// and fetches nothing more, in a rush where every machine waits for
		// that merge.
		work := gitstore.WorkPrefix + feature + "/"
		specs = append(specs, "+"+work+"*:"+prefix+strings.TrimPrefix(work, gitstore.ZergPrefix)+"*")
	}
	// A ref the remote does not have yet (no lock taken there yet) fails
	// the batch, naming it: the batch goes again without it, one round
	// trip more per missing ref rather than one per ref.
	var ferr error
	missing := map[string]bool{}
	for len(specs) > 0 {
		// --prune drops the tracking refs of pins the remote no longer has
		// (merged, or lost): the pattern alone is pruned, never local refs.
		_, err := s.git.Run(ctx, append(fetchArgs(remote, specs...), "--prune")...)
		if err == nil {
			ferr = nil
			break
		}
		ferr = err
		rest, name := withoutMissing(specs, err)
		if len(rest) == len(specs) {
			break
		}
		missing[name] = true
		specs = rest
	}
	if ferr != nil && !s.remoteEmpty(ctx, remote) {
		return fewFetched{}, &RemoteError{Op: "fetch", Remote: remote, Err: ferr}
	}
	f := fewFetched{remote: map[string]string{}, local: map[string]string{}}
	for _, rel := range rels {
		if h, _ := s.ReadRef(gitstore.ZergPrefix + rel); !h.IsZero() {
			f.local[rel] = h.String()
		}
		// The tracking ref of a ref the remote lacks stays, stale, as the
		// evidence that the remote had it (see lostOn), until a fetch finds
		// it there again.
		if missing[gitstore.ZergPrefix+rel] || ferr != nil {
			continue
		}
		if h, _ := s.ReadRef(prefix + rel); !h.IsZero() {
			f.remote[rel] = h.String()
			if old := before[rel]; !old.IsZero() && old != h {
				// The remote's state refs only move forward (every push is
				// leased on what was read there): one that no longer holds
				// what was fetched before was lost and made again.
				if in, err := s.IsAncestor(ctx, old, h); err == nil && !in {
					f.rewound = append(f.rewound, gitstore.ZergPrefix+rel)
				}
			}
		}
	}
	if feature != "" && ferr == nil && repushPins {
		var err error
		if f.unpinned, err = s.unpinned(prefix, feature); err != nil {
			return fewFetched{}, err
		}
	}
	return f, nil
}

// unpinned are the pins of feature's work in this clone that the remote,
// as just fetched, lacks.
func (s store) unpinned(prefix, feature string) (map[string]plumbing.Hash, error) {
	own, err := s.RefsUnder(gitstore.WorkPrefix + feature + "/")
	if err != nil || len(own) == 0 {
		return nil, err
	}
	there, err := s.RefsUnder(prefix + strings.TrimPrefix(gitstore.WorkPrefix, gitstore.ZergPrefix) + feature + "/")
	if err != nil {
		return nil, err
	}
	out := map[string]plumbing.Hash{}
	for ref, h := range own {
		if _, ok := there[prefix+strings.TrimPrefix(ref, gitstore.ZergPrefix)]; !ok {
			out[ref] = h
		}
	}
	return out, nil
}

// SetRepushPins makes every catch-up of s's arbiter push again this
// clone's pins of verified work that the arbiter lost (see pushLostPins);
// nothing without an arbiter. Only where a verified task's pin leaves the
// remote with its merge, which records it done: under review, the merge
// keeps the task verified and drops its pin.
func SetRepushPins(s *gitstore.Store, on bool) {
	if a := arbiterOf(s); a != nil {
		a.repushPins = on
	}
}

// pushLostPins pushes again the pins that the remote lacks while the
// feature's state at tip still has their task verified on that very
// commit: a remote that lost them would leave the level merge without the
// work. A pin dropped because its task was merged (done) stays dropped.
// Each goes only where the remote has none (a lease on absence), and a
// push that fails is tried again at the next catch-up. It returns the refs
// pushed.
func (s store) pushLostPins(ctx context.Context, remote string, pins map[string]plumbing.Hash, tip plumbing.Hash) []string {
	if len(pins) == 0 || tip.IsZero() {
		return nil
	}
	args := []string{"push", "--quiet", "--porcelain", "--no-verify", remote}
	var specs, refs []string
	for _, ref := range sortedHashKeys(pins) {
		rest := strings.TrimPrefix(ref, gitstore.WorkPrefix)
		i := strings.LastIndexByte(rest, '/')
		if i < 0 {
			continue
		}
		b, err := s.TaskAt(tip, rest[i+1:])
		if err != nil || b == nil {
			continue
		}
		var t state.Task
		if json.Unmarshal(b, &t) != nil || t.Status != state.Verified || t.Commit != pins[ref].String() {
			continue
		}
		args = append(args, "--force-with-lease="+ref+":")
		specs = append(specs, pins[ref].String()+":"+ref)
		refs = append(refs, ref)
	}
	if len(specs) == 0 {
		return nil
	}
	if _, err := s.git.Run(ctx, append(args, specs...)...); err != nil {
		return nil
	}
	return refs
}

func sortedHashKeys(m map[string]plumbing.Hash) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// withoutMissing drops from specs the refspec whose source a failed fetch
// says the remote lacks ("couldn't find remote ref <name>"), and names it.
func withoutMissing(specs []string, err error) ([]string, string) {
	var ge *gitcmd.Error
	if !errors.As(err, &ge) {
		return specs, ""
	}
	_, after, ok := strings.Cut(ge.Stderr, "couldn't find remote ref ")
	if !ok {
		return specs, ""
	}
	name, _, _ := strings.Cut(after, "\n")
	name = strings.TrimSpace(name)
	var out []string
	for _, sp := range specs {
		src, _, _ := strings.Cut(strings.TrimPrefix(sp, "+"), ":")
		if src != name {
			out = append(out, sp)
		}
	}
	return out, name
}

// remoteEmpty reports whether remote answers and holds none of the
// refs a fetch asked for (a new arbiter), rather than not answering.
func (s store) remoteEmpty(ctx context.Context, remote string) bool {
	_, err := s.git.Run(ctx, "ls-remote", "--exit-code", remote, gitstore.ZergPrefix+"locks")
	return gitcmd.ExitCode(err) == 2
}

// refsUnder lists refs under prefix, relative to it.
func (s store) refsUnder(ctx context.Context, prefix string) (map[string]string, error) {
	lines, err := s.git.Fields(ctx, '\n', "for-each-ref", "--format=%(objectname) %(refname)", prefix)
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

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedSet(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
