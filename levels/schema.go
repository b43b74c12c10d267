package levels

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/git-zerg/git-zerg/lazy"
)

// field is one key of an object in a task graph. The decoder's list of
// known keys and the JSON Schema that `git zerg schema` prints are both
// made from these tables, so that an editor using the schema and validate
// cannot drift apart.
type field struct {
	name     string
	required bool
	// schema is the JSON Schema of the value. Keys kept but not read
	// (ZERG's own metadata) have none beyond a description: validate
	// accepts any value there, and so must the schema.
	schema map[string]any
	desc   string
}

type object struct {
	fields []field
	names  []string
	known  map[string]bool
}

func newObject(fields ...field) *object {
	o := &object{fields: fields, known: map[string]bool{}}
	for _, f := range fields {
		o.names = append(o.names, f.name)
		o.known[f.name] = true
	}
	return o
}

// isKnown accepts the object's keys and any key starting with "x-", which
// is how a user marks a key of their own as intended.
func (o *object) isKnown(k string) bool {
	return o.known[k] || strings.HasPrefix(k, "x-")
}

type obj = map[string]any

func ref(def string) obj { return obj{"$ref": "#/$defs/" + def} }

// stringList is what strs(lenient) decodes: a list of strings, a lone
// string, or null.
func stringList() obj {
	return obj{"type": []string{"array", "string", "null"}, "items": obj{"type": "string"}}
}

// The key tables are built on first use: package initialisation is paid by
// every start of the program, a hook's included.
var (
	graphObject = &lazy.Value[*object]{Build: func() *object {
		return newObject(
			field{name: "$schema", desc: "The schema the file follows, for editors; not read."},
			field{name: "feature", required: true, schema: ref("name"),
				desc: "Feature name: the branch names of the rush are made from it."},
			field{name: "tasks", required: true, schema: obj{"type": "array", "minItems": 1, "items": ref("task")},
				desc: "The tasks, in the order that breaks ties between tasks that would write the same files."},
			field{name: "total_tasks", schema: obj{"type": []string{"integer", "null"}},
				desc: "ZERG: number of tasks. A count that disagrees with the tasks is a warning."},
			field{name: "max_parallelization", schema: obj{"type": []string{"integer", "null"}, "minimum": 1},
				desc: "ZERG: most tasks in one level. More than there are tasks is a warning."},
			field{name: "version", desc: "ZERG: graph format version; kept as is."},
			field{name: "generated", desc: "ZERG: when the graph was written; kept as is."},
			field{name: "estimated_duration_minutes", desc: "ZERG: kept as is."},
			field{name: "critical_path", desc: "ZERG: task ids of the longest chain; kept as is."},
			field{name: "critical_path_minutes", desc: "ZERG: kept as is."},
			field{name: "levels", desc: "ZERG: its own level table; kept as is. git zerg computes the levels itself."},
		)
	}}
	taskObject = &lazy.Value[*object]{Build: func() *object {
		return newObject(
			field{name: "id", required: true, schema: ref("name"),
				desc: "Unique task id; it becomes part of branch and ref names."},
			field{name: "title", required: true, schema: obj{"type": "string", "pattern": `\S`},
				desc: "One line saying what the task does."},
			field{name: "description", schema: obj{"type": []string{"string", "null"}},
				desc: "What the worker is told to do, in full."},
			field{name: "level", schema: obj{"type": []string{"integer", "null"}, "minimum": 1, "maximum": maxLevel},
				desc: "Earliest level to run at (1 is the first). The plan may run the task later, never earlier."},
			field{name: "files", schema: ref("files"), desc: "Files the task creates, modifies and reads."},
			field{name: "dependencies", schema: obj{"type": []string{"array", "null"}, "items": ref("name")},
				desc: "Ids of tasks that must be done before this one starts."},
			field{name: "soft_dependencies", schema: obj{"type": []string{"array", "null"}, "items": ref("name")},
				desc: "Ids of tasks whose results help but are not required; they do not order the plan."},
			field{name: "acceptance_criteria", schema: stringList(), desc: "What the result must satisfy; given to the worker."},
			field{name: "context", schema: stringList(), desc: "Documents or sections the worker should read."},
			field{name: "risk", schema: obj{"enum": []any{"low", "medium", "high", "critical", "", nil}},
				desc: "high and critical tasks need `git zerg approve` before they can be claimed."},
			field{name: "issue", schema: obj{"type": []string{"integer", "null"}, "minimum": 1},
				desc: "The number of the forge issue (GitHub) the task carries out; forge.require_issue makes it required."},
			field{name: "verification", required: true, schema: ref("verification"),
				desc: "The command that decides whether the task is done."},
			field{name: "estimate_minutes", desc: "ZERG: kept as is."},
			field{name: "phase", desc: "ZERG: kept as is."},
			field{name: "steps", desc: "ZERG: kept as is."},
			field{name: "consumers", desc: "ZERG: kept as is."},
			field{name: "integration_test", desc: "ZERG: kept as is."},
			field{name: "status", desc: "ZERG: kept as is; git zerg keeps status in its own state."},
			field{name: "critical_path", desc: "ZERG: kept as is."},
			// The graph of `git zerg demo` tells its scripted worker what to
			// write; the demo, of all graphs, must plan without warnings.
			field{name: "demo", desc: "git zerg demo: the files its scripted worker writes."},
			field{name: "demo_flaky_once", desc: "git zerg demo: the first attempt fails on purpose."},
		)
	}}
	filesObject = &lazy.Value[*object]{Build: func() *object {
		return newObject(
			field{name: "create", schema: obj{"type": []string{"array", "null"}, "items": ref("path")}, desc: "Paths the task creates."},
			field{name: "modify", schema: obj{"type": []string{"array", "null"}, "items": ref("path")}, desc: "Paths the task changes."},
			field{name: "read", schema: obj{"type": []string{"array", "null"}, "items": ref("path")}, desc: "Paths the task only reads."},
		)
	}}
	verificationObject = &lazy.Value[*object]{Build: func() *object {
		return newObject(
			field{name: "command", required: true, schema: obj{
				"type": "string", "pattern": `\S`,
				// Raw control characters inside a class read the same in
				// ECMA-262 and in Go's regexp.
				"not": obj{"pattern": "[\x00-\x08\x0b-\x1f\x7f]"},
			}, desc: "Shell command run in the task's worktree; exit 0 means done. No control characters but tab and newline."},
			field{name: "timeout_seconds", schema: obj{"type": []string{"integer", "null"}, "minimum": 1},
				desc: "Seconds the command may run."},
		)
	}}
)

