package levels

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// tk returns a valid task object for id; fields are raw `"key": value`
// fragments that are appended, and so override the defaults since the
// decoder keeps the last of duplicate keys.
func tk(id string, fields ...string) string {
	base := []string{`"id":` + quote(id), `"title":"do ` + id + `"`, `"verification":{"command":"true"}`}
	return "{" + strings.Join(append(base, fields...), ",") + "}"
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// doc wraps tasks in a graph with a valid feature.
func doc(tasks ...string) []byte {
	return []byte(`{"feature":"auth","tasks":[` + strings.Join(tasks, ",") + `]}`)
}

// strs renders problems by place and message; the task id a problem
// names (TestProblemsNameTheTask) is left out, so that the tables read as
// the places in the file.
func strs(ps []Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		p.Task = ""
		out[i] = p.String()
	}
	return out
}

// A problem inside a task names the task's id beside its index, unless
// the id is missing, invalid or not the task's alone.
func TestProblemsNameTheTask(t *testing.T) {
	in := []byte(`{"feature": "f", "tasks": [
    {"id": "A", "title": "a", "verification": {"command": "x"}},
    {"id": "auth-login", "title": "b", "verification": {"command": "x"}, "dependencies": ["ghost"]},
    {"id": "B", "title": "c", "verification": {"command": "x"}, "risk": "yolo"},
    {"id": "B", "title": "d", "verification": {}},
    {"id": "bad id", "title": "e", "verification": {"command": "x"}},
    {"title": "f", "verification": {"command": "x"}}
  ]}`)
	_, errs := parseGraph(in)
	var got []string
	for _, p := range errs {
		got = append(got, p.String())
	}
	want := []string{
		`tasks[1].dependencies[0] (task auth-login): unknown task "ghost"`,
		`tasks[2].risk: invalid risk "yolo" (want low, medium, high or critical)`,
		`tasks[3].id: duplicate id "B" (first at tasks[2])`,
		"tasks[3].verification.command: required",
	}
	if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Errorf("got\n%s\nwant first\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, p := range errs {
		if strings.HasPrefix(p.Place, "tasks[4]") || strings.HasPrefix(p.Place, "tasks[5]") {
			if p.Task != "" {
				t.Errorf("%s names task %q", p.Place, p.Task)
			}
		}
	}
}

