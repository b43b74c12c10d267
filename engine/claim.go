package engine

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/git-zerg/git-zerg/engine/trust"
	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/worktree"
)

// ClaimRequest asks for a claim: of Task, or of the best ready task.
type ClaimRequest struct {
	Worker string
	Task   string // "" for the best ready task
	Base   string // the commit the work will be compared with; "" for HEAD
	// PID and Started name the rush process holding the claim, if any: it
	// is the process whose death frees the claim on --resume.
	PID     int
	Started string
	// Only, when set, restricts the best ready task to those it accepts
	// (a rush claims within the level it runs).
	Only func(*state.Task) bool
	// Rank, when set, orders the tasks Only accepts, highest first (the
	// policy's order between equals): the flow scheduler of a rush over
	// several machines starts the longest path first, as on one.
	Rank func(*state.Task) float64

	policy gates.Policy
	ttl    time.Duration
	// inWorktree: the caller checks the task's owned paths in the worktree
	// the task runs in, once it is reset to where the task starts (a rush),
	// instead of in the store's work tree at claim.
	InWorktree bool
	escapes    func(*state.Task) error
	// trust is what this machine trusts of the feature's tasks: a claim
	// hands the task to a worker, so it must be the task as planned or
	// accepted here (nil trusts nothing).
	trust *trust.File
}

// prepareClaim fills in what the claim gate asks: the policy, the lease,
// and this machine's trust (read here unless tr gives it).
func (g *Engine) prepareClaim(r *ClaimRequest, policy gates.Policy, ttl time.Duration, tr *trust.File) error {
	r.policy, r.ttl, r.trust = policy, ttl, tr
	if tr != nil {
		return nil
	}
	var err error
	r.trust, err = trust.Open(g.Store, g.Feature)
	return err
}

// Claim runs the pending → claimed transition. It returns the claimed
// task, or nil and why nothing could be claimed.
func (g *Engine) Claim(r ClaimRequest) (*state.Task, string, error) {
	if err := EpicHold(g.Store, g.Feature); err != nil {
		return nil, "", err
	}
	if r.Base == "" {
		base, err := HeadCommit(g.Store)
		if err != nil {
			return nil, "", err
		}
		r.Base = base
	}
	if r.PID == 0 {
		r.PID, r.Started = rushPID(), os.Getenv("ZERG_RUSH_STARTED")
	}
	if err := g.prepareClaim(&r, g.Policy(), g.TTL(), nil); err != nil {
		return nil, "", err
	}
	if g.Store.Top != "" && !r.InWorktree {
		r.escapes = g.escapeCheck(g.Store.Top)
	}
	var claimed *state.Task
	var why string
	err := g.update(r.policy, r.ttl, func(x *txn) (*gitstore.Message, error) {
		if !x.tx.Exists() {
			return nil, NotPlanned(g.Feature)
		}
		var msg *gitstore.Message
		var err error
		claimed, why, msg, err = x.claim(r)
		if err == nil && claimed == nil {
			// Expired leases found on the way are still worth recording.
			msg = &gitstore.Message{Subject: "expire leases in " + g.Feature, Op: state.OpExpire}
		}
		return msg, err
	})
	return claimed, why, err
}

