package engine

import (
	"fmt"
	"time"

	"github.com/git-zerg/git-zerg/state"
)

// The few words the engine's messages and the command line share.

// Plural is "1 task", "2 tasks".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// ShortHash is the abbreviation of a commit id that messages use.
func ShortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// roundDur rounds a duration for people.
func roundDur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}

// CountStatuses counts tasks by status; every status has a key.
func CountStatuses(tasks []*state.Task) map[string]int {
	m := map[string]int{}
	for _, st := range state.Statuses {
		m[string(st)] = 0
	}
	for _, t := range tasks {
		m[string(t.Status)]++
	}
	return m
}

// CountsLine is "3 done, 1 blocked", in the order of the states.
func CountsLine(m map[string]int) string {
	s := ""
	for _, st := range state.Statuses {
		if n := m[string(st)]; n > 0 {
			if s != "" {
				s += ", "
			}
			s += fmt.Sprintf("%d %s", n, st)
		}
	}
	return s
}