func TestParseProblems(t *testing.T) {
	long := strings.Repeat("x", 65)
	tests := []struct {
		name string
		in   []byte
		want []string
	}{
		{"valid", doc(tk("A"), tk("B", `"dependencies":["A"]`)), nil},
		{"nulls everywhere", doc(tk("A", `"files":null`, `"dependencies":null`, `"soft_dependencies":null`,
			`"acceptance_criteria":null`, `"context":null`, `"risk":null`, `"level":null`, `"description":null`),
			tk("B", `"files":{"create":null,"modify":null,"read":null}`, `"verification":{"command":"x","timeout_seconds":null}`)), nil},

		// top level
		{"missing feature", []byte(`{"tasks":[` + tk("A") + `]}`), []string{"feature: required"}},
		{"blank feature", []byte(`{"feature":" ","tasks":[` + tk("A") + `]}`), []string{"feature: required"}},
		{"missing tasks", []byte(`{"feature":"f"}`), []string{"tasks: must be a non-empty array of tasks"}},
		{"empty tasks", []byte(`{"feature":"f","tasks":[]}`), []string{"tasks: must be a non-empty array of tasks"}},
		{"null tasks", []byte(`{"feature":"f","tasks":null}`), []string{"tasks: must be a non-empty array of tasks"}},
		{"total_tasks wrong is only a warning", []byte(`{"feature":"f","total_tasks":3,"tasks":[` + tk("A") + `]}`), nil},
		{"total_tasks right", []byte(`{"feature":"f","total_tasks":1,"tasks":[` + tk("A") + `]}`), nil},
		{"total_tasks type", []byte(`{"feature":"f","total_tasks":"1","tasks":[` + tk("A") + `]}`),
			[]string{"total_tasks: want an integer, got string"}},
		{"max_parallelization", []byte(`{"feature":"f","max_parallelization":0,"tasks":[` + tk("A") + `]}`),
			[]string{"max_parallelization: must be at least 1, got 0"}},

		// ids
		{"missing id title command", doc(`{"files":{}}`), []string{
			"tasks[0].id: required", "tasks[0].title: required", "tasks[0].verification.command: required"}},
		{"blank title and command", doc(tk("A", `"title":"  "`, `"verification":{"command":" "}`)), []string{
			"tasks[0].title: required", "tasks[0].verification.command: required"}},
		{"bad ids", doc(tk("has space"), tk("-lead"), tk(long), tk("ok.id_1-x")), []string{
			`tasks[0].id: invalid id "has space": use letters, digits, '.', '_' and '-', starting with a letter or digit`,
			`tasks[1].id: invalid id "-lead": use letters, digits, '.', '_' and '-', starting with a letter or digit`,
			`tasks[2].id: id "` + long + `" is too long (65 characters, at most 64)`}},
		{"duplicate id", doc(tk("A"), tk("X"), tk("B"), tk("C"), tk("X"), tk("X")), []string{
			`tasks[4].id: duplicate id "X" (first at tasks[1])`,
			`tasks[5].id: duplicate id "X" (first at tasks[1])`}},

		// dependencies
		{"unknown and self deps", doc(tk("A", `"dependencies":["A","nope"]`, `"soft_dependencies":["A","gone"]`)), []string{
			`tasks[0].dependencies[0]: task depends on itself`,
			`tasks[0].dependencies[1]: unknown task "nope"`,
			`tasks[0].soft_dependencies[0]: task depends on itself`,
			`tasks[0].soft_dependencies[1]: unknown task "gone"`}},
		{"forward dependency is fine", doc(tk("A", `"dependencies":["B"]`), tk("B")), nil},
		{"cycle", doc(tk("A", `"dependencies":["B"]`), tk("B", `"dependencies":["C"]`), tk("C", `"dependencies":["A"]`)),
			[]string{"tasks[0].dependencies: cycle: A -> B -> C -> A"}},
		{"cycle named from its first task in the file", doc(tk("Z"), tk("C", `"dependencies":["A"]`), tk("A", `"dependencies":["C"]`)),
			[]string{"tasks[1].dependencies: cycle: C -> A -> C"}},
		{"two cycles, each once", doc(
			tk("A", `"dependencies":["B","B"]`), tk("B", `"dependencies":["A"]`),
			tk("C", `"dependencies":["D"]`), tk("D", `"dependencies":["C","A"]`)),
			[]string{"tasks[0].dependencies: cycle: A -> B -> A", "tasks[2].dependencies: cycle: C -> D -> C"}},
		{"figure eight", doc(tk("A", `"dependencies":["B","C"]`), tk("B", `"dependencies":["A"]`), tk("C", `"dependencies":["A"]`)),
			[]string{"tasks[0].dependencies: cycle: A -> B -> A", "tasks[0].dependencies: cycle: A -> C -> A"}},
		{"soft cycle is fine", doc(tk("A", `"soft_dependencies":["B"]`), tk("B", `"soft_dependencies":["A"]`)), nil},
		{"hard plus soft back edge is fine", doc(tk("A", `"soft_dependencies":["B"]`), tk("B", `"dependencies":["A"]`)), nil},

		// fields
		{"risk", doc(tk("A", `"risk":"low"`), tk("B", `"risk":"critical"`), tk("C", `"risk":"extreme"`)),
			[]string{`tasks[2].risk: invalid risk "extreme" (want low, medium, high or critical)`}},
		{"issues", doc(tk("A", `"issue":12`), tk("B", `"issue":0`), tk("C", `"issue":-3`), tk("D", `"issue":"12"`), tk("E", `"issue":12`), tk("F", `"issue":null`)), []string{
			"tasks[1].issue: must be an issue number, at least 1, got 0",
			"tasks[2].issue: must be an issue number, at least 1, got -3",
			"tasks[3].issue: want an integer, got string",
			"tasks[4].issue: issue #12 is already tasks[0]'s"}},
		{"timeouts", doc(tk("A", `"verification":{"command":"x","timeout_seconds":0}`),
			tk("B", `"verification":{"command":"x","timeout_seconds":-5}`),
			tk("C", `"verification":{"command":"x","timeout_seconds":1.5}`),
			tk("D", `"verification":{"command":"x","timeout_seconds":30.0}`)), []string{
			"tasks[0].verification.timeout_seconds: must be a positive number of seconds, got 0",
			"tasks[1].verification.timeout_seconds: must be a positive number of seconds, got -5",
			"tasks[2].verification.timeout_seconds: want an integer, got 1.5"}},
		{"levels", doc(tk("A", `"level":0`), tk("B", `"level":-1`), tk("C", `"level":"2"`), tk("D", `"level":100001`), tk("E", `"level":7`)), []string{
			"tasks[0].level: must be at least 1, got 0",
			"tasks[1].level: must be at least 1, got -1",
			"tasks[2].level: want an integer, got string",
			"tasks[3].level: level 100001 is too high (at most 100000)"}},

		// paths
		{"paths", doc(tk("A", `"files":{"create":["", "/abs", "a\\b", "a/../b", "./a", "a//b", "a/b//", ".git/config", ".GIT", "src/./x", "x\u0000y", "a[b", ".", "./"],`+
			`"modify":["ok.go","dir/","z/**/*.py","..","../x"],"read":["..\\x", "docs/*.md", ".git"]}`)), []string{
			`tasks[0].files.create[0]: empty path`,
			`tasks[0].files.create[1]: path "/abs" is absolute; paths are relative to the repository root`,
			`tasks[0].files.create[2]: path "a\\b" contains a backslash; use "/" to separate directories`,
			`tasks[0].files.create[3]: path "a/../b" contains ".."; paths must stay inside the repository`,
			`tasks[0].files.create[4]: path "./a" is not clean; write "a"`,
			`tasks[0].files.create[5]: path "a//b" is not clean; write "a/b"`,
			`tasks[0].files.create[6]: path "a/b//" is not clean; write "a/b/"`,
			`tasks[0].files.create[7]: path ".git/config" is inside .git`,
			`tasks[0].files.create[8]: path ".GIT" is inside .git`,
			`tasks[0].files.create[9]: path "src/./x" is not clean; write "src/x"`,
			`tasks[0].files.create[10]: path "x\x00y" contains a NUL byte`,
			`tasks[0].files.create[11]: path "a[b" is not a valid glob: syntax error in pattern`,
			`tasks[0].files.create[12]: path "." names the repository root; use "**" to own everything`,
			`tasks[0].files.create[13]: path "./" names the repository root; use "**" to own everything`,
			`tasks[0].files.modify[3]: path ".." contains ".."; paths must stay inside the repository`,
			`tasks[0].files.modify[4]: path "../x" contains ".."; paths must stay inside the repository`,
			`tasks[0].files.read[0]: path "..\\x" contains a backslash; use "/" to separate directories`,
			`tasks[0].files.read[2]: path ".git" is inside .git`}},

		// wrong types: one problem each, and no follow-on "required"
		{"wrong types", doc(
			tk("A", `"dependencies":"B"`),
			tk("B", `"dependencies":["A",1,null]`),
			tk("C", `"files":[]`),
			tk("D", `"verification":"make test"`),
			`{"id":5,"title":"t","verification":{"command":"x"}}`,
			`"just a string"`,
			tk("G", `"files":{"create":"x.go"}`),
			tk("H", `"title":["a"]`),
			tk("I", `"verification":{"command":["make"]}`),
			tk("J", `"context":"design.md#models"`, `"acceptance_criteria":"it works"`),
			tk("K", `"context":[1]`),
			tk("L", `"risk":3`),
		), []string{
			"tasks[0].dependencies: want an array of strings, got string",
			"tasks[1].dependencies[1]: want a string, got number",
			"tasks[1].dependencies[2]: want a string, got null",
			"tasks[2].files: want an object with create, modify and read, got array",
			"tasks[3].verification: want an object with command and timeout_seconds, got string",
			"tasks[4].id: want a string, got number",
			"tasks[5]: want a task object, got string",
			"tasks[6].files.create: want an array of strings, got string",
			"tasks[7].title: want a string, got array",
			"tasks[8].verification.command: want a string, got array",
			"tasks[10].context[0]: want a string, got number",
			"tasks[11].risk: want a string, got number",
		}},
		{"wrong top-level types", []byte(`{"feature":1,"tasks":{}}`), []string{
			"feature: want a string, got number",
			"tasks: want an array of tasks, got object"}},

		// not JSON, or not an object
		{"truncated", []byte("{\"feature\": \"f\",\n \"tasks\": [\n  {\"id\": \"A\""),
			[]string{"line 3, column 13: unexpected end of input"}},
		{"empty input", []byte(""), []string{"line 1, column 1: unexpected end of input"}},
		{"bad character", []byte("{\"feature\": \"f\",\n \"tasks\": [\n  {\"id\": x}]}"),
			[]string{"line 3, column 10: invalid character 'x' looking for beginning of value"}},
		{"column counts characters", []byte("{\"feature\": \"ü\", x}"),
			[]string{"line 1, column 18: invalid character 'x' looking for beginning of object key string"}},
		{"trailing comma", []byte("{\"tasks\": [1,]}"),
			[]string{"line 1, column 14: invalid character ']' looking for beginning of value"}},
		{"trailing garbage", []byte("{}\n}"), []string{"line 2, column 1: invalid character '}' after top-level value"}},
		{"array at top", []byte("\n  [1]"), []string{"line 2, column 3: want a JSON object at the top level, got array"}},
		{"null at top", []byte("null"), []string{"line 1, column 1: want a JSON object at the top level, got null"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, errs := parseGraph(tt.in)
			if got := strs(errs); !slices.Equal(got, tt.want) {
				t.Errorf("Parse problems:\n got %q\nwant %q", got, tt.want)
			}
			if g == nil && len(errs) == 0 {
				t.Error("nil graph without problems")
			}
			plan, lerrs := Load(tt.in)
			if !slices.Equal(strs(lerrs), strs(errs)) {
				t.Errorf("Load problems %q differ from Parse problems %q", strs(lerrs), strs(errs))
			}
			if (plan == nil) != (len(errs) > 0) {
				t.Errorf("plan %v with %d problems", plan != nil, len(errs))
			}
		})
	}
}

