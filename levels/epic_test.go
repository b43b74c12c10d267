package levels

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func graphs(m map[string]string) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		if g, ok := m[p]; ok {
			return []byte(g), nil
		}
		return nil, errors.New("no such file")
	}
}

const oneTask = `{"feature": "x", "tasks": [{"id": "T1", "title": "t", "files": {"create": ["%s"]}, "verification": {"command": "true"}}]}`

func TestCheckEpicValid(t *testing.T) {
	epic := `{"name": "shop", "version": 2, "frozen": ["api/types.go"], "features": [
		{"name": "A", "graph": "a.json"},
		{"name": "B", "graph": "b.json", "dependencies": ["A"], "soft_dependencies": ["C"]},
		{"name": "C", "graph": "c.json"},
		{"name": "D", "graph": "c.json", "dependencies": ["B", "C"]}]}`
	p, errs, _ := CheckEpic([]byte(epic), graphs(map[string]string{
		"a.json": strings.Replace(oneTask, "%s", "a.txt", 1),
		"b.json": strings.Replace(oneTask, "%s", "src/", 1),
		"c.json": strings.Replace(oneTask, "%s", "api/other.go", 1),
	}))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := [][]string{{"A", "C"}, {"B"}, {"D"}}
	if !slices.EqualFunc(p.Levels, want, slices.Equal) {
		t.Errorf("levels %v, want %v", p.Levels, want)
	}
	if p.Epic.Version != 2 || len(p.Plans) != 4 || p.Plans["D"] == nil {
		t.Errorf("plan: version %d, %d plans", p.Epic.Version, len(p.Plans))
	}
}

func TestCheckEpicCycles(t *testing.T) {
	epic := `{"name": "e", "features": [
		{"name": "A", "graph": "g", "dependencies": ["C"]},
		{"name": "B", "graph": "g", "dependencies": ["A"]},
		{"name": "C", "graph": "g", "dependencies": ["B", "C"]},
		{"name": "D", "graph": "g", "dependencies": ["D2"]},
		{"name": "D2", "graph": "g", "dependencies": ["D"]}]}`
	_, errs, _ := CheckEpic([]byte(epic), graphs(map[string]string{"g": strings.Replace(oneTask, "%s", "x", 1)}))
	var got []string
	for _, e := range errs {
		got = append(got, e.String())
	}
	want := []string{
		"features[0].dependencies: cycle: A -> C -> B -> A",
		`features[2].dependencies[1]: feature "C" depends on itself`,
		"features[3].dependencies: cycle: D -> D2 -> D",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A frozen path is owned, for the epic, as paths are between tasks: any
// overlap counts, directories and globs included.
func TestFrozenOwned(t *testing.T) {
	for _, c := range []struct {
		owned, frozen string
		clash         bool
	}{
		{"api/types.go", "api/types.go", true},
		{"api/", "api/types.go", true},
		{"api/types.go", "api/", true},
		{"api/*.go", "api/types.go", true},
		{"src/a.go", "api/types.go", false},
		{"api/types.go.bak", "api/types.go", false},
	} {
		g := &Task{ID: "T", Files: Files{Modify: []string{c.owned}}}
		if got := len(FrozenOwned([]string{c.frozen}, []*Task{g})) > 0; got != c.clash {
			t.Errorf("owned %s, frozen %s: clash %v, want %v", c.owned, c.frozen, got, c.clash)
		}
	}
}

// The schema and the decoder read from the same tables: every key the
// schema names is one ParseEpic knows, so it warns about none.
func TestEpicSchema(t *testing.T) {
	var s map[string]any
	if err := json.Unmarshal(EpicSchema(), &s); err != nil {
		t.Fatal(err)
	}
	defs := s["$defs"].(map[string]any)
	for _, d := range []string{"feature", "name", "path"} {
		if defs[d] == nil {
			t.Errorf("no $defs/%s", d)
		}
	}
	epic := `{"$schema": "x", "name": "e", "version": 1, "frozen": [], "features": [
		{"name": "A", "graph": "g", "dependencies": [], "soft_dependencies": []}]}`
	if _, errs, warns := parseEpic([]byte(epic)); len(errs)+len(warns) > 0 {
		t.Errorf("errors %v, warnings %v", errs, warns)
	}
	if _, errs, _ := parseEpic([]byte(`{"name": "e", "version": 0, "features": []}`)); len(errs) != 2 {
		t.Errorf("want version and features refused, got %v", errs)
	}
	if _, errs, _ := parseEpic([]byte(`[1]`)); len(errs) != 1 || !strings.Contains(errs[0].Msg, "JSON object") {
		t.Errorf("not an object: %v", errs)
	}
}
