package words

import (
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/state"
)

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    int
		noun string
		want string
	}{
		{1, "task", "1 task"}, {0, "task", "0 tasks"}, {2, "branch", "2 branches"}, {3, "push", "3 pushes"},
		{2, "directory", "2 directories"}, {2, "key", "2 keys"}, {2, "new commit", "2 new commits"},
	} {
		if got := Plural(c.n, c.noun); got != c.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}

func TestCounts(t *testing.T) {
	tasks := []*state.Task{{Status: state.Done}, {Status: state.Done}, {Status: state.Blocked}}
	m := Counts(tasks)
	if len(m) != len(state.Statuses) || m["done"] != 2 || m["blocked"] != 1 || m["pending"] != 0 {
		t.Errorf("Counts = %v, want every status, 2 done and 1 blocked", m)
	}
	if got := CountsLine(m); got != "2 done, 1 blocked" {
		t.Errorf("CountsLine = %q", got)
	}
	if got := Duration(90*time.Second + 20*time.Second); got != "2m0s" {
		t.Errorf("Duration(1m50s) = %q, want to the minute", got)
	}
	if got, want := ShortHash("0123456789abcdef0123"), "0123456789ab"; got != want {
		t.Errorf("ShortHash = %q, want %q", got, want)
	}
}