func TestMultipleProblemsReportedTogether(t *testing.T) {
	in := []byte(`{
  "total_tasks": 9,
  "tasks": [
    {"id": "A", "title": "a", "verification": {"command": "x"}, "dependencies": ["ghost"]},
    {"id": "B", "verification": {"command": "x", "timeout_seconds": -1}, "files": {"modify": ["/etc/passwd"]}},
    {"id": "A", "title": "again", "risk": "yolo", "verification": {}},
    {"id": "C", "title": "c", "verification": {"command": "x"}, "dependencies": ["D"]},
    {"id": "D", "title": "d", "verification": {"command": "x"}, "dependencies": ["C"]}
  ]
}`)
	want := []string{
		"feature: required",
		`tasks[0].dependencies[0]: unknown task "ghost"`,
		"tasks[1].title: required",
		`tasks[1].files.modify[0]: path "/etc/passwd" is absolute; paths are relative to the repository root`,
		"tasks[1].verification.timeout_seconds: must be a positive number of seconds, got -1",
		`tasks[2].id: duplicate id "A" (first at tasks[0])`,
		`tasks[2].risk: invalid risk "yolo" (want low, medium, high or critical)`,
		"tasks[2].verification.command: required",
		"tasks[3].dependencies: cycle: C -> D -> C",
	}
	_, errs := parseGraph(in)
	if got := strs(errs); !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The warnings of an invalid graph come with its errors.
	plan, cerrs, warns := Check(in)
	if plan != nil || !slices.Equal(strs(cerrs), want) {
		t.Errorf("Check: plan %v, errors %q", plan != nil, strs(cerrs))
	}
	if got, want := strs(warns), []string{"total_tasks: is 9 but the graph has 5 tasks"}; !slices.Equal(got, want) {
		t.Errorf("Check warnings %q, want %q", got, want)
	}
}

