package gates

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func task(id string, st state.Status, deps ...string) *state.Task {
	return &state.Task{Spec: &levels.Task{ID: id, Title: id, Dependencies: deps,
		Files: levels.Files{Create: []string{"src/" + id + ".go"}}, Verification: levels.Verification{Command: "true"}},
		Level: 1, Status: st}
}

func statusMap(m map[string]state.Status) func(string) state.Status {
	return func(id string) state.Status { return m[id] }
}

func reasons(err error) string {
	var r *Refusal
	if errors.As(err, &r) {
		return strings.Join(r.Reasons, "; ")
	}
	if err != nil {
		return "not a refusal: " + err.Error()
	}
	return ""
}

func TestClaim(t *testing.T) {
	p := DefaultPolicy
	lock := func(path, owner string, ttl time.Duration) state.Lock {
		return state.Lock{Path: path, Owner: owner, Expires: now.Add(ttl)}
	}
	risky := task("R", state.Pending)
	risky.Spec.Risk = "critical"
	approved := task("R", state.Pending)
	approved.Spec.Risk = "high"
	approved.Approved = "lead@example.com"
	backingOff := task("B", state.Pending)
	backingOff.NotBefore = now.Add(time.Minute)
	failedRetryable := task("F", state.Failed)
	failedRetryable.Attempts = 1
	failedExhausted := task("F", state.Failed)
	failedExhausted.Attempts = 3
	for _, tc := range []struct {
		name  string
		facts ClaimFacts
		want  string // substring of the reasons; "" = allowed
	}{
		{"ready", ClaimFacts{Task: task("A", state.Pending)}, ""},
		{"deps done", ClaimFacts{Task: task("A", state.Pending, "X"), Status: statusMap(map[string]state.Status{"X": state.Done})}, ""},
		{"dep verified is not done", ClaimFacts{Task: task("A", state.Pending, "X"), Status: statusMap(map[string]state.Status{"X": state.Verified})}, "X is verified"},
		{"already claimed", ClaimFacts{Task: task("A", state.Claimed)}, "task is claimed, not pending"},
		{"needs approval", ClaimFacts{Task: risky}, "risk critical needs `git zerg approve R`"},
		{"approved", ClaimFacts{Task: approved}, ""},
		{"worker holds another", ClaimFacts{Task: task("A", state.Pending), Worker: "w1", Held: "B"}, "worker w1 already holds B"},
		{"locked by another", ClaimFacts{Task: task("A", state.Pending), Owner: "w1@h", Locks: []state.Lock{lock("src/", "u@h", time.Hour)}}, "src/A.go is under lock src/ held by u@h"},
		{"own lock", ClaimFacts{Task: task("A", state.Pending), Owner: "w1@h", Locks: []state.Lock{lock("src/A.go", "w1@h", time.Hour)}}, ""},
		{"expired lock", ClaimFacts{Task: task("A", state.Pending), Owner: "w1@h", Locks: []state.Lock{lock("src/A.go", "u@h", -time.Second)}}, ""},
		{"backing off", ClaimFacts{Task: backingOff}, "backing off until"},
		{"failed with attempts left", ClaimFacts{Task: failedRetryable}, ""},
		{"failed, attempts exhausted", ClaimFacts{Task: failedExhausted}, "task is failed, not pending"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.facts
			f.Now = now
			if f.Status == nil {
				f.Status = statusMap(nil)
			}
			got := reasons(p.Claim(f))
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("Claim: %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDoneWork(t *testing.T) {
	claimed := func() *state.Task {
		tk := task("A", state.Claimed)
		tk.Worker, tk.Base = "w1", "base"
		return tk
	}
	checkOnly := claimed()
	checkOnly.Spec.Files = levels.Files{}
	for _, tc := range []struct {
		name string
		f    DoneFacts
		want string
	}{
		{"good", DoneFacts{Task: claimed(), Worker: "w1", NewCommit: true, Touched: []string{"src/A.go"}, Mode: Worktree}, ""},
		{"other worker", DoneFacts{Task: claimed(), Worker: "w2", NewCommit: true}, "claim lost: task is held by w1, not w2"},
		{"no commit", DoneFacts{Task: claimed(), Worker: "w1"}, "no new commit since the claim"},
		{"unowned path", DoneFacts{Task: claimed(), Worker: "w1", NewCommit: true, Touched: []string{"src/A.go", "README"}}, "touches paths the task does not own: README"},
		{"locked path", DoneFacts{Task: claimed(), Worker: "w1", Owner: "w1@h", NewCommit: true, Touched: []string{"src/A.go"},
			Locks: []state.Lock{{Path: "src/A.go", Owner: "u@h", Expires: now.Add(time.Hour)}}}, "src/A.go is locked by u@h"},
		{"shared, not on branch", DoneFacts{Task: claimed(), Worker: "w1", NewCommit: true, Touched: []string{"src/A.go"}, Mode: Shared}, "is not on the integration branch"},
		{"shared, on branch", DoneFacts{Task: claimed(), Worker: "w1", NewCommit: true, Touched: []string{"src/A.go"}, Mode: Shared, Reachable: true}, ""},
		{"check-only, nothing changed", DoneFacts{Task: checkOnly, Worker: "w1"}, ""},
		{"check-only changed files", DoneFacts{Task: checkOnly, Worker: "w1", NewCommit: true, Touched: []string{"x"}}, "check-only task changed files: x"},
		{"pending", DoneFacts{Task: task("A", state.Pending), Worker: "w1"}, "task is pending, not claimed"},
		// Owned or not, a frozen path is refused: only a new epic version
		// changes it.
		{"frozen path", DoneFacts{Task: claimed(), Worker: "w1", NewCommit: true, Touched: []string{"src/A.go"}, Mode: Worktree,
			Frozen: []string{"src/"}, FrozenBy: "epic e v1"}, "changes paths frozen by epic e v1: src/A.go"},
		{"frozen elsewhere", DoneFacts{Task: claimed(), Worker: "w1", NewCommit: true, Touched: []string{"src/A.go"}, Mode: Worktree,
			Frozen: []string{"api/types.go"}, FrozenBy: "epic e v1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.Now = now
			got := reasons(DoneWork(tc.f))
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("DoneWork: %q, want %q", got, tc.want)
			}
		})
	}
}

func TestOutcome(t *testing.T) {
	for _, tc := range []struct {
		mode Mode
		v    Verification
		want state.Status
		why  string
	}{
		{Worktree, Verification{Ran: true}, state.Verified, ""},
		{Shared, Verification{Ran: true}, state.Done, ""},
		{Shared, Verification{Ran: true, ExitCode: 2, Output: "boom"}, state.Failed, "verification exited 2: boom"},
		{Worktree, Verification{Ran: true, TimedOut: true, ExitCode: 137}, state.Failed, "verification timed out"},
		{Shared, Verification{}, state.Failed, "verification did not run"},
	} {
		got, why := Outcome(tc.mode, tc.v)
		if got != tc.want || why != tc.why {
			t.Errorf("Outcome(%v, %+v) = %s %q, want %s %q", tc.mode, tc.v, got, why, tc.want, tc.why)
		}
	}
}

func TestBackoffAndFailure(t *testing.T) {
	p := Policy{MaxAttempts: 3, Backoff: 10 * time.Second, BackoffCap: 25 * time.Second}
	// Exponential, with up to a quarter more of jitter, capped.
	for attempts, base := range map[int]time.Duration{1: 10 * time.Second, 2: 20 * time.Second, 3: 25 * time.Second, 9: 25 * time.Second} {
		got := p.BackoffAfter("A", attempts)
		max := base + base/4
		if max > p.BackoffCap {
			max = p.BackoffCap
		}
		if got < base || got > max {
			t.Errorf("BackoffAfter(A, %d) = %v, want %v..%v", attempts, got, base, max)
		}
		if again := p.BackoffAfter("A", attempts); again != got {
			t.Errorf("BackoffAfter(A, %d) gave %v, then %v: a rule must answer the same", attempts, got, again)
		}
	}
	// Tasks failing together do not all come back together.
	seen := map[time.Duration]bool{}
	for i := 0; i < 20; i++ {
		seen[p.BackoffAfter(fmt.Sprintf("T%d", i), 1)] = true
	}
	if len(seen) < 10 {
		t.Errorf("20 tasks share %d distinct backoffs: no jitter", len(seen))
	}
	tk := task("A", state.Failed)
	tk.Attempts = 2
	if next, nb := p.AfterFailure(tk, now); next != state.Failed || !nb.Equal(now.Add(p.BackoffAfter("A", 2))) {
		t.Errorf("attempt 2: %s until %v", next, nb)
	}
	tk.Attempts = 3
	if next, _ := p.AfterFailure(tk, now); next != state.Blocked {
		t.Errorf("attempt 3 of 3: %s, want blocked", next)
	}
}

func TestOwnWork(t *testing.T) {
	other := func(p string) bool { return strings.HasPrefix(p, "b/") }
	touched, own := OwnWork([]CommitFiles{
		{"c1", []string{"a/x"}},
		{"c2", []string{"b/y"}},        // another task's
		{"c3", []string{"a/z", "b/w"}}, // mixed: judged whole, as this task's
	}, other)
	if own != 2 || strings.Join(touched, ",") != "a/x,a/z,b/w" {
		t.Errorf("OwnWork = %v, %d", touched, own)
	}
	if _, own := OwnWork([]CommitFiles{{"c", []string{"b/y"}}}, other); own != 0 {
		t.Errorf("only foreign work counted %d own commits", own)
	}
}

func TestReadyOrder(t *testing.T) {
	a, b, c, d := task("A", state.Done), task("B", state.Pending, "A"), task("C", state.Pending), task("D", state.Pending, "X")
	c.Level, b.Level = 2, 2
	c.Dependents = []string{"Z", "Y"}
	got := DefaultPolicy.ReadyOrder([]*state.Task{a, b, c, d}, now)
	var ids []string
	for _, t := range got {
		ids = append(ids, t.ID())
	}
	if strings.Join(ids, ",") != "C,B" {
		t.Errorf("ReadyOrder = %v, want C (more dependents) before B; D waits", ids)
	}
}

func TestSmallGates(t *testing.T) {
	held := task("A", state.Claimed)
	held.Worker = "w1"
	if err := Holder(held, "fail", "w1"); err != nil {
		t.Error(err)
	}
	if got := reasons(Holder(held, "fail", "w2")); !strings.Contains(got, "claim lost") {
		t.Errorf("Holder by another: %q", got)
	}
	if Retry(task("A", state.Pending)) == nil || Retry(task("A", state.Blocked)) != nil {
		t.Error("Retry: only blocked or failed tasks")
	}
	hi := task("A", state.Pending)
	hi.Spec.Risk = "high"
	if Approve(task("A", state.Pending)) == nil || Approve(hi) != nil {
		t.Error("Approve: only high and critical tasks")
	}
	l := state.Lock{Path: "x", Owner: "u@h", Expires: now.Add(time.Hour)}
	if Unlock(l, "v@h", false, now) == nil || Unlock(l, "v@h", true, now) != nil || Unlock(l, "u@h", false, now) != nil {
		t.Error("Unlock: another owner's lock needs --force")
	}
	if Lock("x/y", "v@h", []state.Lock{{Path: "x/", Owner: "u@h", Expires: now.Add(time.Hour)}}, now) == nil {
		t.Error("Lock: a path under another owner's directory lock must be refused")
	}
}

// TestMayRun: a pending task may always run; a failed one while it has
// attempts left; no other status ever.
func TestMayRun(t *testing.T) {
	p := Policy{MaxAttempts: 2}
	for _, st := range state.Statuses {
		for attempts := 0; attempts <= 3; attempts++ {
			want := st == state.Pending || st == state.Failed && attempts < 2
			if got := p.MayRun(st, attempts); got != want {
				t.Errorf("MayRun(%s, %d) with at most 2 attempts = %v, want %v", st, attempts, got, want)
			}
		}
	}
}
