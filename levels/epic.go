package levels

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/git-zerg/git-zerg/lazy"
)

// Epic is an epic file: features, each its own task graph, that depend on
// one another, and the paths no task of any of them may change.
type Epic struct {
	Name    string
	Version int // 1 when absent
	// Features in file order; that order breaks ties when several can
	// start at once.
	Features []*EpicFeature
	// Frozen are paths shared by several features (interfaces, schemas):
	// owned by no task, changed only by a new version of the epic.
	Frozen []string
	Extra  map[string]json.RawMessage
}

// EpicFeature is one feature of an epic.
type EpicFeature struct {
	Name string
	// Graph is the task graph's path, relative to the epic file's
	// directory (the caller resolves it; this package reads no files).
	Graph string
	// Dependencies must be complete before the feature starts, which then
	// starts from their result; SoftDependencies only say the work is
	// related, and do not hold the feature back.
	Dependencies     []string
	SoftDependencies []string
}

// EpicPlan is a valid epic with every feature's graph planned.
type EpicPlan struct {
	Epic *Epic
	// Levels orders the features by their hard dependencies: the features
	// of a level can run at the same time once the levels below are done.
	Levels [][]string
	// Plans holds each feature's plan, by feature name.
	Plans    map[string]*Plan
	Warnings []Problem
}

// Feature returns the named feature, nil when the epic has none.
func (e *Epic) Feature(name string) *EpicFeature {
	for _, f := range e.Features {
		if f != nil && f.Name == name {
			return f
		}
	}
	return nil
}

var (
	epicObject = &lazy.Value[*object]{Build: func() *object {
		return newObject(
			field{name: "$schema", desc: "The schema the file follows, for editors; not read."},
			field{name: "name", required: true, schema: ref("name"),
				desc: "Epic name; the epic is stored under refs/zerg/epics/<name>."},
			field{name: "version", schema: obj{"type": []string{"integer", "null"}, "minimum": 1},
				desc: "Version of the frozen paths (default 1); git zerg epic bump makes the next one."},
			field{name: "features", required: true, schema: obj{"type": "array", "minItems": 1, "items": ref("feature")},
				desc: "The features, each its own task graph."},
			field{name: "frozen", schema: obj{"type": []string{"array", "null"}, "items": ref("path")},
				desc: "Paths no task of the epic may own or change (shared interfaces)."},
		)
	}}
	epicFeatureObject = &lazy.Value[*object]{Build: func() *object {
		return newObject(
			field{name: "name", required: true, schema: ref("name"),
				desc: "Feature name; the feature is planned under it, whatever its graph's \"feature\" says."},
			field{name: "graph", required: true, schema: obj{"type": "string", "minLength": 1},
				desc: "Path of the feature's task graph, relative to the epic file."},
			field{name: "dependencies", schema: obj{"type": []string{"array", "null"}, "items": ref("name")},
				desc: "Features that must be complete first; the feature starts from their staging branches."},
			field{name: "soft_dependencies", schema: obj{"type": []string{"array", "null"}, "items": ref("name")},
				desc: "Related features that are not waited for; the feature may start from the base branch."},
		)
	}}
)

// EpicSchema returns a JSON Schema (draft 2020-12) of an epic file.
func EpicSchema() []byte {
	s := epicObject.Get().schema("object")
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["title"] = "git zerg epic"
	s["description"] = "Features that depend on features, and the paths frozen for all of them. Rules across the file (unknown or cyclic dependencies, graphs, frozen paths owned by tasks) are epic plan's."
	graph := Schema()
	var g obj
	if err := json.Unmarshal(graph, &g); err != nil {
		panic(err)
	}
	defs := g["$defs"].(obj)
	s["$defs"] = obj{"feature": epicFeatureObject.Get().schema("object"), "name": defs["name"], "path": defs["path"]}
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		panic(err) // the tables are constant
	}
	return append(out, '\n')
}

// parseEpic decodes an epic file and checks the rules that need nothing
// but the file. The epic is nil only when data is not a JSON object.
func parseEpic(data []byte) (*Epic, []Problem, []Problem) {
	m, probs := topObject(data)
	if m == nil {
		return nil, probs, nil
	}
	d := &decoder{}
	e := &Epic{Version: 1}
	if v, ok := m["name"]; ok {
		e.Name = d.str(v, "name")
	}
	if v, ok := m["version"]; ok {
		if n, ok := d.integer(v, "version"); ok {
			e.Version = n
		}
	}
	if v, ok := m["frozen"]; ok {
		e.Frozen = d.strs(v, "frozen", false)
	}
	if v, ok := m["features"]; ok && kind(v) != "null" {
		if k := kind(v); k != "array" {
			d.add("features", "want an array of features, got %s", k)
		} else {
			var elems []json.RawMessage
			if err := json.Unmarshal(v, &elems); err != nil {
				d.add("features", "%v", err)
			}
			for i, raw := range elems {
				e.Features = append(e.Features, d.epicFeature(raw, index("features", i)))
			}
		}
	}
	e.Extra = extras(m, epicObject.Get().isKnown)
	d.unknownKeys(m, "", epicObject.Get())
	errs := d.probs
	errs = append(errs, validateEpic(e)...)
	return e, errs, d.warns
}