func TestComputeValidatesGraphsBuiltInCode(t *testing.T) {
	g := &Graph{Tasks: []*Task{
		{ID: "A", Title: "a", Verification: Verification{Command: "true"}, Level: -2},
		nil,
		{ID: "B", Title: "b", Verification: Verification{Command: "true", TimeoutSeconds: -3}, Dependencies: []string{"A", "B"}},
	}}
	want := []string{
		"feature: required",
		"tasks[0].level: must be at least 1, got -2",
		"tasks[1]: missing task",
		"tasks[2].dependencies[1]: task depends on itself",
		"tasks[2].verification.timeout_seconds: must be a positive number of seconds, got -3",
	}
	plan, errs := compute(g)
	if got := strs(errs); !slices.Equal(got, want) || plan != nil {
		t.Errorf("got plan %v, problems\n%s\nwant\n%s", plan != nil, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, errs := compute(nil); len(errs) != 1 {
		t.Errorf("Compute(nil) = %q", strs(errs))
	}
	if _, errs := compute(&Graph{Feature: "f"}); !slices.Equal(strs(errs), []string{"tasks: must be a non-empty array of tasks"}) {
		t.Errorf("empty graph: %q", strs(errs))
	}
}

func TestProblemString(t *testing.T) {
	if got := (Problem{Place: "tasks[3].dependencies[0]", Msg: `unknown task "X"`}).String(); got != `tasks[3].dependencies[0]: unknown task "X"` {
		t.Error(got)
	}
	if got := (Problem{Msg: "just this"}).String(); got != "just this" {
		t.Error(got)
	}
}

func TestValidFeatureName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"ok-name", true}, {"auth", true}, {"v1.2_x", true}, {"A", true},
		{"a..b", false}, {"x.lock", false}, {"x.", false}, {"@", false}, {"a@{b", false},
		{"", false}, {"-x", false}, {".x", false}, {"a/b", false}, {"a b", false}, {"ü", false},
		{strings.Repeat("a", 64), true}, {strings.Repeat("a", 65), false},
	}
	for _, tt := range tests {
		err := ValidFeatureName(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("ValidFeatureName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "feature name") {
			t.Errorf("ValidFeatureName(%q) = %v: not descriptive", tt.name, err)
		}
	}
	for name, want := range map[string]string{"a..b": `".."`, "x.lock": `".lock"`, "x.": `end in "."`} {
		if err := ValidFeatureName(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidFeatureName(%q) = %v, want mention of %s", name, err, want)
		}
	}
}

