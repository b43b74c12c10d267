// Package levels reads a ZERG task graph (task-graph.json), checks it, and
// turns it into a plan: the tasks grouped into dependency levels such that no
// two tasks of one level write the same files.
//
// The package does no I/O and knows nothing about git; callers hand it bytes
// and get back a Plan or a list of Problems, each with the place in the file
// it concerns, so that a user can fix every mistake in one pass.
package levels

import (
	"encoding/json"
)

// Files lists the paths a task writes (Create, Modify) and the paths it
// only reads (Read). A path ending in "/" stands for everything under that
// directory; a path with glob characters stands for everything it matches.
type Files struct {
	Create []string
	Modify []string
	Read   []string
	// Extra keeps keys other than create, modify and read, so that a graph
	// written by a newer ZERG survives being rewritten by us.
	Extra map[string]json.RawMessage
}

// Verification is the command that decides whether a task is done.
type Verification struct {
	Command        string
	TimeoutSeconds int // 0 when absent
	// Extra keeps unknown keys; see Files.Extra.
	Extra map[string]json.RawMessage
}

// Task is one node of the graph.
type Task struct {
	ID          string
	Title       string
	Description string
	// Level is the level given in the file, 0 when absent. It is a floor:
	// the plan never runs the task earlier, but may run it later.
	Level              int
	Files              Files
	Dependencies       []string
	SoftDependencies   []string
	AcceptanceCriteria []string
	Context            []string
	Risk               string
	// Issue is the number of the forge issue the task carries out, 0 when
	// none (see the forge section of the README).
	Issue        int
	Verification Verification
	// Extra keeps keys this package does not interpret (estimate_minutes,
	// phase, steps, consumers, ...) exactly as they appeared in the file.
	Extra map[string]json.RawMessage
}

// Graph is a whole task-graph.json.
type Graph struct {
	Feature string
	Tasks   []*Task
	// Extra keeps the other top-level keys (version, levels, total_tasks,
	// critical_path, ...) exactly as they appeared in the file.
	Extra map[string]json.RawMessage
}

// Problem is an error or a warning about one place in a graph.
type Problem struct {
	// Place says where, in terms the user can find in the file:
	// "tasks[3].dependencies[0]", "feature", or "line 3, column 7" when the
	// file is not valid JSON. It may be empty.
	Place string
	Msg   string
	// Task is the id of the task Place is in, when it has a valid one: an
	// index alone makes the user count down a long file.
	Task string
	// Meant is the known key an unknown key most likely misspells (the
	// "did you mean"), or "": a misspelt key silently changes the plan (a
	// "dependecies" list is not read), so a planner can refuse it.
	Meant string
}

// MisspeltErrors makes the warnings about keys that look misspelt (Meant
// set) errors: "dependecies" is not read, so the task would run before what
// it needs. A planner that is told to (plan --force) keeps them warnings: a
// key of the user's own can look like a known one.
func MisspeltErrors(errs, warnings []Problem) ([]Problem, []Problem) {
	keep := warnings[:0:0]
	for _, w := range warnings {
		if w.Meant != "" {
			errs = append(errs, w)
		} else {
			keep = append(keep, w)
		}
	}
	return errs, keep
}

func (p Problem) String() string {
	switch {
	case p.Place == "":
		return p.Msg
	case p.Task != "":
		return p.Place + " (task " + p.Task + "): " + p.Msg
	}
	return p.Place + ": " + p.Msg
}

// Owned returns the paths the task writes: create then modify, each once,
// in file order.
func (t *Task) Owned() []string {
	var out []string
	for _, o := range ownedPaths(t) {
		out = append(out, o.path)
	}
	return out
}

// ownedPath is an owned path together with where it was written, so that
// ownership warnings can point at the exact list entry.
type ownedPath struct {
	path string
	list string // "create" or "modify"
	idx  int
	key  string // see ownerKey
	dir  bool
	// group and counted are where build gathers the clashes over this
	// path, without hashing the path once per clash.
	group   *clashGroup
	counted bool
}

func ownedPaths(t *Task) []ownedPath {
	n := len(t.Files.Create) + len(t.Files.Modify)
	if n == 0 {
		return nil
	}
	out := make([]ownedPath, 0, n)
	// Tasks own a handful of paths, so a linear scan beats allocating a set.
	var seen map[string]bool
	if n > 16 {
		seen = make(map[string]bool, n)
	}
	add := func(list string, paths []string) {
		for i, p := range paths {
			if seen != nil {
				if seen[p] {
					continue
				}
				seen[p] = true
			} else if containsPath(out, p) {
				continue
			}
			key, dir := ownerKey(p)
			out = append(out, ownedPath{path: p, list: list, idx: i, key: key, dir: dir})
		}
	}
	add("create", t.Files.Create)
	add("modify", t.Files.Modify)
	return out
}

func containsPath(ops []ownedPath, p string) bool {
	for _, o := range ops {
		if o.path == p {
			return true
		}
	}
	return false
}

// ---- decoding ----
