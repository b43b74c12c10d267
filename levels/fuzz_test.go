package levels

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

func FuzzLoad(f *testing.F) {
	for _, name := range []string{"minimal.json", "zerg-like.json"} {
		if data, err := os.ReadFile(filepath.Join("..", "testdata", "graphs", name)); err == nil {
			f.Add(data)
		}
	}
	f.Add(doc(tk("A", files("create", "src/")), tk("B", deps("A"), files("modify", "src/a.go"), `"level":1`),
		tk("C", files("modify", "*.go")), tk("D", `"soft_dependencies":["A","D"]`)))
	f.Add(doc(tk("A", deps("B")), tk("B", deps("A"))))
	f.Add([]byte(`{"feature":"f","tasks":[{"id":1}],"total_tasks":"x"}`))
	f.Add([]byte(`{"feature":"f","tasks":[`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p1, e1 := Load(data)
		p2, e2 := Load(data)
		if !reflect.DeepEqual(p1, p2) || !slices.Equal(e1, e2) {
			t.Fatalf("not deterministic:\n%q\n%q", strs(e1), strs(e2))
		}
		if (p1 == nil) == (len(e1) == 0) {
			t.Fatalf("plan %v with problems %q", p1 != nil, strs(e1))
		}
		g, pe := Parse(data)
		if g == nil && len(pe) == 0 {
			t.Fatal("nil graph without problems")
		}
		if p1 == nil {
			return
		}
		// A valid graph, written back out, plans the same.
		out, err := p1.Graph.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		p3, e3 := Load(out)
		if len(e3) > 0 {
			t.Fatalf("rewritten graph invalid: %q\n%s", strs(e3), out)
		}
		if !reflect.DeepEqual(p1.Levels, p3.Levels) || !slices.Equal(p1.Warnings, p3.Warnings) {
			t.Fatalf("rewritten graph plans differently:\n%q\n%q", p1.Levels, p3.Levels)
		}
	})
}
