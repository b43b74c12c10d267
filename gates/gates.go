// Package gates decides whether a state transition may happen. Every gate is
// a pure function of facts that the caller gathered (task states, locks, the
// paths a commit touches, the exit code of a verification the tool ran
// itself): nothing here reads git, and nothing an agent says is a fact.
package gates

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"time"

	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

// Refusal is a closed gate: the transition is illegal or its conditions do
// not hold. Reasons lists every condition that failed.
type Refusal struct {
	Task    string
	Op      string
	Reasons []string
}

func (r *Refusal) Error() string {
	what := r.Op
	if r.Task != "" {
		what += " " + r.Task
	}
	return fmt.Sprintf("%s refused (%s)", what, strings.Join(r.Reasons, "; "))
}

func refuse(t *state.Task, op state.Op, reasons ...string) error {
	id := ""
	if t != nil {
		id = t.ID()
	}
	return &Refusal{Task: id, Op: string(op), Reasons: reasons}
}

// Policy is the configuration the gates depend on.
type Policy struct {
	MaxAttempts int
	Backoff     time.Duration // first retry delay; doubles each attempt
	BackoffCap  time.Duration
}

// DefaultPolicy is used when no configuration says otherwise.
var DefaultPolicy = Policy{MaxAttempts: 3, Backoff: 10 * time.Second, BackoffCap: 5 * time.Minute}

// BackoffAfter is the wait before attempt n+1 of task id after n failed
// attempts: exponential, plus up to a quarter more of jitter so that tasks
// failing together (a flaky service) are not retried together. The jitter
// is drawn from the task and attempt, not from a random source: a rule
// gives the same answer every time it is asked (fsck replays them).
func (p Policy) BackoffAfter(id string, attempts int) time.Duration {
	d := p.Backoff
	for i := 1; i < attempts && d < p.BackoffCap; i++ {
		d *= 2
	}
	if q := int64(d / 4); q > 0 {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s\x00%d", id, attempts)
		d += time.Duration(h.Sum64() % uint64(q))
	}
	if p.BackoffCap > 0 && d > p.BackoffCap {
		d = p.BackoffCap
	}
	return d
}

// DepsDone reports whether every hard dependency (implied ones included) is
// done; missing lists those that are not.
func DepsDone(t *state.Task, status func(id string) state.Status) (missing []string) {
	for _, d := range t.Deps() {
		if status(d) != state.Done {
			missing = append(missing, fmt.Sprintf("%s is %s", d, status(d)))
		}
	}
	return missing
}

// Retryable reports whether a failed task has attempts left: it becomes
// pending (op "backoff") once its wait is over.
func (p Policy) Retryable(t *state.Task) bool {
	return t.Status == state.Failed && t.Attempts < p.MaxAttempts
}

// MayRun reports whether a task in status st after attempts attempts may
// still be claimed, now or after its backoff: claimable, and a failed one
// with attempts left.
func (p Policy) MayRun(st state.Status, attempts int) bool {
	return st.Claimable() && (st != state.Failed || attempts < p.MaxAttempts)
}

// Ready reports whether the task can be claimed now as far as its own state
// and its dependencies go (locks and the worker are checked by Claim).
func (p Policy) Ready(t *state.Task, status func(id string) state.Status, now time.Time) bool {
	return p.ReadyFacts(Readiness{Status: t.Status, Attempts: t.Attempts, NotBefore: t.NotBefore,
		Unapproved: t.NeedsApproval() && t.Approved == "", Deps: t.Deps()}, status, now)
}

// Readiness is what Ready looks at: callers that keep these facts without
// the whole task (the task index) ask ReadyFacts, under the same rule.
type Readiness struct {
	Status     state.Status
	Attempts   int
	NotBefore  time.Time
	Unapproved bool // its risk needs an approval it does not have
	Deps       []string
}

