package levels

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// FuzzLoad holds the graph parser to: no panic; the same answer twice; a
// plan exactly when there are no errors; a place for every problem of a
// JSON object; and a valid graph, written back out, planning the same
// with the same warnings. Its seeds run with every go test;
// go test -run=^$ -fuzz=FuzzLoad -fuzztime=10s ./levels/ explores further.
func FuzzLoad(f *testing.F) {
	for _, name := range []string{"minimal.json", "zerg-like.json"} {
		if data, err := os.ReadFile(filepath.Join("..", "testdata", "graphs", name)); err == nil {
			f.Add(data)
		}
	}
	f.Add(doc(tk("A", files("create", "src/")), tk("B", deps("A"), files("modify", "src/a.go"), `"level":1`),
		tk("C", files("modify", "*.go")), tk("D", `"soft_dependencies":["A","D"]`)))
	f.Add(doc(tk("A", deps("B")), tk("B", deps("A"))))
	f.Add(doc(tk("A", files("modify", "x")), tk("B", files("modify", "x")), tk("C", files("modify", "x")), tk("D", files("modify", "x"))))
	f.Add(doc(tk("B.lock"), tk("a..b", `"dependncies":["x"]`, `"files":{"creat":[]}`), tk("C", `"verification":{"command":"a\u0000"}`)))
	f.Add([]byte(`{"feature":"a..b","total_tasks":9,"max_parallelization":4,"x-y":1,"tasks":[{"id":"A","title":"t","verification":{"command":"x"}}]}`))
	f.Add([]byte(`{"feature":"f","tasks":[{"id":1}],"total_tasks":"x"}`))
	f.Add([]byte(`{"feature":"f","tasks":[`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p1, e1, w1 := Check(data)
		p2, e2, w2 := Check(data)
		if !reflect.DeepEqual(p1, p2) || !slices.Equal(e1, e2) || !slices.Equal(w1, w2) {
			t.Fatalf("not deterministic:\n%q\n%q", strs(e1), strs(e2))
		}
		if (p1 == nil) == (len(e1) == 0) {
			t.Fatalf("plan %v with problems %q", p1 != nil, strs(e1))
		}
		if p, e := Load(data); !reflect.DeepEqual(p, p1) || !slices.Equal(e, e1) {
			t.Fatalf("Load and Check disagree")
		}
		g, pe := parseGraph(data)
		if g == nil && len(pe) == 0 {
			t.Fatal("nil graph without problems")
		}
		for _, p := range slices.Concat(e1, w1) {
			if p.Msg == "" || strings.Contains(p.Msg, "\n") {
				t.Fatalf("bad message %q", p)
			}
			// Only a problem with the JSON as a whole has no place.
			if p.Place == "" && g != nil {
				t.Fatalf("problem without a place: %q", p)
			}
		}
		if p1 == nil {
			return
		}
		for _, task := range p1.Graph.Tasks {
			if !ValidID(task.ID) {
				t.Fatalf("invalid id %q accepted", task.ID)
			}
			if commandProblem(task.Verification.Command) != "" {
				t.Fatalf("command %q accepted", task.Verification.Command)
			}
		}
		// A valid graph, written back out, plans the same.
		out, err := p1.Graph.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		if !json.Valid(out) {
			t.Fatalf("MarshalJSON wrote invalid JSON: %s", out)
		}
		p3, e3, w3 := Check(out)
		if len(e3) > 0 {
			t.Fatalf("rewritten graph invalid: %q\n%s", strs(e3), out)
		}
		if !reflect.DeepEqual(p1.Levels, p3.Levels) || !reflect.DeepEqual(p1.Implied, p3.Implied) || !slices.Equal(w1, w3) {
			t.Fatalf("rewritten graph plans differently:\n%q\n%q\n%q\n%q", p1.Levels, p3.Levels, strs(w1), strs(w3))
		}
	})
}

// FuzzID holds ValidID to the ref rules, and ValidFeatureName to ValidID.
func FuzzID(f *testing.F) {
	for _, s := range []string{"A", "B.lock", "a..b", "x.", ".x", "a/b", "a@{1}", "ok.id_1-x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		ok := ValidID(id)
		if (ValidFeatureName(id) == nil) != ok {
			t.Fatalf("ValidID(%q) = %v but ValidFeatureName says %v", id, ok, ValidFeatureName(id))
		}
		if !ok {
			return
		}
		if len(id) > 64 || strings.Contains(id, "..") || strings.HasSuffix(id, ".lock") || strings.HasSuffix(id, ".") ||
			strings.HasPrefix(id, ".") || strings.HasPrefix(id, "-") || strings.ContainsAny(id, " ~^:?*[\\/@\x7f") {
			t.Fatalf("ValidID(%q) = true", id)
		}
		for _, r := range id {
			if r < 0x21 || r > 0x7e {
				t.Fatalf("ValidID(%q) = true", id)
			}
		}
	})
}