// The refusal carries the name and the problem apart, so a caller that
// words the sentence itself (an epic's name, "bad feature name X (...)")
// gets the same text the message has, not an edit of it.
func TestFeatureNameError(t *testing.T) {
	for name, want := range map[string]string{
		"":                      "feature name is empty",
		strings.Repeat("a", 65): `feature name "` + strings.Repeat("a", 65) + `" is too long (65 characters, at most 64)`,
		"a@{b":                  `feature name "a@{b" is not allowed in a git ref ("@" or "@{")`,
		"a..b":                  `feature name "a..b" must not contain ".." (git refs cannot)`,
		"a b":                   `feature name "a b" may only contain letters, digits, '.', '_' and '-', and must start with a letter or digit`,
	} {
		var ne *NameError
		err := ValidFeatureName(name)
		if !errors.As(err, &ne) || ne.Name != name || err.Error() != want {
			t.Errorf("ValidFeatureName(%q) = %#v, want a *NameError reading %s", name, err, want)
			continue
		}
		if !strings.HasSuffix(want, " "+ne.Problem) {
			t.Errorf("problem %q is not the end of %q", ne.Problem, want)
		}
		if got, wantEpic := ne.Describe("epic name"), "epic name"+strings.TrimPrefix(want, "feature name"); got != wantEpic {
			t.Errorf("Describe(epic name) = %q, want %q", got, wantEpic)
		}
	}
}

