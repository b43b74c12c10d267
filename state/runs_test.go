package state

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/levels"
)

func TestRuns(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 3, 1, 12, 0, s, 0, time.UTC) }
	ev := func(s int, op Op, from, to Status, worker string) Event {
		return Event{At: at(s), Op: op, From: from, To: to, Worker: worker}
	}
	task := &Task{Spec: &levels.Task{ID: "A"}, History: []Event{
		ev(0, OpPlan, "", Pending, ""),
		ev(1, OpClaim, Pending, Claimed, "w1"),
		ev(2, OpHeartbeat, Claimed, Claimed, "w1"),
		ev(3, OpFail, Claimed, Failed, "w1"),
		ev(4, OpBackoff, Failed, Pending, ""),
		ev(5, OpClaim, Pending, Claimed, "w2"),
		ev(6, OpInterrupt, Claimed, Pending, "w2"),
		ev(7, OpClaim, Pending, Claimed, "w2"),
		ev(9, OpFail, Claimed, Failed, "w2"),
		ev(10, OpBlock, Failed, Blocked, ""),
		ev(11, OpRetry, Blocked, Pending, ""),
		ev(12, OpClaim, Pending, Claimed, "w3"),
		ev(15, OpDone, Claimed, Verified, "w3"),
		ev(16, OpMerge, Verified, Done, ""),
		ev(17, OpReopen, Done, Blocked, ""),
		ev(18, OpRetry, Blocked, Pending, ""),
		ev(19, OpClaim, Pending, Claimed, "w1"),
	}}
	var got []string
	for _, r := range task.Runs() {
		got = append(got, fmt.Sprintf("%d %s %v+%v %s %v", r.Attempt, r.Worker, r.Start.Second(), r.Took(at(20)), r.Outcome, r.Counted))
	}
	want := []string{
		"1 w1 1+2s failed true",
		"2 w2 5+1s pending false", // interrupted: its number is taken again
		"2 w2 7+2s failed true",
		"3 w3 12+3s verified true", // after a retry the numbers go on
		"4 w1 19+1s  true",         // still running
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Runs =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
