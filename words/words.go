// Package words is the wording git-zerg's messages share, whichever
// package prints them: "1 task" and "2 branches", a commit cut to the
// length messages use, a duration for people, the counts of the tasks by
// status and their line ("3 done, 1 blocked"). One place, so that a
// message says a thing the same way wherever it comes from.
package words

import (
	"fmt"
	"strings"
	"time"

	"github.com/git-zerg/git-zerg/state"
)

// Plural is "1 task", "2 tasks" (and "2 branches", "2 directories").
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	switch {
	case strings.HasSuffix(noun, "ch") || strings.HasSuffix(noun, "sh"):
		return fmt.Sprintf("%d %ses", n, noun)
	case strings.HasSuffix(noun, "y") && !strings.HasSuffix(noun, "ey"):
		return fmt.Sprintf("%d %sies", n, noun[:len(noun)-1])
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// ShortHash is a commit id cut to 12 characters.
func ShortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// Duration is a duration for people: to the second under a minute, else
// to the minute.
func Duration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}

// Counts counts tasks by status; every status has a key.
func Counts(tasks []*state.Task) map[string]int {
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