func TestValidIDMatchesPattern(t *testing.T) {
	pattern, not := regexp.MustCompile(idPattern), regexp.MustCompile(idNotPattern)
	for _, id := range []string{"TASK-001", "a", "0", "a.b_c-d", "", "-a", ".a", "_a", "a b", "a/b", "a\n", "ü", "A:1",
		"a..b", "B.lock", "x.", "a.lock.b", "a.LOCK", "lock", "a._b", "a.-", "a@{1}", "@",
		strings.Repeat("z", 64), strings.Repeat("z", 65)} {
		want := pattern.MatchString(id) && !not.MatchString(id) && len(id) <= 64
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
		if got := ValidFeatureName(id) == nil; got != want {
			t.Errorf("ValidFeatureName(%q) ok = %v, want %v", id, got, want)
		}
	}
}

// Every id ValidID accepts is one git accepts as a ref component; the
// cases are those check-ref-format refuses.
func TestValidIDRefSafe(t *testing.T) {
	for _, id := range []string{"B.lock", "a..b", "x.", "a...b", "x.lock", "ab.."} {
		if ValidID(id) {
			t.Errorf("ValidID(%q) = true", id)
		}
	}
	for _, id := range []string{"a.b", "lock", "a.locks", "v1.2.3", "a-.b"} {
		if !ValidID(id) {
			t.Errorf("ValidID(%q) = false", id)
		}
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	in := []byte(`{
  "version": "2.0",
  "feature": "auth",
  "generated": "2026-02-04T10:00:00Z",
  "levels": {"1": {"name": "foundation", "tasks": ["A"], "parallel": true, "depends_on_levels": []}},
  "critical_path": ["A", "B"],
  "tasks": [
    {"id": "A", "title": "models", "description": "d", "level": 1,
     "files": {"create": ["src/m.py"], "modify": [], "read": ["src/t.py"], "generated": ["x"]},
     "dependencies": [], "soft_dependencies": [], "acceptance_criteria": ["works"], "context": ["design.md#m"],
     "risk": "low",
     "verification": {"command": "pytest && echo <ok>", "timeout_seconds": 30, "retries": 2},
     "estimate_minutes": 15, "phase": "foundation",
     "steps": [{"step": 1, "action": "write_test", "file": "tests/test_m.py"}],
     "consumers": ["B"], "integration_test": "tests/integration/test_m.py", "critical_path": true},
    {"id": "B", "title": "service", "dependencies": ["A"], "verification": {"command": "true"}, "x-unknown": {"nested": [1, 2.50, null]}}
  ]
}`)
	g, errs := parseGraph(in)
	if len(errs) > 0 {
		t.Fatal(strs(errs))
	}
	for _, k := range []string{"version", "generated", "levels", "critical_path"} {
		if _, ok := g.Extra[k]; !ok {
			t.Errorf("top-level %q not kept", k)
		}
	}
	a := g.Tasks[0]
	for _, k := range []string{"estimate_minutes", "phase", "steps", "consumers", "integration_test", "critical_path"} {
		if _, ok := a.Extra[k]; !ok {
			t.Errorf("task key %q not kept", k)
		}
	}
	if string(g.Tasks[1].Extra["x-unknown"]) != `{"nested": [1, 2.50, null]}` {
		t.Errorf("extra not verbatim: %s", g.Tasks[1].Extra["x-unknown"])
	}
	if string(a.Files.Extra["generated"]) != `["x"]` || string(a.Verification.Extra["retries"]) != "2" {
		t.Errorf("nested extras not kept: %v %v", a.Files.Extra, a.Verification.Extra)
	}
	wantA := &Task{ID: "A", Title: "models", Description: "d", Level: 1,
		Files:              Files{Create: []string{"src/m.py"}, Read: []string{"src/t.py"}, Extra: a.Files.Extra},
		AcceptanceCriteria: []string{"works"}, Context: []string{"design.md#m"}, Risk: "low",
		Verification: Verification{Command: "pytest && echo <ok>", TimeoutSeconds: 30, Extra: a.Verification.Extra},
		Extra:        a.Extra}
	if !reflect.DeepEqual(a, wantA) {
		t.Errorf("task A decoded as\n%#v\nwant\n%#v", a, wantA)
	}

	out, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	out2, err := g.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out2), `"pytest && echo <ok>"`) {
		t.Errorf("MarshalJSON escapes HTML: %s", out2)
	}
	g2, errs := parseGraph(out)
	if len(errs) > 0 {
		t.Fatal(strs(errs))
	}
	again, _ := json.Marshal(g2)
	if !bytes.Equal(out, again) {
		t.Errorf("not stable:\n%s\n%s", out, again)
	}
	if !sameContent(t, in, out) {
		t.Errorf("round trip changed content:\n%s", out)
	}
	if !strings.HasPrefix(string(out2), `{"critical_path":["A","B"],"feature":"auth","generated":`) {
		t.Errorf("keys not sorted: %s", out2)
	}
}

