package flow

import (
	"errors"
	"strings"
	"testing"

	"github.com/git-zerg/git-zerg/engine"
)

func TestShipVerdict(t *testing.T) {
	if err := (&ShipResult{Shipped: []Shipped{{Task: "A"}}}).Verdict(); err != nil {
		t.Fatal(err)
	}
	wantKind(t, (&ShipResult{Refused: []string{"A: x", "B: y"}}).Verdict(), engine.Refused, "ship refused for 2 tasks (each named above)")
}

func TestIssuesFeature(t *testing.T) {
	for _, c := range [][4]string{{"n", "l", "m", "n"}, {"", "l", "m", "l"}, {"", "", "m", "m"}} {
		if got, err := IssuesFeature(c[0], c[1], c[2]); err != nil || got != c[3] {
			t.Errorf("IssuesFeature%q = %q, %v", c[:3], got, err)
		}
	}
	_, err := IssuesFeature("", "", "")
	wantKind(t, err, engine.Usage, "name the feature")
	_, err = IssuesFeature("", "a b", "")
	wantKind(t, err, engine.Usage, `bad feature name "a b"`)
	probs := []IssueProblem{{}}
	wantKind(t, IssuesVerdict("f", probs, nil, false), engine.Usage, "cannot plan f from issues (1 problem)")
	if err := IssuesVerdict("f", nil, probs, false); err != nil {
		t.Fatalf("warnings without --strict: %v", err)
	}
	wantKind(t, IssuesVerdict("f", nil, probs, true), engine.Usage, "(1 warning under --strict)")
}

func wantKind(t *testing.T, err error, kind engine.Kind, what string) {
	t.Helper()
	var ee *engine.Error
	if !errors.As(err, &ee) || ee.Kind != kind || !strings.Contains(ee.Error(), what) {
		t.Fatalf("got %v, want a kind %d error with %q", err, kind, what)
	}
}
