package view

import (
	"context"
	"fmt"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/hooks"
)

// TestGateRuns: a snapshot carries the feature's gate runs from their
// records, oldest first; records of another feature, forged ones, ones
// that ran no gate and ones made before records said when are left out.
func TestGateRuns(t *testing.T) {
	s := newStore(t)
	planThree(t, s)
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 250e6, time.UTC)
	record := gateRecorder(t, s)
	failed := record(gitstore.GatesFailedRef, "gates failed on tree TREE: lint, test", "f", at.Add(time.Minute), 2, true)
	passed := record(gitstore.GatesRef, "gates passed on tree TREE", "f", at, 1, true)
	record(gitstore.GatesRef, "gates passed on tree TREE", "other", at, 1, true)
	record(gitstore.GatesRef, "gates passed on tree TREE", "f", at, 1, false)
	record(gitstore.GatesRef, "gates passed on tree TREE", "f", at, 0, true)
	record(gitstore.GatesRef, "gates passed on tree TREE", "", at, 1, true)

	src := NewSource(ctx, s, time.Now)
	sn, err := src.Snapshot("f")
	if err != nil {
		t.Fatal(err)
	}
	want := []GateRun{
		{Tree: passed, Start: at, End: at.Add(1500 * time.Millisecond), Passed: true},
		{Tree: failed, Start: at.Add(time.Minute), End: at.Add(time.Minute + 1500*time.Millisecond), Failed: []string{"lint", "test"}},
	}
	if !reflect.DeepEqual(sn.Gates, want) {
		t.Fatalf("gate runs %+v, want %+v", sn.Gates, want)
	}
	if len(src.gates) != 6 {
		t.Errorf("%d records remembered, want the 6 there are", len(src.gates))
	}
	// A record that goes is forgotten.
	if err := s.DeleteRef(ctx, gitstore.GatesFailedRef(failed)); err != nil {
		t.Fatal(err)
	}
	sn, err = src.Snapshot("f")
	if err != nil {
		t.Fatal(err)
	}
	if len(sn.Gates) != 1 || sn.Gates[0].Tree != passed || len(src.gates) != 5 {
		t.Errorf("after a record went: runs %+v, %d remembered", sn.Gates, len(src.gates))
	}
	if sameGates(sn.Gates, want) || !sameGates(want, want) {
		t.Error("sameGates does not tell the lists apart")
	}
}

// TestPollSeesGateRuns: a view is told of a gate run recorded while the
// state stays where it is (the gates failed and the rush stopped), and of
// nothing while neither moves.
func TestPollSeesGateRuns(t *testing.T) {
	s := newStore(t)
	planThree(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	src := NewSource(ctx, s, time.Now)
	snaps := make(chan *Snapshot, 16)
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		src.Poll(ctx, "f", 5*time.Millisecond, func(sn *Snapshot, err error) {
			if err != nil {
				t.Error(err)
				return
			}
			snaps <- sn
		})
	}()
	defer func() { cancel(); <-polled }()
	next := func(what string) *Snapshot {
		t.Helper()
		select {
		case sn := <-snaps:
			return sn
		case <-time.After(10 * time.Second):
			t.Fatalf("no snapshot %s", what)
			return nil
		}
	}
	if sn := next("at first"); len(sn.Gates) != 0 {
		t.Fatalf("gate runs before any: %+v", sn.Gates)
	}
	tip, err := src.Tip("f")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	failed := gateRecorder(t, s)(gitstore.GatesFailedRef, "gates failed on tree TREE: test", "f", at, 1, true)
	sn := next("after a gate run was recorded")
	if len(sn.Gates) != 1 || sn.Gates[0].Tree != failed || sn.Gates[0].Passed || sn.Tip != tip {
		t.Fatalf("after the failed run: tip %s (was %s), gate runs %+v", sn.Tip, tip, sn.Gates)
	}
	// A round of checks with nothing new tells nothing: the next snapshot
	// is the one of the next change.
	cancel()
	<-polled
	select {
	case sn := <-snaps:
		t.Errorf("a snapshot with nothing changed: %+v", sn.Gates)
	default:
	}
}

// gateRecorder makes gate records in s's repository: each records a run
// from start on a tree of its own, with that many gates passed, for
// feature (none when ""), signed as git-zerg signs them or not, under the
// ref that ref names for the tree, which it returns.
func gateRecorder(t *testing.T, s *gitstore.Store) func(ref func(string) string, subject, feature string, start time.Time, gates int, sign bool) string {
	t.Helper()
	ctx := context.Background()
	head, err := exec.Command("git", "-C", s.Top, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	return func(ref func(string) string, subject, feature string, start time.Time, gates int, sign bool) string {
		t.Helper()
		n++
		blob, err := exec.Command("sh", "-c", fmt.Sprintf("cd %s && echo %d | git hash-object -w --stdin", s.Top, n)).Output()
		if err != nil {
			t.Fatal(err)
		}
		mk := exec.Command("git", "-C", s.Top, "mktree")
		mk.Stdin = strings.NewReader(fmt.Sprintf("100644 blob %s\tf\n", strings.TrimSpace(string(blob))))
		out, err := mk.Output()
		if err != nil {
			t.Fatal(err)
		}
		tree := strings.TrimSpace(string(out))
		msg := strings.ReplaceAll(subject, "TREE", tree) + "\n\nZerg-Gates: set\n"
		if feature != "" {
			msg += hooks.GateRunLines(feature, start, start.Add(1500*time.Millisecond))
		}
		for i := 0; i < gates; i++ {
			msg += fmt.Sprintf("Zerg-Gate: g%d passed in 1s\n", i)
		}
		if sign {
			if msg, err = hooks.SignGateRecord(s, tree, msg); err != nil {
				t.Fatal(err)
			}
		}
		c, err := s.CommitTree(tree, []string{strings.TrimSpace(string(head))}, msg, gitstore.Signature("z", "z@e", start))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetRef(ctx, ref(tree), c); err != nil {
			t.Fatal(err)
		}
		return tree
	}
}