// The rules of checkPath that a regular expression can state; a glob's
// own syntax is left to validate.
const pathNotPattern = `^/|\\|\x00|//|(^|/)\.\.?(/|$)|^\.[Gg][Ii][Tt](/|$)`

func (o *object) schema(types any) obj {
	props := obj{}
	var required []string
	for _, f := range o.fields {
		s := obj{}
		for k, v := range f.schema {
			s[k] = v
		}
		if f.desc != "" {
			s["description"] = f.desc
		}
		props[f.name] = s
		if f.required {
			required = append(required, f.name)
		}
	}
	out := obj{
		"type":                 types,
		"properties":           props,
		"patternProperties":    obj{"^x-": obj{"description": "A key of your own; kept as is."}},
		"additionalProperties": false,
	}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

// Schema returns a JSON Schema (draft 2020-12) of task-graph.json, for
// editors. It says what validate --strict says about each value and key;
// rules across the graph (unknown dependencies, cycles, duplicate ids,
// overlapping files) are validate's alone.
func Schema() []byte {
	s := graphObject.Get().schema("object")
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["title"] = "git zerg task graph"
	s["description"] = "A feature as tasks, with the files each one writes and the command that verifies it. Unknown keys are kept but warned about; keys starting with x- are yours."
	s["$defs"] = obj{
		"task":         taskObject.Get().schema("object"),
		"files":        filesObject.Get().schema([]string{"object", "null"}),
		"verification": verificationObject.Get().schema("object"),
		"name": obj{
			"description": "Letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64 characters; no \"..\", no \".\" or \".lock\" at the end, as git ref names require.",
			"type":        "string", "maxLength": maxIDLen, "pattern": idPattern, "not": obj{"pattern": idNotPattern},
		},
		"path": obj{
			"description": "Relative to the repository root, clean, with \"/\" between directories, outside .git. A trailing \"/\" owns everything below; *, ?, [...] and ** are globs.",
			"type":        "string", "minLength": 1, "not": obj{"pattern": pathNotPattern},
		},
	}
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		panic(err) // the tables above are constant
	}
	return append(out, '\n')
}

// Closest is the name in names that s most likely misspells, or "": the
// "did you mean" of graph keys, commands and flags alike.
func Closest(s string, names []string) string { return closest(s, names) }

// closest is the known key a misspelled one most likely meant: the same
// letters in another case, or one edit away (two for longer keys), or the
// first word of a known key ("timeout" for "timeout_seconds"), or "".
func closest(s string, names []string) string {
	maxDist := 1
	if len(s) > 5 {
		maxDist = 2
	}
	best, bestDist := "", maxDist+1
	for _, n := range names {
		if strings.EqualFold(s, n) {
			return n
		}
		if d := editDistance(s, n, bestDist); d < bestDist {
			best, bestDist = n, d
		}
	}
	if best == "" && len(s) >= 4 {
		for _, n := range names {
			if len(n) > len(s) && n[len(s)] == '_' && strings.EqualFold(n[:len(s)], s) {
				return n
			}
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, or some value at
// least limit when it is that large: keys can be long, and a user's
// unknown key is compared with every known one.
func editDistance(a, b string, limit int) int {
	if len(a)-len(b) >= limit || len(b)-len(a) >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// unknownKeys warns about each key of m that o does not know, in sorted
// order so that the warnings are the same on every run.
func (d *decoder) unknownKeys(m map[string]json.RawMessage, place string, o *object) {
	var unknown []string
	for k := range m {
		if !o.isKnown(k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		if s := closest(k, o.names); s != "" {
			d.warns = append(d.warns, Problem{Place: keyPlace(place, k), Msg: "unknown key; did you mean " + s + "?", Meant: s})
		} else {
			d.warn(keyPlace(place, k), `unknown key (kept, but not read; a key of your own can start with "x-")`)
		}
	}
}

// keyPlace names key k of the object at place; a key that would not read
// as one (empty, or with spaces, dots or control characters) is quoted.
func keyPlace(place, k string) string {
	plain := k != ""
	for _, c := range k {
		if !(c == '_' || c == '-' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return join(place, k)
	}
	return place + "[" + strconv.Quote(k) + "]"
}