func TestTaskMarshalOmitsEmptyOptionals(t *testing.T) {
	got, err := json.Marshal(&Task{ID: "A"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"dependencies":[],"files":{"create":[],"modify":[],"read":[]},"id":"A","title":"","verification":{"command":""}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	bad := &Task{ID: "A", Extra: map[string]json.RawMessage{"x": json.RawMessage("{")}}
	if _, err := bad.MarshalJSON(); err == nil {
		t.Error("invalid Extra marshaled without error")
	}
}

func TestUnmarshalJSON(t *testing.T) {
	var task Task
	if err := json.Unmarshal([]byte(tk("A", `"level":2`, `"phase":"x"`)), &task); err != nil {
		t.Fatal(err)
	}
	if task.ID != "A" || task.Level != 2 || string(task.Extra["phase"]) != `"x"` {
		t.Errorf("got %+v", task)
	}
	err := json.Unmarshal([]byte(`{"id":1,"dependencies":"x"}`), &task)
	if err == nil || !strings.Contains(err.Error(), "id: want a string, got number") ||
		!strings.Contains(err.Error(), "dependencies: want an array of strings, got string") {
		t.Errorf("err = %v", err)
	}
	var g Graph
	if err := json.Unmarshal(doc(tk("A"), `{"id":"B"}`), &g); err != nil {
		t.Fatal(err) // decoding does not validate
	}
	if g.Feature != "auth" || len(g.Tasks) != 2 || g.Tasks[1].ID != "B" {
		t.Errorf("got %+v", g)
	}
	if err := json.Unmarshal([]byte(`{"tasks":"no"}`), &g); err == nil {
		t.Error("want type error")
	}
}

func TestOwned(t *testing.T) {
	task := &Task{Files: Files{Create: []string{"a", "b", "a"}, Modify: []string{"c", "b", "d/"}, Read: []string{"r"}}}
	if got, want := task.Owned(), []string{"a", "b", "c", "d/"}; !slices.Equal(got, want) {
		t.Errorf("Owned() = %q, want %q", got, want)
	}
	if got := (&Task{}).Owned(); len(got) != 0 {
		t.Errorf("Owned() of check-only task = %q", got)
	}
	var many []string
	for i := range 40 {
		many = append(many, string(rune('a'+i%20)))
	}
	if got := (&Task{Files: Files{Modify: many}}).Owned(); len(got) != 20 {
		t.Errorf("large Owned() = %q", got)
	}
}

// The graph files are meant to look like what ZERG writes, with each of
// the situations the planner resolves by itself.
func TestTestdataGraphs(t *testing.T) {
	tests := []struct {
		file     string
		levels   [][]string
		warnings []string
		implied  map[string][]string
	}{
		{
			file:   "minimal.json",
			levels: [][]string{{"HELLO-001"}},
		},
		{
			file: "zerg-like.json",
			levels: [][]string{
				{"AUTH-L1-001", "AUTH-L1-002", "AUTH-L1-003"},
				{"AUTH-L2-001", "AUTH-L2-002", "AUTH-L1-004"},
				{"AUTH-L2-003", "AUTH-L3-001", "AUTH-L3-002"},
				{"AUTH-L4-001"},
			},
			warnings: []string{
				`tasks[5].files.modify[0]: AUTH-L2-003 and AUTH-L2-002 both write "src/auth/__init__.py"; AUTH-L2-003 now runs after AUTH-L2-002`,
				`tasks[6].files.create[0]: AUTH-L1-004 writes "migrations/versions/0007_sessions.py", which overlaps "migrations/versions/*_users.py" written by AUTH-L1-003; AUTH-L1-004 now runs after AUTH-L1-003`,
				"tasks[7].level: AUTH-L3-001 is level 2 in the graph but depends on AUTH-L2-001 (level 2); moved to level 3",
			},
			implied: map[string][]string{"AUTH-L2-003": {"AUTH-L2-002"}, "AUTH-L1-004": {"AUTH-L1-003"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "testdata", "graphs", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			plan, errs := Load(data)
			if len(errs) > 0 {
				t.Fatalf("problems: %q", strs(errs))
			}
			if !reflect.DeepEqual(plan.Levels, tt.levels) {
				t.Errorf("levels = %q, want %q", plan.Levels, tt.levels)
			}
			if got := strs(plan.Warnings); !slices.Equal(got, tt.warnings) {
				t.Errorf("warnings:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.warnings, "\n"))
			}
			if len(tt.implied) > 0 && !reflect.DeepEqual(plan.Implied, tt.implied) {
				t.Errorf("implied = %q, want %q", plan.Implied, tt.implied)
			}
			// ZERG's own keys survive a rewrite.
			out, err := json.Marshal(plan.Graph)
			if err != nil {
				t.Fatal(err)
			}
			if !sameContent(t, data, out) {
				t.Errorf("rewrite changed content:\n%s", out)
			}
		})
	}
}

// sameContent compares two JSON documents, ignoring keys whose value is
// null, [] or {}, which MarshalJSON is free to drop or add.
func sameContent(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(dropEmpty(x), dropEmpty(y))
}

func dropEmpty(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			e = dropEmpty(e)
			switch e := e.(type) {
			case nil:
				delete(v, k)
				continue
			case []any:
				if len(e) == 0 {
					delete(v, k)
					continue
				}
			case map[string]any:
				if len(e) == 0 {
					delete(v, k)
					continue
				}
			}
			v[k] = e
		}
	case []any:
		for i, e := range v {
			v[i] = dropEmpty(e)
		}
	}
	return v
}