// ClaimAll claims the best ready task for each request's worker, in
// order, in one transaction: the workers of a rush over several machines
// that start together cost the remote one push, not one each. It stops at
// the first request the gate refuses (nothing more is ready for it); the
// tasks it returns are those claimed, in the requests' order.
func (g *Engine) ClaimAll(reqs []ClaimRequest) ([]*state.Task, error) {
	policy, ttl := g.Policy(), g.TTL()
	tr, err := trust.Open(g.Store, g.Feature)
	if err != nil {
		return nil, err
	}
	for i := range reqs {
		g.prepareClaim(&reqs[i], policy, ttl, tr)
		if reqs[i].Task != "" || reqs[i].Base == "" {
			return nil, UsageError("ClaimAll claims the best ready task from a given base")
		}
	}
	var claimed []*state.Task
	err = g.update(policy, ttl, func(x *txn) (*gitstore.Message, error) {
		if !x.tx.Exists() {
			return nil, NotPlanned(g.Feature)
		}
		claimed = claimed[:0]
		ws, err := x.tx.Workers()
		if err != nil {
			return nil, err
		}
		// Before a lease of the worker's name is taken for this host's
		// own: under one name, another clone's would be.
		if err := hostClash(x.tx.Host(), ws); err != nil {
			return nil, err
		}
		var msg *gitstore.Message
		for _, r := range reqs {
			if w, ok := ws[r.Worker]; ok {
				// A push that got no answer may have reached the remote:
				// the worker holds its task already, and goes on with it.
				if t, err := x.tx.Task(w.Task); err == nil && t.Status == state.Claimed && t.Worker == r.Worker {
					claimed = append(claimed, t)
					continue
				}
			}
			t, _, cm, err := x.claim(r)
			if nothingToClaim(err) || err == nil && t == nil {
				break
			}
			if err != nil {
				return nil, err
			}
			claimed = append(claimed, t)
			if msg == nil {
				msg = cm
			} else {
				msg.Subject += "; then " + cm.Subject
			}
		}
		if msg == nil {
			// Expired leases found on the way are still worth recording.
			msg = &gitstore.Message{Subject: "expire leases in " + g.Feature, Op: state.OpExpire}
		}
		return msg, nil
	})
	if err != nil {
		return nil, err
	}
	return claimed, nil
}

// claim runs the claim gate and records pending → claimed within a
// transaction: on its own, or right after a worker's previous task settled,
// so that a rush's worker moves on in one state commit instead of two.
func (x *txn) claim(r ClaimRequest) (claimed *state.Task, why string, msg *gitstore.Message, err error) {
	tx := x.tx
	host := tx.Host()
	owner := Owner(host, r.Worker)
	if r.trust == nil {
		r.trust = &trust.File{}
	}
	// The index describes the state the transaction began from, so it is
	// read before anything changes. A rush's chained claim (tasks already
	// changed) and a claim within a level read every task instead.
	var ix *gitstore.Index
	if r.Task == "" && r.Only == nil {
		ix, err = tx.Index()
		if errors.Is(err, gitstore.ErrIndexAfterChange) {
			ix, err = nil, nil
		}
		if err != nil {
			return nil, "", nil, err
		}
	}
	expired, err := x.expireLeases()
	if err != nil {
		return nil, "", nil, err
	}
	ws, err := tx.Workers()
	if err != nil {
		return nil, "", nil, err
	}
	if err := hostClash(host, ws); err != nil {
		return nil, "", nil, err
	}
	held := ""
	if w, ok := ws[r.Worker]; ok {
		held = w.Task
	}
	locks, err := tx.Locks()
	if err != nil {
		return nil, "", nil, err
	}
	facts := gates.ClaimFacts{Status: x.statusOf, Worker: r.Worker, Owner: owner, Held: held, Locks: locks, Now: x.now}
	var t *state.Task
	if r.Task != "" {
		if t, err = x.claimNamed(r, facts); err != nil {
			return nil, "", nil, err
		}
	} else {
		if held != "" {
			return nil, "", nil, RefusedError("claim refused", fmt.Sprintf("worker %s already holds %s", r.Worker, held))
		}
		if t, why, err = x.claimBest(r, facts, ix, len(expired) > 0); t == nil || err != nil {
			return nil, why, nil, err
		}
	}
	return x.recordClaim(r, t, host, owner)
}