// ReadyFacts is Ready on the facts alone.
func (p Policy) ReadyFacts(r Readiness, status func(id string) state.Status, now time.Time) bool {
	if !p.MayRun(r.Status, r.Attempts) || now.Before(r.NotBefore) || r.Unapproved {
		return false
	}
	for _, d := range r.Deps {
		if status(d) != state.Done {
			return false
		}
	}
	return true
}

// ClaimFacts are what the claim gate needs.
type ClaimFacts struct {
	Task   *state.Task
	Status func(id string) state.Status
	Worker string
	Owner  string
	// Held is the task the worker already holds in this feature, if any.
	Held  string
	Locks []state.Lock // every lock of the repository
	Now   time.Time
}

// Claim checks pending → claimed.
func (p Policy) Claim(f ClaimFacts) error {
	t := f.Task
	var why []string
	switch {
	case t.Status == state.Pending:
		if f.Now.Before(t.NotBefore) {
			why = append(why, "backing off until "+t.NotBefore.UTC().Format(time.RFC3339))
		}
	case p.Retryable(t):
		if f.Now.Before(t.NotBefore) {
			why = append(why, "failed, retry not before "+t.NotBefore.UTC().Format(time.RFC3339))
		}
	default:
		why = append(why, fmt.Sprintf("task is %s, not pending", t.Status))
	}
	why = append(why, DepsDone(t, f.Status)...)
	if t.NeedsApproval() && t.Approved == "" {
		why = append(why, fmt.Sprintf("risk %s needs `git zerg approve %s`", t.Spec.Risk, t.ID()))
	}
	if f.Held != "" && f.Held != t.ID() {
		why = append(why, fmt.Sprintf("worker %s already holds %s", f.Worker, f.Held))
	}
	for _, c := range LockConflicts(t.Spec.Owned(), f.Locks, f.Owner, f.Now) {
		why = append(why, c.String())
	}
	if len(why) > 0 {
		return refuse(t, state.OpClaim, why...)
	}
	return nil
}

// Conflict is a path under another owner's active lock.
type Conflict struct {
	Path string
	Lock state.Lock
}

func (c Conflict) String() string {
	held := c.Lock.Owner
	if c.Lock.Task != "" {
		held += " for " + c.Lock.Feature + "/" + c.Lock.Task
	} else if c.Lock.Reason != "" {
		held += " (" + c.Lock.Reason + ")"
	}
	if c.Path == c.Lock.Path {
		return fmt.Sprintf("%s is locked by %s", c.Path, held)
	}
	return fmt.Sprintf("%s is under lock %s held by %s", c.Path, c.Lock.Path, held)
}

// LockConflicts lists each path that an active lock of another owner covers.
// Paths may be owned patterns (directories, globs): conflict is overlap.
func LockConflicts(paths []string, locks []state.Lock, owner string, now time.Time) []Conflict {
	var out []Conflict
	for _, p := range paths {
		for _, l := range locks {
			if l.Owner == owner || !l.Active(now) {
				continue
			}
			if levels.Overlap(p, l.Path) {
				out = append(out, Conflict{Path: p, Lock: l})
			}
		}
	}
	return out
}

