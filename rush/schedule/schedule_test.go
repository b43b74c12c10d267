package schedule

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

// task is a task of the decisions' tables: id at level, with status and
// its dependencies.
func task(id string, level int, st state.Status, deps ...string) *state.Task {
	return &state.Task{Spec: &levels.Task{ID: id, Dependencies: deps}, Level: level, Status: st}
}

func risky(t *state.Task) *state.Task { t.Spec.Risk = "high"; return t }

func approved(t *state.Task) *state.Task { t.Approved = "someone"; return t }

func backoff(t *state.Task, until time.Time, attempts int) *state.Task {
	t.NotBefore, t.Attempts = until, attempts
	return t
}

func TestLevelSettledAndDone(t *testing.T) {
	for _, c := range []struct {
		name            string
		tasks           []*state.Task
		settled, isDone bool
	}{
		{"empty level", []*state.Task{task("A", 2, state.Pending)}, true, true},
		{"all done", []*state.Task{task("A", 1, state.Done), task("B", 1, state.Done)}, true, true},
		{"done and blocked", []*state.Task{task("A", 1, state.Done), task("B", 1, state.Blocked)}, true, true},
		{"verified waits to merge", []*state.Task{task("A", 1, state.Done), task("B", 1, state.Verified)}, true, false},
		{"claimed runs", []*state.Task{task("A", 1, state.Verified), task("B", 1, state.Claimed)}, false, false},
		{"pending", []*state.Task{task("A", 1, state.Pending)}, false, false},
		{"failed may run again", []*state.Task{task("A", 1, state.Failed)}, false, false},
		{"other levels do not count", []*state.Task{task("A", 1, state.Done), task("B", 2, state.Pending)}, true, true},
	} {
		if got := LevelSettled(c.tasks, 1); got != c.settled {
			t.Errorf("%s: levelSettled = %v, want %v", c.name, got, c.settled)
		}
		if got := LevelDone(c.tasks, 1); got != c.isDone {
			t.Errorf("%s: levelDone = %v, want %v", c.name, got, c.isDone)
		}
	}
}

