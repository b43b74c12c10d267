package levels

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestCheckWarnings(t *testing.T) {
	tests := []struct {
		name  string
		in    []byte
		errs  []string
		warns []string
	}{
		{"misspelled keys, each level", []byte(`{"feature":"f","taks":1,"tasks":[` +
			tk("A", `"dependncies":["B"]`, `"file":{"create":["a"]}`, `"Title":"x"`,
				`"files":{"creat":["a"],"read":[]}`, `"verification":{"command":"true","timeout":5,"x":1}`) + `,` + tk("B") + `]}`),
			nil, []string{
				"taks: unknown key; did you mean tasks?",
				"tasks[0].Title: unknown key; did you mean title?",
				"tasks[0].dependncies: unknown key; did you mean dependencies?",
				"tasks[0].file: unknown key; did you mean files?",
				"tasks[0].files.creat: unknown key; did you mean create?",
				"tasks[0].verification.timeout: unknown key; did you mean timeout_seconds?",
				`tasks[0].verification.x: unknown key (kept, but not read; a key of your own can start with "x-")`,
			}},
		{"ZERG's keys and x- keys are known", []byte(`{"$schema":"s","feature":"f","version":"2.0","generated":"2026-01-01T00:00:00Z",
			"total_tasks":1,"estimated_duration_minutes":5,"max_parallelization":1,"critical_path":["A"],"critical_path_minutes":5,
			"levels":{"1":{"name":"a","tasks":["A"]}},"x-team":"core","tasks":[` +
			tk("A", `"estimate_minutes":5,"phase":"p","steps":[],"consumers":[],"integration_test":"t","status":"todo",`+
				`"critical_path":true,"acceptance_criteria":["a"],"context":["c"],"x-mine":1,"files":{"create":["a"],"x-gen":[]}`) + `]}`),
			nil, nil},
		{"odd keys are quoted", []byte(`{"feature":"f","":1,"a b":2,"tasks":[` + tk("A", `"x\ny":3`) + `]}`), nil, []string{
			`[""]: unknown key (kept, but not read; a key of your own can start with "x-")`,
			`["a b"]: unknown key (kept, but not read; a key of your own can start with "x-")`,
			`tasks[0]["x\ny"]: unknown key (kept, but not read; a key of your own can start with "x-")`,
		}},
		{"metadata that disagrees is a warning", []byte(`{"feature":"f","total_tasks":26,"max_parallelization":5,"tasks":[` + tk("A") + `]}`),
			nil, []string{"total_tasks: is 26 but the graph has 1 tasks", "max_parallelization: is 5 but the graph has 1 tasks"}},
		{"warnings come with errors", []byte(`{"feature":"a..b","total_tasks":2,"tasks":[` + tk("A", `"dependncies":["B"]`, `"risk":"huge"`) + `]}`),
			[]string{`tasks[0].risk: invalid risk "huge" (want low, medium, high or critical)`},
			[]string{
				`feature: feature name "a..b" must not contain ".." (git refs cannot)`,
				"total_tasks: is 2 but the graph has 1 tasks",
				"tasks[0].dependncies: unknown key; did you mean dependencies?",
			}},
		{"ids git refuses", doc(tk("B.lock"), tk("a..b"), tk("x."), tk("ok.lock.d"), tk("C", deps("B.lock"))), []string{
			`tasks[0].id: invalid id "B.lock": must not end in ".lock" (git refs cannot)`,
			`tasks[1].id: invalid id "a..b": must not contain ".." (git refs cannot)`,
			`tasks[2].id: invalid id "x.": must not end in "." (git refs cannot)`,
		}, nil},
		{"commands", doc(tk("A", `"verification":{"command":"make\u0000 test"}`),
			tk("B", `"verification":{"command":"echo \u001b[2Kok"}`),
			tk("C", `"verification":{"command":"set -e\n\tmake test\n"}`),
			tk("D", `"verification":{"command":"a\rb"}`)), []string{
			`tasks[0].verification.command: contains a NUL byte (at byte 4), which no command can hold`,
			`tasks[1].verification.command: contains the control character U+001B (at byte 5); write it as an escape the shell understands, e.g. printf '\033'`,
			`tasks[3].verification.command: contains the control character U+000D (at byte 1); write it as an escape the shell understands, e.g. printf '\033'`,
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, errs, warns := Check(tt.in)
			if got := strs(errs); !slices.Equal(got, tt.errs) {
				t.Errorf("errors:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.errs, "\n"))
			}
			if got := strs(warns); !slices.Equal(got, tt.warns) {
				t.Errorf("warnings:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.warns, "\n"))
			}
			if (plan == nil) != (len(errs) > 0) {
				t.Errorf("plan %v with %d errors", plan != nil, len(errs))
			}
			if plan != nil && !slices.Equal(plan.Warnings, warns) {
				t.Errorf("plan warnings %q differ from %q", strs(plan.Warnings), strs(warns))
			}
		})
	}
}

// Unknown keys are warned about but kept, so a rewrite loses nothing.
func TestUnknownKeysKept(t *testing.T) {
	g, errs := parseGraph(doc(tk("A", `"dependncies":["B"]`, `"files":{"creat":["a"]}`), tk("B")))
	if len(errs) > 0 {
		t.Fatal(strs(errs))
	}
	if string(g.Tasks[0].Extra["dependncies"]) != `["B"]` || string(g.Tasks[0].Files.Extra["creat"]) != `["a"]` {
		t.Errorf("unknown keys not kept: %v %v", g.Tasks[0].Extra, g.Tasks[0].Files.Extra)
	}
	out, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"dependncies":["B"]`) {
		t.Errorf("unknown key lost in rewrite: %s", out)
	}
}

func TestClosest(t *testing.T) {
	names := taskObject.Get().names
	for in, want := range map[string]string{
		"dependncies": "dependencies", "dependancies": "dependencies", "TITLE": "title", "file": "files",
		"verifcation": "verification", "rsk": "risk", "soft": "soft_dependencies", "estimate": "estimate_minutes", "zzz": "", "identifier": "", "": "",
	} {
		if got := closest(in, names); got != want {
			t.Errorf("closest(%q) = %q, want %q", in, got, want)
		}
	}
}