func (d *decoder) epicFeature(raw json.RawMessage, place string) *EpicFeature {
	f := &EpicFeature{}
	m, ok := d.object(raw, place, "a feature object")
	if !ok {
		return f
	}
	if v, ok := m["name"]; ok {
		f.Name = d.str(v, join(place, "name"))
	}
	if v, ok := m["graph"]; ok {
		f.Graph = d.str(v, join(place, "graph"))
	}
	if v, ok := m["dependencies"]; ok {
		f.Dependencies = d.strs(v, join(place, "dependencies"), false)
	}
	if v, ok := m["soft_dependencies"]; ok {
		f.SoftDependencies = d.strs(v, join(place, "soft_dependencies"), false)
	}
	d.unknownKeys(m, place, epicFeatureObject.Get())
	return f
}

// validateEpic checks the rules of the file itself: names, dependencies
// and their cycles, frozen paths.
func validateEpic(e *Epic) []Problem {
	var ps problems
	if strings.TrimSpace(e.Name) == "" {
		ps.add("name", "required")
	} else if err := ValidFeatureName(e.Name); err != nil {
		ps.add("name", "%s", err.(*NameError).Describe("epic name"))
	}
	if e.Version < 1 {
		ps.add("version", "must be at least 1, got %d", e.Version)
	}
	if len(e.Features) == 0 {
		ps.add("features", "must be a non-empty array of features")
	}
	first := map[string]int{}
	for i, f := range e.Features {
		place := index("features", i)
		switch {
		case strings.TrimSpace(f.Name) == "":
			ps.add(join(place, "name"), "required")
		case ValidFeatureName(f.Name) != nil:
			ps.add(join(place, "name"), "%v", ValidFeatureName(f.Name))
		default:
			if j, dup := first[f.Name]; dup {
				ps.add(join(place, "name"), "duplicate feature %q (first at features[%d])", f.Name, j)
			} else {
				first[f.Name] = i
			}
		}
		if strings.TrimSpace(f.Graph) == "" {
			ps.add(join(place, "graph"), "required")
		}
	}
	for i, f := range e.Features {
		place := index("features", i)
		for _, list := range []struct {
			key  string
			deps []string
		}{{"dependencies", f.Dependencies}, {"soft_dependencies", f.SoftDependencies}} {
			for k, dep := range list.deps {
				at := index(join(place, list.key), k)
				switch j, ok := first[dep]; {
				case dep == f.Name && f.Name != "":
					ps.add(at, "feature %q depends on itself", dep)
				case !ok:
					// One-letter names are all one edit apart: a guess
					// there would be noise.
					if s := closest(dep, featureNames(e)); s != "" && (len(dep) > 2 || strings.EqualFold(s, dep)) {
						ps.add(at, "unknown feature %q; did you mean %s?", dep, s)
					} else {
						ps.add(at, "unknown feature %q", dep)
					}
				case list.key == "soft_dependencies" && slices.Contains(f.Dependencies, dep):
					ps.add(at, "%q is already a hard dependency (features[%d])", dep, j)
				}
			}
		}
	}
	for i, p := range e.Frozen {
		if msg := checkPath(p); msg != "" {
			ps.add(index("frozen", i), "%s", msg)
		}
	}
	ps = append(ps, epicCycles(e, first)...)
	return ps
}

func featureNames(e *Epic) []string {
	var out []string
	for _, f := range e.Features {
		if f.Name != "" {
			out = append(out, f.Name)
		}
	}
	return out
}

// epicCycles names each cycle of hard dependencies as a path, starting at
// the feature that comes first in the file. An epic has a handful of
// features: a plain search from each is enough.
func epicCycles(e *Epic, first map[string]int) []Problem {
	var out []Problem
	seen := map[string]bool{}
	n := len(e.Features)
	var walk func(start, v int, path []int, on []bool)
	walk = func(start, v int, path []int, on []bool) {
		for _, dep := range e.Features[v].Dependencies {
			w, ok := first[dep]
			if !ok || w == v && dep == e.Features[v].Name {
				continue
			}
			if w == start {
				cyc := append(slices.Clone(path), start)
				names := make([]string, len(cyc))
				for i, c := range cyc {
					names[i] = e.Features[c].Name
				}
				key := strings.Join(names, " -> ")
				if !seen[key] {
					seen[key] = true
					out = append(out, Problem{Place: index("features", start) + ".dependencies", Msg: "cycle: " + key})
				}
				continue
			}
			// Only cycles through members after start, so each is named
			// once, from its first member.
			if w < start || on[w] {
				continue
			}
			on[w] = true
			walk(start, w, append(path, w), on)
			on[w] = false
		}
	}
	for s := 0; s < n && len(out) < maxCycles; s++ {
		on := make([]bool, n)
		on[s] = true
		walk(s, s, []int{s}, on)
	}
	return out
}