func TestHopeless(t *testing.T) {
	var seven []*state.Task
	seven = append(seven, task("X", 1, state.Blocked))
	for i := 1; i <= 7; i++ {
		seven = append(seven, task(fmt.Sprintf("T%d", i), 2, state.Pending, "X"))
	}
	for _, c := range []struct {
		name  string
		tasks []*state.Task
		want  string
	}{
		{"nothing left", []*state.Task{task("A", 1, state.Done)}, ""},
		{"a task can run", []*state.Task{task("A", 1, state.Pending)}, ""},
		{"waits on a blocked task", []*state.Task{task("X", 0, state.Blocked), task("A", 1, state.Pending, "X")},
			"A waits on blocked X"},
		{"waits on a blocked task through a pending one",
			[]*state.Task{task("X", 0, state.Blocked), task("Y", 0, state.Pending, "X"), task("A", 1, state.Pending, "Y")},
			"A waits on blocked X"},
		{"a done dependency hides nothing", []*state.Task{task("X", 0, state.Done), task("A", 1, state.Pending, "X")}, ""},
		{"needs an approval", []*state.Task{risky(task("A", 1, state.Pending))}, "A needs git zerg approve A"},
		{"approved can run", []*state.Task{approved(risky(task("A", 1, state.Pending)))}, ""},
		{"one runnable task is hope", []*state.Task{task("X", 0, state.Blocked), task("A", 1, state.Pending, "X"), task("B", 1, state.Pending)}, ""},
		{"verified work is hope", []*state.Task{task("X", 0, state.Blocked), task("A", 1, state.Pending, "X"), task("B", 1, state.Verified)}, ""},
		{"the first five named", seven,
			"T1 waits on blocked X; T2 waits on blocked X; T3 waits on blocked X; T4 waits on blocked X; T5 waits on blocked X; 2 more"},
	} {
		level := 1
		if c.name == "the first five named" {
			level = 2
		}
		if got := Hopeless(c.tasks, level); got != c.want {
			t.Errorf("%s: hopeless = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestLevelWait(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	policy := gates.DefaultPolicy
	poll := 100 * time.Millisecond
	for _, c := range []struct {
		name     string
		tasks    []*state.Task
		wait     time.Duration
		settled  bool
		backoffs string
	}{
		{"settled", []*state.Task{task("A", 1, state.Done), task("B", 1, state.Verified)}, 0, true, ""},
		{"someone else's claim: poll", []*state.Task{task("A", 1, state.Claimed)}, poll, false, ""},
		{"ready now: the shortest wait", []*state.Task{task("A", 1, state.Pending)}, 10 * time.Millisecond, false, ""},
		{"a backoff", []*state.Task{backoff(task("A", 1, state.Failed), now.Add(7*time.Second), 1)}, 7 * time.Second, false, "A"},
		{"the soonest backoff", []*state.Task{backoff(task("A", 1, state.Failed), now.Add(7*time.Second), 1),
			backoff(task("B", 1, state.Failed), now.Add(3*time.Second), 1)}, 3 * time.Second, false, "A,B"},
		{"a backoff sooner than the poll", []*state.Task{task("A", 1, state.Claimed),
			backoff(task("B", 1, state.Failed), now.Add(50*time.Millisecond), 1)}, 50 * time.Millisecond, false, "B"},
		{"out of attempts: never", []*state.Task{backoff(task("A", 1, state.Failed), now.Add(time.Second), 3)}, 0, false, ""},
		{"waits on a dependency: never", []*state.Task{task("X", 0, state.Blocked), task("A", 1, state.Pending, "X")}, 0, false, ""},
		{"waits for a person: never", []*state.Task{risky(task("A", 1, state.Pending))}, 0, false, ""},
	} {
		wait, settled, bs := LevelWait(c.tasks, 1, policy, now, poll)
		var ids []string
		for _, b := range bs {
			ids = append(ids, b.ID())
		}
		if wait != c.wait || settled != c.settled || strings.Join(ids, ",") != c.backoffs {
			t.Errorf("%s: levelWait = %v, %v, backoffs %q; want %v, %v, %q", c.name, wait, settled, ids, c.wait, c.settled, c.backoffs)
		}
	}
}

func TestFreshDueTable(t *testing.T) {
	end := time.Unix(1e9, 0)
	for _, c := range []struct {
		after, took time.Duration
		due         bool
	}{
		{0, 0, true}, // none ran: due at once
		{0, 400 * time.Millisecond, false},
		{199 * time.Millisecond, 400 * time.Millisecond, false},
		{200 * time.Millisecond, 400 * time.Millisecond, true},
		{150 * time.Millisecond, 50 * time.Millisecond, true}, // the rush looks every 150 ms
	} {
		if got := FreshDue(end.Add(c.after), end, c.took); got != c.due {
			t.Errorf("%v after a catch-up of %v: due %v, want %v", c.after, c.took, got, c.due)
		}
	}
}

func estimated(t *state.Task, minutes string) *state.Task {
	t.Spec.Extra = map[string]json.RawMessage{"estimate_minutes": json.RawMessage(minutes)}
	return t
}

func TestRemaining(t *testing.T) {
	for _, c := range []struct {
		name  string
		tasks []*state.Task
		want  string // id=path, in the tasks' order
	}{
		{"no estimates: a task is one", []*state.Task{task("A", 1, state.Pending), task("B", 2, state.Pending, "A"),
			task("C", 3, state.Pending, "B"), task("D", 1, state.Pending)}, "A=3 B=2 C=1 D=1"},
		{"estimates add up along the longest path", []*state.Task{estimated(task("A", 1, state.Pending), "6"),
			estimated(task("B", 1, state.Pending), "1"), estimated(task("C", 2, state.Pending, "A"), "1"),
			estimated(task("D", 2, state.Pending, "B"), "6"), estimated(task("E", 3, state.Pending, "C", "D"), "2")},
			"A=9 B=9 C=3 D=8 E=2"},
		{"a task without an estimate counts as the mean", []*state.Task{estimated(task("A", 1, state.Pending), "2"),
			estimated(task("B", 1, state.Pending), "4"), task("C", 2, state.Pending, "A")}, "A=5 B=4 C=3"},
		{"a bad estimate is none", []*state.Task{estimated(task("A", 1, state.Pending), `"soon"`),
			estimated(task("B", 1, state.Pending), "-3"), task("C", 2, state.Pending, "A")}, "A=2 B=1 C=1"},
		{"ownership orders too", []*state.Task{task("A", 1, state.Pending), func() *state.Task {
			b := task("B", 2, state.Pending)
			b.Implied = []string{"A"}
			return b
		}()}, "A=2 B=1"},
	} {
		paths := Remaining(c.tasks)
		var got []string
		for _, tk := range c.tasks {
			got = append(got, fmt.Sprintf("%s=%g", tk.ID(), paths[tk.ID()]))
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%s: remaining = %s, want %s", c.name, strings.Join(got, " "), c.want)
		}
	}
}

func TestFlowReady(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	policy := gates.DefaultPolicy
	chains := func() []*state.Task {
		return []*state.Task{
			estimated(task("A1", 1, state.Pending), "6"), estimated(task("A2", 2, state.Pending, "A1"), "1"),
			estimated(task("B1", 1, state.Pending), "1"), estimated(task("B2", 2, state.Pending, "B1"), "6"),
			estimated(task("C1", 1, state.Pending), "3"), estimated(task("C2", 2, state.Pending, "C1"), "3"),
			estimated(task("D", 1, state.Pending), "1"),
		}
	}
	for _, c := range []struct {
		name string
		edit func(ts []*state.Task) // by index in chains()
		held []string
		want string
	}{
		{"longest path first, plan order between equals", nil, nil, "A1,B1,C1,D"},
		{"a dependent starts before its level is done", func(ts []*state.Task) {
			ts[2].Status = state.Done
			ts[0].Status, ts[4].Status = state.Claimed, state.Claimed
		}, []string{"B1"}, "B2,D"},
		{"done but not in the gated staging: waits", func(ts []*state.Task) {
			ts[2].Status = state.Done
		}, nil, "A1,C1,D"},
		{"a backoff waits", func(ts []*state.Task) {
			ts[0].Status, ts[0].Attempts, ts[0].NotBefore = state.Failed, 1, now.Add(time.Minute)
		}, nil, "B1,C1,D"},
		{"a level floor waits for the levels below", func(ts []*state.Task) {
			ts[6].Spec.Level, ts[6].Level = 2, 2
			ts[0].Status, ts[2].Status = state.Done, state.Done
		}, []string{"A1", "B1"}, "C1,B2,A2"},
		{"a level floor met", func(ts []*state.Task) {
			ts[6].Spec.Level, ts[6].Level = 2, 2
			ts[0].Status, ts[2].Status, ts[4].Status = state.Done, state.Done, state.Done
		}, []string{"A1", "B1", "C1"}, "B2,C2,A2,D"},
		{"a blocked dependency holds its dependents", func(ts []*state.Task) {
			ts[0].Status = state.Blocked
		}, []string{"A1"}, "B1,C1,D"},
	} {
		ts := chains()
		if c.edit != nil {
			c.edit(ts)
		}
		held := map[string]bool{}
		for _, id := range c.held {
			held[id] = true
		}
		var ids []string
		for _, tk := range Ready(ts, policy, now, held, Remaining(ts)) {
			ids = append(ids, tk.ID())
		}
		if strings.Join(ids, ",") != c.want {
			t.Errorf("%s: flowReady = %s, want %s", c.name, strings.Join(ids, ","), c.want)
		}
	}
}

func TestWholeLevelBlocked(t *testing.T) {
	for _, c := range []struct {
		name  string
		tasks []*state.Task
		want  int
	}{
		{"none blocked", []*state.Task{task("A", 1, state.Pending)}, 0},
		{"some of a level", []*state.Task{task("A", 1, state.Blocked), task("B", 1, state.Done)}, 0},
		{"all of a level", []*state.Task{task("A", 1, state.Done), task("B", 2, state.Blocked), task("C", 3, state.Pending, "B")}, 2},
		{"the lowest of two", []*state.Task{task("A", 3, state.Blocked), task("B", 2, state.Blocked)}, 2},
	} {
		if got := WholeLevelBlocked(c.tasks); got != c.want {
			t.Errorf("%s: wholeLevelBlocked = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestLevelZeroIsTheFeature(t *testing.T) {
	ts := []*state.Task{task("A", 1, state.Done), task("B", 2, state.Claimed)}
	if LevelSettled(ts, 0) || LevelDone(ts, 0) {
		t.Error("level 0: a claimed task of level 2 is not settled")
	}
	if !LevelDone(ts, 1) {
		t.Error("level 1 alone is done")
	}
	ts[1].Status = state.Blocked
	if !LevelDone(ts, 0) {
		t.Error("level 0: done and blocked is done")
	}
}

func TestFlowOf(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	// ran is a task that ran from..to (seconds after start), ending in out.
	ran := func(tk *state.Task, runs ...any) *state.Task {
		for i := 0; i < len(runs); i += 3 {
			from, to, out := runs[i].(float64), runs[i+1].(float64), runs[i+2].(state.Status)
			tk.History = append(tk.History, state.Event{At: at(from), Op: state.OpClaim, From: state.Pending, To: state.Claimed, Worker: "w"},
				state.Event{At: at(to), Op: state.OpDone, From: state.Claimed, To: out, Worker: "w"})
		}
		return tk
	}
	tasks := []*state.Task{
		ran(task("A1", 1, state.Done), 0.0, 6.0, state.Verified),
		ran(task("A2", 2, state.Done, "A1"), 6.5, 7.5, state.Verified),
		ran(task("B1", 1, state.Done), 0.0, 1.0, state.Failed, 1.0, 2.0, state.Verified),
		ran(task("B2", 2, state.Done, "B1"), 2.5, 8.5, state.Verified),
		ran(task("C", 1, state.Done), -5.0, -1.0, state.Verified), // an earlier rush's
	}
	f := FlowOf(tasks, start, 9*time.Second, 3)
	if f.Critical != 7*time.Second || strings.Join(f.Path, ",") != "A1,A2" {
		t.Errorf("critical path %v %v, want 7s A1,A2 (B1's failed run is no part of it)", f.Critical, f.Path)
	}
	// Busy: 6 + 1 + 1 + 1 + 6 = 15 s of 27.
	if got := fmt.Sprintf("%.3f", f.Busy); got != fmt.Sprintf("%.3f", 15.0/27) {
		t.Errorf("busy %s, want 15/27", got)
	}
	if f.Wall != 9*time.Second || f.Workers != 3 {
		t.Errorf("flow %+v", f)
	}
}

// TestFlowEligible: from a staging that holds the work of held, a task may
// start when its dependencies are all there, and one the graph puts at a
// level only once every task of the levels below is there too.
func TestFlowEligible(t *testing.T) {
	floor := task("F", 3, state.Pending)
	floor.Spec.Level = 3
	tasks := []*state.Task{task("A1", 1, state.Done), task("A2", 2, state.Pending, "A1"),
		task("B1", 1, state.Claimed), task("B2", 2, state.Pending, "B1"), floor}
	ok := Eligible(tasks, map[string]bool{"A1": true})
	for id, want := range map[string]bool{"A1": true, "A2": true, "B1": true, "B2": false, "F": false} {
		for _, tk := range tasks {
			if tk.ID() == id && ok(tk) != want {
				t.Errorf("%s eligible with A1 held: %v, want %v", id, !want, want)
			}
		}
	}
	if !Eligible(tasks, map[string]bool{"A1": true, "A2": true, "B1": true, "B2": true})(floor) {
		t.Error("F not eligible once every task below its level is held")
	}
}

// TestMergeDue: the host with the first name among this one and those
// seen active within the grace merges every verified task at once; any
// other host merges nothing while that one lives, and a host's work once
// that host has shown no sign of life for the grace; what is no longer
// verified is forgotten.
func TestMergeDue(t *testing.T) {
	at := time.Unix(1e9, 0)
	grace := 3 * time.Second
	mine := task("A", 1, state.Verified)
	mine.Host, mine.Commit = "host2", "a1"
	theirs := task("B", 1, state.Verified)
	theirs.Host, theirs.Commit = "host1", "b1"
	third := task("C", 1, state.Verified)
	third.Host, third.Commit = "host3", "c1"
	ids := func(ts []*state.Task) string {
		var s []string
		for _, t := range ts {
			s = append(s, t.ID())
		}
		return strings.Join(s, " ")
	}
	verified := []*state.Task{mine, theirs, third}
	for _, c := range []struct {
		name   string
		self   string
		active map[string]time.Time
		now    time.Time
		want   string
	}{
		{"the first name, alone", "host2", map[string]time.Time{"host3": at}, at, "A B C"},
		{"a host with a first name is active", "host2", map[string]time.Time{"host1": at, "host3": at}, at, ""},
		{"it was active 2 s ago", "host2", map[string]time.Time{"host1": at.Add(-2 * time.Second)}, at, ""},
		{"it is quiet for the grace", "host2", map[string]time.Time{"host1": at.Add(-3 * time.Second)}, at, "A B C"},
		{"never seen to change: not a merger", "host2", map[string]time.Time{}, at, "A B C"},
		{"another merges; the third host quiet since its work was seen", "host3", map[string]time.Time{"host1": at.Add(5 * time.Second), "host3": at.Add(-time.Second)}, at.Add(5 * time.Second), "A C"},
	} {
		seen := map[string]time.Time{}
		if c.now.After(at) {
			mergeDue(verified, c.self, seen, map[string]time.Time{}, at, grace) // first seen at at
		}
		if got := ids(mergeDue(verified, c.self, seen, c.active, c.now, grace)); got != c.want {
			t.Errorf("%s: due %q, want %q", c.name, got, c.want)
		}
	}

	seen := map[string]time.Time{}
	active := map[string]time.Time{"host1": at}
	mergeDue(verified, "host3", seen, active, at, grace)
	mine.Commit = "a2" // verified again with other work: seen afresh
	mergeDue(verified, "host3", seen, active, at.Add(time.Second), grace)
	if _, ok := seen["A@a1"]; ok {
		t.Error("the work no longer verified is still remembered")
	}
	if _, ok := seen["A@a2"]; !ok {
		t.Error("the work verified again is not seen")
	}
}

// TestHostSigns: what a host does changes its sign, and nothing else does.
func TestHostSigns(t *testing.T) {
	a := task("A", 1, state.Claimed)
	a.Host = "h1"
	b := task("B", 1, state.Verified)
	b.Host = "h2"
	leases := map[string]*state.Worker{"w1": {Host: "h1", Expires: time.Unix(100, 0)}}
	before := hostSigns([]*state.Task{a, b}, leases)
	leases["w1"] = &state.Worker{Host: "h1", Expires: time.Unix(200, 0)} // renewed
	after := hostSigns([]*state.Task{a, b}, leases)
	if before["h1"] == after["h1"] || before["h2"] != after["h2"] {
		t.Errorf("a renewal of h1's lease: h1 %q → %q, h2 %q → %q", before["h1"], after["h1"], before["h2"], after["h2"])
	}
	b.History = append(b.History, state.Event{})
	if again := hostSigns([]*state.Task{a, b}, leases); again["h2"] == after["h2"] {
		t.Error("a transition of h2's task leaves its sign as it was")
	}
}

// TestJoinLost: after a lost race a host merges, besides its own work,
// every other verified task, each once, and nothing that is not verified.
func TestJoinLost(t *testing.T) {
	mk := func(id string, st state.Status, commit string) *state.Task {
		tk := task(id, 1, st)
		tk.Commit = commit
		return tk
	}
	tasks := []*state.Task{
		mk("A", state.Verified, "a1"), // this host's, already merged here
		mk("B", state.Verified, "b1"), // another host's
		mk("C", state.Claimed, ""),
		mk("D", state.Done, "d1"),
		mk("E", state.Verified, "e1"),
	}
	var got []string
	for _, tk := range JoinLost([]string{"A"}, tasks) {
		got = append(got, tk.ID())
	}
	if want := []string{"B", "E"}; !slices.Equal(got, want) {
		t.Errorf("JoinLost = %v, want %v", got, want)
	}
}

// A queue's host with the first id among the active merges every
// verified task that was not merged yet, and has something to do while
// the staging it builds on lacks work another host merged. (Who merges
// when, by host, is TestMergeDue's.)
func TestMergeQueueDue(t *testing.T) {
	at := time.Unix(1e9, 0)
	other := task("B", 1, state.Verified)
	other.Host, other.Commit = "h2", "b1"
	mine := task("A", 1, state.Verified)
	mine.Host, mine.Commit = "h1", "a1"
	done := task("C", 1, state.Done)
	tasks := []*state.Task{mine, other, done}
	q := NewMergeQueue("h1", 10*time.Second)
	ids := func(ts []*state.Task) (out []string) {
		for _, t := range ts {
			out = append(out, t.ID())
		}
		return out
	}
	due, work := q.Due(tasks, nil, []string{"B"}, map[string]bool{"C": true}, at)
	if !slices.Equal(ids(due), []string{"B"}) || !work {
		t.Errorf("due %v (work %v), want B: A is merged already, and h1 merges for all", ids(due), work)
	}
	if _, work := q.Due([]*state.Task{done}, nil, nil, map[string]bool{}, at); !work {
		t.Error("staging lacks C, done by another host: nothing to do, want its merge taken")
	}
	if _, work := q.Due([]*state.Task{done}, nil, nil, map[string]bool{"C": true}, at); work {
		t.Error("nothing verified and staging holds C: want nothing to do")
	}
}