// claimNamed asks the gate about the task the claim names, and whether
// this machine trusts it as it is.
func (x *txn) claimNamed(r ClaimRequest, facts gates.ClaimFacts) (*state.Task, error) {
	tx := x.tx
	t, err := tx.Task(r.Task)
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, noTask(tx.Feature(), r.Task)
	} else if err != nil {
		return nil, err
	}
	facts.Task = t
	if e := checkTrusted(r.trust, "claim "+t.ID()+" refused", t, tx.Feature()); e != nil {
		return nil, e
	}
	if err := x.policy.Claim(facts); err != nil {
		return nil, err
	}
	if e := unapprovedHere(r.trust, "claim "+t.ID()+" refused", t); e != nil {
		return nil, e
	}
	if r.escapes != nil {
		if err := r.escapes(t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// claimBest finds the best ready task the gate lets the worker claim, from
// the index when there is one (expired: leases expired in this
// transaction, so the index no longer describes every task); nil and what
// the next task waits for when there is none.
func (x *txn) claimBest(r ClaimRequest, facts gates.ClaimFacts, ix *gitstore.Index, expired bool) (t *state.Task, why string, err error) {
	tx := x.tx
	// try asks the gate about one candidate, as this transaction sees
	// it: whatever proposed it, only the gate decides. A candidate this
	// machine does not trust as it is goes to no worker; when nothing
	// else could be claimed, the claim is refused naming it.
	var distrusted *Error
	try := func(cand *state.Task) (bool, error) {
		if r.Only != nil && !r.Only(cand) {
			return false, nil
		}
		facts.Task = cand
		err := x.policy.Claim(facts)
		if err == nil {
			if e := checkTrusted(r.trust, "claim refused", cand, tx.Feature()); e != nil {
				if distrusted == nil {
					distrusted = e
				}
				return false, nil
			}
			if e := unapprovedHere(r.trust, "claim refused", cand); e != nil {
				err = errors.New(e.Why)
			}
		}
		if err == nil && r.escapes != nil {
			err = r.escapes(cand)
			var ee *Error
			if err != nil && !errors.As(err, &ee) {
				return false, err
			}
		}
		if err == nil {
			return true, nil
		} else if why == "" {
			why = err.Error()
		}
		return false, nil
	}
	if ix != nil {
		readyBestFirst(ix, x.policy, x.now, func(e *gitstore.IndexEntry) bool {
			var cand *state.Task
			if cand, err = tx.Task(e.ID); err != nil {
				return false
			}
			var ok bool
			if ok, err = try(cand); ok {
				t = cand
			}
			return !ok && err == nil
		})
		if err != nil {
			return nil, "", err
		}
	}
	var tasks []*state.Task
	if ix == nil {
		if tasks, err = tx.Tasks(); err != nil {
			return nil, "", err
		}
		ready := x.policy.ReadyOrder(tasks, x.now)
		if r.Rank != nil {
			sort.SliceStable(ready, func(i, j int) bool { return r.Rank(ready[i]) > r.Rank(ready[j]) })
		}
		for _, cand := range ready {
			ok, err := try(cand)
			if err != nil {
				return nil, "", err
			}
			if ok {
				t = cand
				break
			}
		}
	}
	if t == nil {
		if distrusted != nil {
			return nil, "", distrusted
		}
		if why == "" {
			// Saying what the next task waits for looks at every task:
			// the index tells, unless leases expired in this
			// transaction changed tasks since the state it describes.
			switch {
			case ix != nil && !expired:
				why = waitingForIndex(ix, x.policy, x.now)
			default:
				if tasks == nil {
					if tasks, err = tx.Tasks(); err != nil {
						return nil, "", err
					}
				}
				why = waitingForTasks(tasks, x.policy, x.now)
			}
		}
		return nil, why, nil
	}
	return t, "", nil
}

// recordClaim records pending → claimed of t for the worker: its lease and
// the task's locks.
func (x *txn) recordClaim(r ClaimRequest, t *state.Task, host gitstore.HostIdentity, owner string) (*state.Task, string, *gitstore.Message, error) {
	tx := x.tx
	t = t.Clone()
	if t.Status == state.Failed {
		t.Record(x.event(state.OpBackoff, state.Pending, "", "backoff over", ""))
	}
	t.Record(x.event(state.OpClaim, state.Claimed, r.Worker, "", ""))
	t.Worker, t.Owner, t.Base, t.Commit, t.Reason = r.Worker, owner, r.Base, "", ""
	t.Host = host.Name
	t.NotBefore = time.Time{}
	t.Attempts++
	if err := tx.Put(t); err != nil {
		return nil, "", nil, err
	}
	lease := &state.Worker{Name: r.Worker, Owner: owner, Task: t.ID(), Since: x.now, Expires: x.now.Add(x.ttl),
		Host: host.Name, Instance: host.Instance, PID: r.PID, Started: r.Started}
	if err := tx.PutWorker(lease); err != nil {
		return nil, "", nil, err
	}
	if err := x.takeLocks(t, owner, lease.Expires); err != nil {
		return nil, "", nil, err
	}
	return t, "", &gitstore.Message{Subject: fmt.Sprintf("claim %s (%s)", t.ID(), r.Worker), Op: state.OpClaim, Task: t.ID(),
		Worker: owner, From: string(t.History[len(t.History)-2].To), To: string(state.Claimed)}, nil
}

// nothingToClaim reports whether a claim's error is a refusal: nothing
// can be claimed for the request now, which a claim made on the way to
// something else (a rush's worker moving on) takes as nothing to do.
func nothingToClaim(err error) bool {
	var ref *gates.Refusal
	var ee *Error
	return errors.As(err, &ref) || errors.As(err, &ee) && ee.Kind == Refused
}

// escapeCheck returns the check that refuses a task whose owned paths pass
// through a symbolic link from the work tree at root to somewhere outside
// it: the agent would write there, and no hook sees it. The answer for a
// task is kept for the transaction's retries, which see the same tree; a
// git process is spent only on directory and glob owners with a symbolic
// link somewhere below them.
func (g *Engine) escapeCheck(root string) func(*state.Task) error {
	seen := map[string]error{}
	return func(t *state.Task) error {
		owned := t.Spec.Owned()
		key := t.ID() + "\x00" + strings.Join(owned, "\x00")
		if err, ok := seen[key]; ok {
			return err
		}
		e, err := OwnedEscape(g.Context(), Git(g.Store), root, owned)
		if err == nil && e != nil {
			err = escapeRefusal(t.ID(), e)
		}
		seen[key] = err
		return err
	}
}

// escapeRefusal is the error for a task whose owned path leads out of the
// work tree through a symbolic link.
func escapeRefusal(task string, e *worktree.Escape) *Error {
	return &Error{Kind: Refused, What: "claim " + task + " refused", Why: e.Error(),
		Hint: "a task writes only inside the repository: replace the link, or change the files the task owns"}
}

// waitingForTasks explains why no task is ready, naming what the next task
// waits for.
func waitingForTasks(tasks []*state.Task, p gates.Policy, now time.Time) string {
	items := make([]waiting, len(tasks))
	for i, t := range tasks {
		items[i] = waiting{id: t.ID(), r: gates.Readiness{Status: t.Status, Attempts: t.Attempts, NotBefore: t.NotBefore,
			Unapproved: t.NeedsApproval() && t.Approved == "", Deps: t.Deps()}}
	}
	return waitingFor(items, gates.StatusFunc(tasks), p, now)
}

// waitingForIndex is waitingForTasks on the task index.
func waitingForIndex(ix *gitstore.Index, p gates.Policy, now time.Time) string {
	all := ix.All()
	items := make([]waiting, len(all))
	for i := range all {
		items[i] = waiting{id: all[i].ID, r: readiness(&all[i])}
	}
	return waitingFor(items, ix.Status, p, now)
}

type waiting struct {
	id string
	r  gates.Readiness
}

func waitingFor(items []waiting, status func(string) state.Status, p gates.Policy, now time.Time) string {
	counts := map[state.Status]int{}
	var backoff, approval, deps []string
	for _, it := range items {
		r := it.r
		counts[r.Status]++
		waiting := p.MayRun(r.Status, r.Attempts)
		switch {
		case !waiting:
		case now.Before(r.NotBefore):
			backoff = append(backoff, fmt.Sprintf("%s backs off until %s", it.id, r.NotBefore.UTC().Format(time.RFC3339)))
		case r.Unapproved:
			approval = append(approval, it.id+" needs approve")
		case !depsDone(r.Deps, status):
			deps = append(deps, it.id)
		}
	}
	if counts[state.Done] == len(items) {
		return "the feature is complete"
	}
	var why []string
	if n := counts[state.Claimed]; n > 0 {
		why = append(why, fmt.Sprintf("%d claimed", n))
	}
	why = append(why, firstFew(backoff, 3)...)
	why = append(why, firstFew(approval, 3)...)
	if len(deps) > 0 {
		why = append(why, fmt.Sprintf("%d waiting for dependencies (%s)", len(deps), strings.Join(firstFew(deps, 5), ", ")))
	}
	if n := counts[state.Blocked]; n > 0 {
		why = append(why, fmt.Sprintf("%d blocked", n))
	}
	if len(why) == 0 {
		return "no pending task"
	}
	return strings.Join(why, "; ")
}

func depsDone(deps []string, status func(string) state.Status) bool {
	for _, d := range deps {
		if status(d) != state.Done {
			return false
		}
	}
	return true
}

func firstFew(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("%d more", len(s)-n))
}

// rushPID is the pid of the rush that runs this worker, if any.
func rushPID() int {
	if v := os.Getenv("ZERG_RUSH_PID"); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return 0
}
