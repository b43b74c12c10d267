package levels

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func files(kind string, paths ...string) string {
	return fmt.Sprintf(`"files":{%q:[%s]}`, kind, strings.Join(quoteAll(paths), ","))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = quote(s)
	}
	return out
}

func deps(ids ...string) string {
	return `"dependencies":[` + strings.Join(quoteAll(ids), ",") + `]`
}

func TestPlan(t *testing.T) {
	tests := []struct {
		name       string
		in         []byte
		levels     [][]string
		implied    map[string][]string
		dependents map[string][]string
		warnings   []string
	}{
		{
			name:       "levels from hard dependencies only",
			in:         doc(tk("A"), tk("B", deps("A")), tk("C", deps("A", "B")), tk("D", `"soft_dependencies":["C"]`), tk("E")),
			levels:     [][]string{{"A", "D", "E"}, {"B"}, {"C"}},
			dependents: map[string][]string{"A": {"B", "C"}, "B": {"C"}},
		},
		{
			name:     "feature name unusable as a branch is a warning",
			in:       []byte(`{"feature":"a..b","tasks":[` + tk("A") + `]}`),
			levels:   [][]string{{"A"}},
			warnings: []string{`feature: feature name "a..b" must not contain ".." (git refs cannot)`},
		},
		{
			name:   "soft dependency cycle",
			in:     doc(tk("A", `"soft_dependencies":["B"]`), tk("B", `"soft_dependencies":["A"]`)),
			levels: [][]string{{"A", "B"}},
		},
		{
			name:       "duplicate dependency counted once",
			in:         doc(tk("A"), tk("B", deps("A", "A"))),
			levels:     [][]string{{"A"}, {"B"}},
			dependents: map[string][]string{"A": {"B"}},
		},
		{
			name:       "given level is a floor",
			in:         doc(tk("A", `"level":3`), tk("B"), tk("C", deps("B"), `"level":5`), tk("D", deps("A"))),
			levels:     [][]string{{"B"}, nil, {"A"}, {"D"}, {"C"}},
			dependents: map[string][]string{"A": {"D"}, "B": {"C"}},
		},
		{
			name:       "level too low moves up with a warning",
			in:         doc(tk("A"), tk("B", deps("A"), `"level":2`), tk("C", `"level":1`), tk("D", deps("B"), `"level":1`)),
			levels:     [][]string{{"A", "C"}, {"B"}, {"D"}},
			dependents: map[string][]string{"A": {"B"}, "B": {"D"}},
			warnings:   []string{"tasks[3].level: D is level 1 in the graph but depends on B (level 2); moved to level 3"},
		},
		{
			name:    "same path in one level",
			in:      doc(tk("A", files("create", "src/x.go")), tk("B", files("modify", "src/x.go"))),
			levels:  [][]string{{"A"}, {"B"}},
			implied: map[string][]string{"B": {"A"}}, dependents: map[string][]string{"A": {"B"}},
			warnings: []string{`tasks[1].files.modify[0]: B and A both write "src/x.go"; B now runs after A`},
		},
		{
			name:    "directory owner then a file under it",
			in:      doc(tk("A", files("modify", "src/")), tk("B", files("create", "lib/a.go", "src/a.go"))),
			levels:  [][]string{{"A"}, {"B"}},
			implied: map[string][]string{"B": {"A"}}, dependents: map[string][]string{"A": {"B"}},
			warnings: []string{`tasks[1].files.create[1]: B writes "src/a.go", which overlaps "src/" written by A; B now runs after A`},
		},
		{
			name:    "file then a directory above it",
			in:      doc(tk("A", files("create", "src/deep/a.go")), tk("B", files("modify", "src/"))),
			levels:  [][]string{{"A"}, {"B"}},
			implied: map[string][]string{"B": {"A"}}, dependents: map[string][]string{"A": {"B"}},
			warnings: []string{`tasks[1].files.modify[0]: B writes "src/", which overlaps "src/deep/a.go" written by A; B now runs after A`},
		},
		{
			name:    "glob owner",
			in:      doc(tk("A", files("create", "zerg/**/*.py")), tk("B", files("modify", "zerg/x/y.py"))),
			levels:  [][]string{{"A"}, {"B"}},
			implied: map[string][]string{"B": {"A"}}, dependents: map[string][]string{"A": {"B"}},
			warnings: []string{`tasks[1].files.modify[0]: B writes "zerg/x/y.py", which overlaps "zerg/**/*.py" written by A; B now runs after A`},
		},
		{
			name:    "root glob owns everything",
			in:      doc(tk("A", files("create", "deep/dir/a.go")), tk("B", files("modify", "*.md"))),
			levels:  [][]string{{"A"}, {"B"}},
			implied: map[string][]string{"B": {"A"}}, dependents: map[string][]string{"A": {"B"}},
			warnings: []string{`tasks[1].files.modify[0]: B writes "*.md", which overlaps "deep/dir/a.go" written by A; B now runs after A`},
		},
		{
			name:   "no overlap: siblings, prefixes that are not directories, reads",
			in:     doc(tk("A", files("modify", "src/")), tk("B", files("create", "srcs/a.go")), tk("C", files("create", "src")), tk("D", `"files":{"read":["src/a.go","srcs/a.go"]}`), tk("E", files("create", "lib/*.go")), tk("F", files("create", "lib2/x.go"))),
			levels: [][]string{{"A", "B", "C", "D", "E", "F"}},
		},
		{
			name:   "check-only tasks share a level",
			in:     doc(tk("A"), tk("B"), tk("C", `"files":{"create":[],"modify":[],"read":[]}`)),
			levels: [][]string{{"A", "B", "C"}},
		},
		{
			name:   "a task may own overlapping paths itself",
			in:     doc(tk("A", `"files":{"create":["src/a.go","src/"],"modify":["src/a.go"]}`)),
			levels: [][]string{{"A"}},
		},
		{
			name:   "same path on different levels is fine",
			in:     doc(tk("A", files("create", "x")), tk("B", deps("A"), files("modify", "x"))),
			levels: [][]string{{"A"}, {"B"}}, dependents: map[string][]string{"A": {"B"}},
		},
		{
			name:   "the later task in the file moves, whatever the ids",
			in:     doc(tk("Z", files("create", "x")), tk("A", files("modify", "x"))),
			levels: [][]string{{"Z"}, {"A"}}, implied: map[string][]string{"A": {"Z"}},
			dependents: map[string][]string{"Z": {"A"}},
			warnings:   []string{`tasks[1].files.modify[0]: A and Z both write "x"; A now runs after Z`},
		},
		{
			name:   "repeat until stable: three writers of one file form a chain",
			in:     doc(tk("A", files("modify", "x")), tk("B", files("modify", "x")), tk("C", files("modify", "x"))),
			levels: [][]string{{"A"}, {"B"}, {"C"}},
			// C waits for B, which waits for A: C need not list A too.
			implied:    map[string][]string{"B": {"A"}, "C": {"B"}},
			dependents: map[string][]string{"A": {"B"}, "B": {"C"}},
			warnings: []string{
				`tasks[1].files.modify[0]: B and A both write "x"; B now runs after A`,
				`tasks[2].files.modify[0]: C and A both write "x"; C now runs after A`,
				`tasks[2].files.modify[0]: C and B both write "x"; C now runs after B`,
			},
		},
		{
			name: "a moved task pushes its dependents and can clash again",
			// B moves to level 2 behind A; D, which depends on B, moves to
			// level 3 where it meets E (given level 3) on y.
			in: doc(tk("A", files("create", "x")), tk("B", files("modify", "x")), tk("E", `"level":3`, files("create", "y")),
				tk("D", deps("B"), files("modify", "y"))),
			levels:     [][]string{{"A"}, {"B"}, {"E"}, {"D"}},
			implied:    map[string][]string{"B": {"A"}, "D": {"E"}},
			dependents: map[string][]string{"A": {"B"}, "B": {"D"}, "E": {"D"}},
			warnings: []string{
				`tasks[1].files.modify[0]: B and A both write "x"; B now runs after A`,
				`tasks[3].files.modify[0]: D and E both write "y"; D now runs after E`,
			},
		},
		{
			name: "one task clashing with two owners waits for both",
			in: doc(tk("A", files("create", "a")), tk("B", files("create", "b")),
				tk("C", `"files":{"create":["c"],"modify":["b","a"]}`)),
			levels:     [][]string{{"A", "B"}, {"C"}},
			implied:    map[string][]string{"C": {"B", "A"}},
			dependents: map[string][]string{"A": {"C"}, "B": {"C"}},
			warnings: []string{
				`tasks[2].files.modify[0]: C and B both write "b"; C now runs after B`,
				`tasks[2].files.modify[1]: C and A both write "a"; C now runs after A`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, errs := Load(tt.in)
			if len(errs) > 0 {
				t.Fatalf("problems: %q", strs(errs))
			}
			if !reflect.DeepEqual(plan.Levels, tt.levels) {
				t.Errorf("Levels = %q, want %q", plan.Levels, tt.levels)
			}
			if tt.implied == nil {
				tt.implied = map[string][]string{}
			}
			if !reflect.DeepEqual(plan.Implied, tt.implied) {
				t.Errorf("Implied = %q, want %q", plan.Implied, tt.implied)
			}
			if tt.dependents == nil {
				tt.dependents = map[string][]string{}
			}
			if !reflect.DeepEqual(plan.Dependents, tt.dependents) {
				t.Errorf("Dependents = %q, want %q", plan.Dependents, tt.dependents)
			}
			if got := strs(plan.Warnings); !slices.Equal(got, tt.warnings) {
				t.Errorf("Warnings:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.warnings, "\n"))
			}
			for i, ids := range plan.Levels {
				for _, id := range ids {
					if plan.Level[id] != i+1 {
						t.Errorf("Level[%s] = %d, but it is in Levels[%d]", id, plan.Level[id], i)
					}
				}
			}
			if len(plan.Level) != len(plan.Graph.Tasks) {
				t.Errorf("Level has %d entries for %d tasks", len(plan.Level), len(plan.Graph.Tasks))
			}
		})
	}
}

func TestComputeMatchesLoad(t *testing.T) {
	in := doc(tk("A", files("create", "x")), tk("B", files("modify", "x"), `"level":1`), tk("C", deps("B"), `"level":1`))
	g, errs := parseGraph(in)
	if len(errs) > 0 {
		t.Fatal(strs(errs))
	}
	p1, errs := compute(g)
	if len(errs) > 0 {
		t.Fatal(strs(errs))
	}
	p2, _ := Load(in)
	if !reflect.DeepEqual(p1, p2) {
		t.Errorf("Compute and Load disagree:\n%+v\n%+v", p1, p2)
	}
	// compute does not change the graph it is given.
	if g.Tasks[1].Level != 1 || len(g.Tasks[1].Dependencies) != 0 {
		t.Errorf("graph changed: %+v", g.Tasks[1])
	}
}

// TestPlanInvariants checks random graphs against a brute-force reading
// of the rules.
func TestPlanInvariants(t *testing.T) {
	pool := []string{"a", "b", "src/a.go", "src/b.go", "src/", "src/sub/", "src/sub/c.go", "lib/", "lib/x.go",
		"*.md", "src/**/*.go", "docs/*.md", "docs/a.md", "srcs/a.go"}
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 500 {
		n := 1 + rng.IntN(25)
		g := &Graph{Feature: "f"}
		for i := range n {
			task := &Task{ID: fmt.Sprintf("T%d", i), Title: "t", Verification: Verification{Command: "true"}}
			if rng.IntN(4) == 0 {
				task.Level = 1 + rng.IntN(4)
			}
			for range rng.IntN(3) {
				if i > 0 {
					task.Dependencies = append(task.Dependencies, fmt.Sprintf("T%d", rng.IntN(i)))
				}
			}
			if i > 0 && rng.IntN(3) == 0 {
				task.SoftDependencies = append(task.SoftDependencies, fmt.Sprintf("T%d", rng.IntN(n)))
				if task.SoftDependencies[0] == task.ID {
					task.SoftDependencies = nil
				}
			}
			for range rng.IntN(3) {
				p := pool[rng.IntN(len(pool))]
				if rng.IntN(2) == 0 {
					task.Files.Create = append(task.Files.Create, p)
				} else {
					task.Files.Modify = append(task.Files.Modify, p)
				}
			}
			g.Tasks = append(g.Tasks, task)
		}
		// Shuffle so dependencies also point forward in the file.
		rng.Shuffle(len(g.Tasks), func(i, j int) { g.Tasks[i], g.Tasks[j] = g.Tasks[j], g.Tasks[i] })
		plan, errs := compute(g)
		if len(errs) > 0 {
			t.Fatalf("iteration %d: %q", iter, strs(errs))
		}
		checkInvariants(t, iter, g, plan)
	}
}

func checkInvariants(t *testing.T, iter int, g *Graph, plan *Plan) {
	t.Helper()
	at := map[string]int{}
	for i, task := range g.Tasks {
		at[task.ID] = i
	}
	lv := plan.Level
	for i, a := range g.Tasks {
		need := max(1, a.Level)
		for _, d := range a.Dependencies {
			need = max(need, lv[d]+1)
		}
		for _, d := range plan.Implied[a.ID] {
			need = max(need, lv[d]+1)
			if at[d] >= i {
				t.Errorf("iteration %d: %s implied after %s, which comes later in the file", iter, a.ID, d)
			}
			if !ownsOverlap(a, g.Tasks[at[d]]) {
				t.Errorf("iteration %d: %s implied after %s without overlap", iter, a.ID, d)
			}
		}
		// No lower than the rules force, and no higher either.
		if lv[a.ID] != need {
			t.Errorf("iteration %d: %s at level %d, rules give %d", iter, a.ID, lv[a.ID], need)
		}
		for _, b := range g.Tasks[i+1:] {
			if lv[a.ID] == lv[b.ID] && ownsOverlap(a, b) {
				t.Errorf("iteration %d: %s and %s overlap at level %d", iter, a.ID, b.ID, lv[a.ID])
			}
		}
	}
	for id, ds := range plan.Dependents {
		for _, d := range ds {
			task := g.Tasks[at[d]]
			if !slices.Contains(task.Dependencies, id) && !slices.Contains(plan.Implied[d], id) {
				t.Errorf("iteration %d: %s listed as dependent of %s", iter, d, id)
			}
		}
		if !slices.IsSortedFunc(ds, func(a, b string) int { return at[a] - at[b] }) {
			t.Errorf("iteration %d: dependents of %s not in file order: %q", iter, id, ds)
		}
	}
}

func ownsOverlap(a, b *Task) bool {
	for _, p := range a.Owned() {
		for _, q := range b.Owned() {
			if Overlap(p, q) {
				return true
			}
		}
	}
	return false
}

// genGraph builds a graph shaped like a large real one: tasks depending on
// a few recent tasks, each creating its own file, some also editing a file
// shared within their package, owning a directory or a glob.
func genGraph(n int) *Graph {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	g := &Graph{Feature: "bench"}
	for i := range n {
		pkg := i % 50
		t := &Task{
			ID:           fmt.Sprintf("TASK-%05d", i),
			Title:        "generated",
			Verification: Verification{Command: "go test ./..."},
			Files: Files{
				Create: []string{fmt.Sprintf("pkg%d/sub%d/file%d.go", pkg, i%7, i)},
				Read:   []string{fmt.Sprintf("pkg%d/doc.go", pkg)},
			},
		}
		for range rng.IntN(4) {
			if i > 0 {
				t.Dependencies = append(t.Dependencies, fmt.Sprintf("TASK-%05d", max(0, i-1-rng.IntN(200))))
			}
		}
		switch r := rng.IntN(100); {
		case r < 10:
			t.Files.Modify = append(t.Files.Modify, fmt.Sprintf("pkg%d/shared.go", pkg))
		case r < 12:
			t.Files.Modify = append(t.Files.Modify, fmt.Sprintf("pkg%d/gen%d/", pkg, i%3))
		case r < 13:
			t.Files.Create = append(t.Files.Create, fmt.Sprintf("pkg%d/proto/**/*.pb.go", pkg))
		}
		if rng.IntN(10) == 0 {
			t.SoftDependencies = []string{fmt.Sprintf("TASK-%05d", rng.IntN(n))}
		}
		g.Tasks = append(g.Tasks, t)
	}
	return g
}

func TestGeneratedGraphs(t *testing.T) {
	for _, n := range []int{100, 1000} {
		g := genGraph(n)
		plan, errs := compute(g)
		if len(errs) > 0 {
			t.Fatalf("n=%d: %q", n, strs(errs)[:min(5, len(errs))])
		}
		checkInvariants(t, n, g, plan)
		if n >= 1000 && len(plan.Warnings) == 0 {
			t.Errorf("n=%d: generated graph has no clashes; the benchmark would not exercise them", n)
		}
	}
}

func TestComputeLargeGraphIsFast(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	g := genGraph(10000)
	best := time.Hour
	for range 3 {
		start := time.Now()
		if _, errs := compute(g); len(errs) > 0 {
			t.Fatal(strs(errs)[0])
		}
		best = min(best, time.Since(start))
	}
	// Generous against slow CI machines and the race detector; the
	// benchmark shows the real figure.
	if best > time.Second {
		t.Errorf("Compute of 10000 tasks took %v", best)
	}
}

func BenchmarkCompute(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		g := genGraph(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, errs := compute(g); len(errs) > 0 {
					b.Fatal(strs(errs)[0])
				}
			}
		})
	}
}

func BenchmarkLoad(b *testing.B) {
	data, err := genGraph(10000).MarshalJSON()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, errs := Load(data); len(errs) > 0 {
			b.Fatal(strs(errs)[0])
		}
	}
}
