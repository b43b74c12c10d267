package claude

import (
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ready := StopFacts{Feature: "demo", Level: 2, Ready: []TaskRef{{ID: "T4"}, {ID: "T5"}, {ID: "T6"}}, Now: now}
	cases := []struct {
		name    string
		sess    Session
		facts   StopFacts
		block   bool
		reason  string // a part of it
		letWhy  string
		observe bool
	}{
		{name: "ready", facts: ready, block: true,
			reason: "git zerg rush --mode task --json shows 3 ready tasks of level 2 (T4, T5, T6)"},
		{name: "claimed", facts: StopFacts{Claimed: []TaskRef{{ID: "T1", Worker: "w1"}}, Ready: ready.Ready, Now: now}, block: true,
			reason: "T1 (w1) is still claimed: as each subagent returns, run git zerg done --worker <worker> <id>"},
		{name: "backoff", facts: StopFacts{Backoff: []TaskRef{{ID: "T2", NotBefore: now.Add(20 * time.Second)}, {ID: "T3", NotBefore: now.Add(8 * time.Second)}}, Now: now}, block: true,
			reason: "T3 failed and can be tried again after 2026-01-01T12:00:08Z (in 8s): wait (sleep 8)"},
		{name: "complete", facts: StopFacts{Feature: "demo", Complete: true}, letWhy: "feature demo is complete"},
		{name: "failures", facts: StopFacts{Failures: 3, FailedIDs: []string{"T3", "T2", "T1"}, Ready: ready.Ready}, letWhy: "3 failed tasks in a row (T3, T2, T1)"},
		{name: "two failures", facts: StopFacts{Failures: 2, Ready: ready.Ready}, block: true, reason: "ready"},
		{name: "idle", sess: Session{Rounds: 9, Idle: 8}, facts: ready, letWhy: "8 stops in a row without a transition"},
		{name: "nearly idle", sess: Session{Rounds: 8, Idle: 7}, facts: ready, block: true, reason: "[7 of 8 stops without a transition]"},
		{name: "rounds", sess: Session{Rounds: 101}, facts: ready, letWhy: "100 rounds in this session"},
		{name: "last round", sess: Session{Rounds: 100}, facts: ready, block: true, reason: "ready"},
		{name: "nothing", facts: StopFacts{Level: 1, Now: now}, letWhy: "nothing this session can run"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			block, reason, why := decide(&c.sess, c.facts)
			if block != c.block {
				t.Fatalf("block = %v (%q, %q)", block, reason, why)
			}
			if block && (!strings.HasPrefix(reason, "git-zerg: ") || !strings.Contains(reason, c.reason)) {
				t.Errorf("reason %q, want it to hold %q", reason, c.reason)
			}
			if !block && (reason != "" || !strings.Contains(why, c.letWhy)) {
				t.Errorf("let go with %q (reason %q), want %q", why, reason, c.letWhy)
			}
		})
	}
}

func TestSessionObserve(t *testing.T) {
	var s Session
	s.Observe("demo", "a", false)
	if s.Rounds != 1 || s.Idle != 0 {
		t.Fatalf("first stop: %+v", s)
	}
	for i := 1; i <= 3; i++ {
		s.Observe("demo", "a", false)
		if s.Idle != i {
			t.Fatalf("stop %d: %+v", i+1, s)
		}
	}
	s.Observe("demo", "b", true)
	if s.Idle != 0 || s.Rounds != 5 || s.Tip != "b" {
		t.Fatalf("after a transition: %+v", s)
	}
	s.Observe("demo", "c", false) // moved, but only heartbeats
	if s.Idle != 1 {
		t.Fatalf("a tip moved by no transition: %+v", s)
	}
	s.Observe("other", "x", false)
	if s.Idle != 0 || s.Feature != "other" {
		t.Fatalf("another feature: %+v", s)
	}
}

func TestDriving(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	for _, c := range []struct {
		text string
		want bool
	}{
		{`{"type":"user","message":{"content":"<command-name>/zerg:rush</command-name>"}}`, true},
		{long + `"command":"git zerg rush --mode task --json"` + long, true},
		{`{"message":"please fix the README"}` + long, false},
		{"", false},
	} {
		// One byte at a time too: a marker split over reads is still seen.
		for _, r := range []*strings.Reader{strings.NewReader(c.text)} {
			got, err := driving(r)
			if err != nil || got != c.want {
				t.Errorf("Driving(%.40q...) = %v, %v", c.text, got, err)
			}
		}
		if len(c.text) < 1000 {
			got, err := driving(iotest.OneByteReader(strings.NewReader(c.text)))
			if err != nil || got != c.want {
				t.Errorf("Driving one byte at a time (%.40q) = %v, %v", c.text, got, err)
			}
		}
	}
}