// Unowned returns the touched paths that no pattern of the task owns.
func Unowned(t *levels.Task, touched []string) []string {
	owned := t.Owned()
	var out []string
	for _, f := range touched {
		ok := false
		for _, p := range owned {
			if levels.Match(p, f) {
				ok = true
				break
			}
		}
		if !ok {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// Mode says where the work of a task happens.
type Mode int

const (
	// Shared: one checkout, one branch; done goes straight to done.
	Shared Mode = iota
	// Worktree: a worker's own worktree and branch; done goes to verified,
	// and the level merge makes it done.
	Worktree
	// Landed: not a place of work but a land's question of its merge
	// commit: does it descend from (contain) the task's work?
	Landed
)

// Verification is the result of the verification command as the tool ran it.
type Verification struct {
	Ran      bool
	ExitCode int
	TimedOut bool
	Output   string // last lines, for the reason
}

// DoneFacts are what the done gate needs.
type DoneFacts struct {
	Task   *state.Task
	Worker string
	Owner  string
	Mode   Mode
	// Commit is the work; NewCommit says it differs from the task's base
	// and descends from it.
	Commit    string
	NewCommit bool
	Touched   []string
	// Reachable: shared mode only, the commit is on the integration branch.
	Reachable bool
	Locks     []state.Lock
	Now       time.Time
	// Frozen are the paths the feature's epic freezes (FrozenBy names the
	// epic and version): no task may change them, owned or not.
	Frozen   []string
	FrozenBy string
}

// DoneWork checks the facts of claimed → verified/done other than the
// verification: the worker holds the task, there is new work, and it touches
// only what the task owns and nothing another owner locked.
func DoneWork(f DoneFacts) error {
	t := f.Task
	if err := Holder(t, string(state.OpDone), f.Worker); err != nil {
		return err
	}
	var why []string
	owned := t.Spec.Owned()
	if len(owned) > 0 && !f.NewCommit {
		why = append(why, fmt.Sprintf("no new commit since the claim (base %s)", short(t.Base)))
	}
	if len(owned) == 0 && len(f.Touched) > 0 {
		why = append(why, fmt.Sprintf("check-only task changed files: %s", strings.Join(f.Touched, ", ")))
	} else if un := Unowned(t.Spec, f.Touched); len(un) > 0 {
		why = append(why, fmt.Sprintf("touches paths the task does not own: %s", strings.Join(un, ", ")))
	}
	for _, c := range LockConflicts(f.Touched, f.Locks, f.Owner, f.Now) {
		why = append(why, c.String())
	}
	if fz := FrozenTouched(f.Frozen, f.Touched); len(fz) > 0 {
		why = append(why, fmt.Sprintf("changes paths frozen by %s: %s", f.FrozenBy, strings.Join(fz, ", ")))
	}
	if f.Mode == Shared && f.NewCommit && !f.Reachable {
		why = append(why, fmt.Sprintf("commit %s is not on the integration branch", short(f.Commit)))
	}
	if len(why) > 0 {
		return refuse(t, state.OpDone, why...)
	}
	return nil
}

// Outcome is where the verification result takes a claimed task whose work
// passed DoneWork: verified (worktree) or done (shared) when it passed,
// failed with a reason when it did not.
func Outcome(mode Mode, v Verification) (to state.Status, reason string) {
	switch {
	case !v.Ran:
		return state.Failed, "verification did not run"
	case v.TimedOut:
		return state.Failed, "verification timed out"
	case v.ExitCode != 0:
		r := fmt.Sprintf("verification exited %d", v.ExitCode)
		if v.Output != "" {
			r += ": " + v.Output
		}
		return state.Failed, r
	case mode == Worktree:
		return state.Verified, ""
	}
	return state.Done, ""
}

// AfterFailure is where a failed attempt leads: back to pending after the
// backoff while attempts remain, else blocked.
func (p Policy) AfterFailure(t *state.Task, now time.Time) (next state.Status, notBefore time.Time) {
	if t.Attempts < p.MaxAttempts {
		return state.Failed, now.Add(p.BackoffAfter(t.ID(), t.Attempts))
	}
	return state.Blocked, time.Time{}
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "none"
	}
	return h
}

// Holder checks that worker holds the claimed task (release, fail,
// heartbeat, a worker's commit): anything else is an illegal transition or
// a lost claim. action names what was refused.
func Holder(t *state.Task, action, worker string) error {
	refused := func(why string) error { return &Refusal{Task: t.ID(), Op: action, Reasons: []string{why}} }
	if t.Status != state.Claimed {
		return refused(fmt.Sprintf("task is %s, not claimed", t.Status))
	}
	if t.Worker != worker {
		return refused(fmt.Sprintf("claim lost: task is held by %s, not %s", t.Worker, worker))
	}
	return nil
}

// Retry checks blocked (or failed) → pending by hand.
func Retry(t *state.Task) error {
	if !state.OpRetry.From(t.Status) {
		return refuse(t, state.OpRetry, fmt.Sprintf("task is %s; only blocked or failed tasks can be retried", t.Status))
	}
	return nil
}

// Approve checks that approval means something: the task needs it and has
// not started.
func Approve(t *state.Task) error {
	switch {
	case !t.NeedsApproval():
		return refuse(t, state.OpApprove, fmt.Sprintf("risk is %q; only high and critical tasks need approval", t.Spec.Risk))
	case t.Approved != "":
		return refuse(t, state.OpApprove, "already approved by "+t.Approved)
	case !state.OpApprove.From(t.Status):
		return refuse(t, state.OpApprove, fmt.Sprintf("task is already %s", t.Status))
	}
	return nil
}

// Unlock checks that owner may remove a lock; force breaks another owner's.
func Unlock(l state.Lock, owner string, force bool, now time.Time) error {
	if l.Owner == owner || force || !l.Active(now) {
		return nil
	}
	return &Refusal{Op: "unlock " + l.Path, Reasons: []string{fmt.Sprintf("locked by %s; use --force to break it", l.Owner)}}
}

// Lock checks that owner may lock path: no active lock of another owner
// overlaps it.
func Lock(path, owner string, locks []state.Lock, now time.Time) error {
	cs := LockConflicts([]string{path}, locks, owner, now)
	if len(cs) == 0 {
		return nil
	}
	var why []string
	for _, c := range cs {
		why = append(why, c.String())
	}
	return &Refusal{Op: "lock " + path, Reasons: why}
}

// StatusFunc looks up the status of tasks by id (unknown ids read as "").
func StatusFunc(tasks []*state.Task) func(id string) state.Status {
	m := make(map[string]state.Status, len(tasks))
	for _, t := range tasks {
		m[t.ID()] = t.Status
	}
	return func(id string) state.Status { return m[id] }
}

// ReadyOrder returns the tasks that are ready now, best first: lowest
// level, then most dependents (unblocking more work sooner), then plan
// order. tasks must be in plan order.
func (p Policy) ReadyOrder(tasks []*state.Task, now time.Time) []*state.Task {
	status := StatusFunc(tasks)
	var out []*state.Task
	for _, t := range tasks {
		if p.Ready(t, status, now) {
			out = append(out, t)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		return Better(out[i].Level, len(out[i].Dependents), out[j].Level, len(out[j].Dependents))
	})
	return out
}

// Better orders ready tasks (a stable sort keeps plan order among equals):
// lowest level, then most dependents.
func Better(levelA, dependentsA, levelB, dependentsB int) bool {
	if levelA != levelB {
		return levelA < levelB
	}
	return dependentsA > dependentsB
}

// CommitFiles is one commit and the paths it changes.
type CommitFiles struct {
	Commit string
	Files  []string
}

// OwnWork picks the task's own work out of the commits between its claim's
// base and the work. In shared mode other workers commit to the same
// branch meanwhile: a commit whose every path belongs to another task that
// is under way (ownedByOther) is that task's work, not this one's. Every
// other commit counts as this task's, and its paths are what the task
// touched — so a commit mixing its own paths with foreign ones is judged
// whole, and refused.
func OwnWork(commits []CommitFiles, ownedByOther func(path string) bool) (touched []string, own int) {
	seen := map[string]bool{}
	for _, c := range commits {
		foreign := len(c.Files) > 0
		for _, f := range c.Files {
			if !ownedByOther(f) {
				foreign = false
				break
			}
		}
		if foreign {
			continue
		}
		own++
		for _, f := range c.Files {
			if !seen[f] {
				seen[f] = true
				touched = append(touched, f)
			}
		}
	}
	sort.Strings(touched)
	return touched, own
}