// CheckEpic parses an epic and checks every feature's graph, read through
// graph (given the feature's graph path), all at once: the file's own
// problems, each graph's problems placed under the feature that names it,
// and every task that owns a frozen path. A non-empty errs means nothing
// may be planned.
func CheckEpic(data []byte, graph func(path string) ([]byte, error)) (plan *EpicPlan, errs, warns []Problem) {
	e, errs, warns := parseEpic(data)
	if e == nil {
		return nil, errs, warns
	}
	plans := map[string]*Plan{}
	for i, f := range e.Features {
		if strings.TrimSpace(f.Graph) == "" {
			continue
		}
		place := index("features", i) + ".graph"
		data, err := graph(f.Graph)
		if err != nil {
			errs = append(errs, Problem{Place: place, Msg: fmt.Sprintf("cannot read %s: %v", f.Graph, err)})
			continue
		}
		p, gerrs, gwarns := Check(data)
		for _, pr := range gerrs {
			errs = append(errs, Problem{Place: place, Msg: f.Graph + ": " + pr.String()})
		}
		for _, pr := range gwarns {
			// The epic names the feature: its graph's name is not used.
			if pr.Place == "feature" {
				continue
			}
			warns = append(warns, Problem{Place: place, Msg: f.Graph + ": " + pr.String(), Meant: pr.Meant})
		}
		if p == nil {
			continue
		}
		for _, fp := range FrozenOwned(e.Frozen, p.Graph.Tasks) {
			errs = append(errs, Problem{Place: place, Msg: f.Graph + ": " + fp.String()})
		}
		if f.Name != "" {
			plans[f.Name] = p
		}
	}
	sortEpicProblems(errs)
	sortEpicProblems(warns)
	if len(errs) > 0 {
		return nil, errs, warns
	}
	return &EpicPlan{Epic: e, Levels: EpicLevels(e), Plans: plans, Warnings: warns}, nil, warns
}

// FrozenOwned lists the tasks that own a frozen path, with the same
// overlap rule as ownership between tasks: a task owning src/ owns the
// frozen src/api.go, and one owning src/api.go is caught by a frozen src/.
func FrozenOwned(frozen []string, tasks []*Task) []Problem {
	var out []Problem
	for i, t := range tasks {
		if t == nil {
			continue
		}
		for _, op := range ownedPaths(t) {
			for _, f := range frozen {
				if Overlap(op.path, f) {
					out = append(out, Problem{Place: at(i, ".files."+op.list+"["+fmt.Sprint(op.idx)+"]"),
						Msg: fmt.Sprintf("task %s owns %q, which the epic freezes (%s)", t.ID, op.path, f)})
				}
			}
		}
	}
	return out
}

// EpicLevels orders the features of a valid epic by hard dependencies,
// file order within a level.
func EpicLevels(e *Epic) [][]string {
	level := map[string]int{}
	var out [][]string
	for placed := 0; placed < len(e.Features); {
		var next []string
		for _, f := range e.Features {
			if _, ok := level[f.Name]; ok {
				continue
			}
			ready := true
			for _, d := range f.Dependencies {
				if l, ok := level[d]; !ok || l > len(out) {
					ready = false
					break
				}
			}
			if ready {
				next = append(next, f.Name)
			}
		}
		if len(next) == 0 {
			break // a cycle: validateEpic reports it
		}
		for _, n := range next {
			level[n] = len(out) + 1
		}
		placed += len(next)
		out = append(out, next)
	}
	return out
}

// sortEpicProblems groups problems by feature, in file order, after the
// problems of the epic's top-level keys and before those of its frozen
// paths, keeping the order of discovery within a group.
func sortEpicProblems(ps []Problem) {
	rank := func(p Problem) int {
		switch {
		case strings.HasPrefix(p.Place, "features["):
			if i := taskOf("tasks[" + strings.TrimPrefix(p.Place, "features[")); i >= 0 {
				return 1 + i
			}
			return 0
		case strings.HasPrefix(p.Place, "frozen"):
			return 1 << 30
		}
		return 0
	}
	slices.SortStableFunc(ps, func(a, b Problem) int { return rank(a) - rank(b) })
}
