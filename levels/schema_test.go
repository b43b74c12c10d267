package levels

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"
)

// schemaChecker applies the part of JSON Schema 2020-12 that Schema uses.
// A keyword it does not know fails the test, so a schema that grows past
// it cannot pass unchecked.
type schemaChecker struct {
	t    *testing.T
	root map[string]any
}

func loadSchema(t *testing.T) *schemaChecker {
	t.Helper()
	var root map[string]any
	if err := json.Unmarshal(Schema(), &root); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	if root["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v", root["$schema"])
	}
	return &schemaChecker{t: t, root: root}
}

func decodeNumbers(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("sample is not JSON: %v\n%s", err, data)
	}
	return v
}

// valid returns why v fails s, or "".
func (c *schemaChecker) valid(s map[string]any, v any, place string) string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if msg := c.keyword(k, s[k], s, v, place); msg != "" {
			return msg
		}
	}
	return ""
}

func isInteger(n json.Number) bool {
	f, err := n.Float64()
	return err == nil && f == math.Trunc(f)
}

func typeOf(v any) []string {
	switch v := v.(type) {
	case nil:
		return []string{"null"}
	case bool:
		return []string{"boolean"}
	case string:
		return []string{"string"}
	case []any:
		return []string{"array"}
	case map[string]any:
		return []string{"object"}
	case json.Number:
		if isInteger(v) {
			return []string{"number", "integer"}
		}
		return []string{"number"}
	}
	panic(fmt.Sprintf("%T", v))
}

func (c *schemaChecker) keyword(k string, arg any, s map[string]any, v any, place string) string {
	switch k {
	case "$schema", "$defs", "title", "description":
	case "$ref":
		name, ok := strings.CutPrefix(arg.(string), "#/$defs/")
		if !ok {
			c.t.Fatalf("unsupported $ref %v", arg)
		}
		def, ok := c.root["$defs"].(map[string]any)[name].(map[string]any)
		if !ok {
			c.t.Fatalf("no $defs/%s", name)
		}
		return c.valid(def, v, place)
	case "type":
		want := []string{}
		switch a := arg.(type) {
		case string:
			want = append(want, a)
		case []any:
			for _, e := range a {
				want = append(want, e.(string))
			}
		}
		for _, got := range typeOf(v) {
			if slices.Contains(want, got) {
				return ""
			}
		}
		return fmt.Sprintf("%s: type %v, want %v", place, typeOf(v), want)
	case "enum":
		for _, e := range arg.([]any) {
			if fmt.Sprint(e) == fmt.Sprint(v) && (e == nil) == (v == nil) {
				return ""
			}
		}
		return fmt.Sprintf("%s: %v not in enum", place, v)
	case "properties", "patternProperties", "additionalProperties", "required":
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		props, _ := s["properties"].(map[string]any)
		switch k {
		case "properties":
			for name, sub := range props {
				if e, ok := m[name]; ok {
					if msg := c.valid(sub.(map[string]any), e, place+"."+name); msg != "" {
						return msg
					}
				}
			}
		case "patternProperties":
			for pat, sub := range arg.(map[string]any) {
				re := regexp.MustCompile(pat)
				for name, e := range m {
					if re.MatchString(name) {
						if msg := c.valid(sub.(map[string]any), e, place+"."+name); msg != "" {
							return msg
						}
					}
				}
			}
		case "additionalProperties":
			if arg != false {
				c.t.Fatalf("unsupported additionalProperties %v", arg)
			}
			pats, _ := s["patternProperties"].(map[string]any)
		keys:
			for name := range m {
				if _, ok := props[name]; ok {
					continue
				}
				for pat := range pats {
					if regexp.MustCompile(pat).MatchString(name) {
						continue keys
					}
				}
				return fmt.Sprintf("%s.%s: additional property", place, name)
			}
		case "required":
			for _, r := range arg.([]any) {
				if _, ok := m[r.(string)]; !ok {
					return fmt.Sprintf("%s.%s: required", place, r)
				}
			}
		}
	case "items", "minItems":
		a, ok := v.([]any)
		if !ok {
			return ""
		}
		if k == "minItems" {
			if float64(len(a)) < arg.(float64) {
				return place + ": too few items"
			}
			return ""
		}
		for i, e := range a {
			if msg := c.valid(arg.(map[string]any), e, fmt.Sprintf("%s[%d]", place, i)); msg != "" {
				return msg
			}
		}
	case "minLength", "maxLength", "pattern":
		str, ok := v.(string)
		if !ok {
			return ""
		}
		n := float64(utf8.RuneCountInString(str))
		switch {
		case k == "minLength" && n < arg.(float64), k == "maxLength" && n > arg.(float64):
			return fmt.Sprintf("%s: %s", place, k)
		case k == "pattern" && !regexp.MustCompile(arg.(string)).MatchString(str):
			return fmt.Sprintf("%s: %q does not match %s", place, str, arg)
		}
	case "minimum", "maximum":
		n, ok := v.(json.Number)
		if !ok {
			return ""
		}
		f, _ := n.Float64()
		if k == "minimum" && f < arg.(float64) || k == "maximum" && f > arg.(float64) {
			return fmt.Sprintf("%s: %v out of range (%s %v)", place, n, k, arg)
		}
	case "not":
		if c.valid(arg.(map[string]any), v, place) == "" {
			return place + ": matches a \"not\""
		}
	default:
		c.t.Fatalf("schema keyword %q not supported by the test's checker", k)
	}
	return ""
}

func (c *schemaChecker) check(data []byte) string {
	return c.valid(c.root, decodeNumbers(c.t, data), "")
}

// strictOK is validate --strict on one graph: no errors and no warnings.
func strictOK(data []byte) (bool, []string) {
	_, errs, warns := Check(data)
	return len(errs)+len(warns) == 0, append(strs(errs), strs(warns)...)
}

// The schema and validate --strict agree on every graph whose problems,
// if any, lie in a single value or key: what a schema can see.
func TestSchemaAgreesWithValidate(t *testing.T) {
	c := loadSchema(t)
	full := tk("A", `"description":"d"`, `"level":1`, files("create", "src/a.go"), `"soft_dependencies":[]`,
		`"acceptance_criteria":["ok"]`, `"context":"design.md"`, `"risk":"low"`, `"verification":{"command":"go test","timeout_seconds":60}`,
		`"estimate_minutes":5`, `"phase":"core"`, `"steps":[{"step":1}]`, `"consumers":["B"]`, `"integration_test":"t"`,
		`"status":"todo"`, `"critical_path":true`, `"x-mine":{"any":1}`)
	graph := func(top string, tasks ...string) []byte {
		if top != "" {
			top = "," + top
		}
		return []byte(`{"feature":"auth","tasks":[` + strings.Join(tasks, ",") + `]` + top + `}`)
	}
	samples := [][]byte{
		graph("", tk("A")),
		graph(`"$schema":"x","version":"2.0","generated":"now","total_tasks":2,"estimated_duration_minutes":1,"max_parallelization":2,`+
			`"critical_path":["A"],"critical_path_minutes":3,"levels":{},"x-a":1`, full, tk("B", deps("A"))),
		graph(`"total_tasks":"3"`, tk("A")),
		graph(`"total_tasks":null`, tk("A")),
		graph(`"max_parallelization":0`, tk("A")),
		graph(`"max_parallelization":1.0`, tk("A")),
		graph(`"taks":[]`, tk("A")),
		[]byte(`{"tasks":[` + tk("A") + `]}`),
		[]byte(`{"feature":"auth"}`),
		[]byte(`{"feature":"auth","tasks":[]}`),
		[]byte(`{"feature":"auth","tasks":{}}`),
		[]byte(`{"feature":"a..b","tasks":[` + tk("A") + `]}`),
		[]byte(`{"feature":"x.lock","tasks":[` + tk("A") + `]}`),
		[]byte(`{"feature":7,"tasks":[` + tk("A") + `]}`),
		graph("", `{"title":"t","verification":{"command":"x"}}`),
		graph("", `{"id":"A","verification":{"command":"x"}}`),
		graph("", `{"id":"A","title":"t"}`),
		graph("", `{"id":"A","title":"t","verification":{}}`),
		graph("", `{"id":"A","title":"t","verification":null}`),
		graph("", `"A"`),
		graph("", tk("A", `"title":" "`)),
		graph("", tk("A", `"verification":{"command":" \t"}`)),
		graph("", tk("A", `"verification":{"command":"a\u0000b"}`)),
		graph("", tk("A", `"verification":{"command":"a\u001bb"}`)),
		graph("", tk("A", `"verification":{"command":"a\n\tb"}`)),
		graph("", tk("A", `"verification":{"command":"x","timeout_seconds":0}`)),
		graph("", tk("A", `"verification":{"command":"x","timeout_seconds":1.5}`)),
		graph("", tk("A", `"verification":{"command":"x","timeout_seconds":null}`)),
		graph("", tk("A", `"verification":{"command":"x","timeout":5}`)),
		graph("", tk("A", `"level":0`)), graph("", tk("A", `"level":100000`)), graph("", tk("A", `"level":100001`)),
		graph("", tk("A", `"level":"1"`)), graph("", tk("A", `"level":null`)), graph("", tk("A", `"level":2e0`)),
		graph("", tk("A", `"risk":"extreme"`)), graph("", tk("A", `"risk":null`)), graph("", tk("A", `"risk":""`)), graph("", tk("A", `"risk":3`)),
		graph("", tk("A", `"description":5`)),
		graph("", tk("A", `"dependencies":"B"`)), graph("", tk("A", `"dependencies":[1]`)), graph("", tk("A", `"dependencies":["a b"]`)),
		graph("", tk("A", `"dependencies":["B.lock"]`)),
		graph("", tk("A", `"context":[1]`)), graph("", tk("A", `"context":{}`)), graph("", tk("A", `"acceptance_criteria":"one"`)),
		graph("", tk("A", `"files":[]`)), graph("", tk("A", `"files":null`)), graph("", tk("A", `"files":{"create":null}`)),
		graph("", tk("A", `"files":{"create":"a"}`)), graph("", tk("A", `"files":{"creat":[]}`)), graph("", tk("A", `"files":{"x-gen":[]}`)),
		graph("", tk("A", `"dependncies":[]`)), graph("", tk("A", `"x-dependncies":[]`)),
		graph("", tk(strings.Repeat("a", 64))), graph("", tk(strings.Repeat("a", 65))),
	}
	for _, id := range []string{"B.lock", "a..b", "x.", ".x", "-x", "a b", "a/b", "ü", "a.b", "A-1_b.c"} {
		samples = append(samples, graph("", tk(id)))
	}
	for _, p := range []string{"", "/abs", `a\\b`, "a/../b", "..", "../x", "./a", "a/./b", "a//b", ".", "./", ".git", ".GIT/x", ".gitignore",
		"a\u0000b", "src/", "src/**/*.go", "a/.", "a/..", "x.go", ".github/ci.yml"} {
		samples = append(samples, graph("", tk("A", files("modify", p))))
	}
	for _, data := range samples {
		ok, probs := strictOK(data)
		msg := c.check(data)
		if ok != (msg == "") {
			t.Errorf("disagree on %s:\n  validate --strict: %q\n  schema: %s", data, probs, msg)
		}
	}

	// What only validate can see: relations between values.
	for _, data := range [][]byte{
		graph("", tk("A", deps("B"))),
		graph("", tk("A"), tk("A")),
		graph("", tk("A", deps("B")), tk("B", deps("A"))),
		graph("", tk("A", files("modify", "x")), tk("B", files("modify", "x"))),
		graph("", tk("A", files("modify", "a[b"))),
		graph(`"total_tasks":3`, tk("A")),
		graph(`"max_parallelization":2`, tk("A")),
	} {
		if ok, _ := strictOK(data); ok {
			t.Errorf("validate --strict accepts %s", data)
		}
		if msg := c.check(data); msg != "" {
			t.Errorf("schema refuses %s: %s", data, msg)
		}
	}
}

// The schema's properties are the keys the decoder knows, and its required
// keys are the ones validate requires.
func TestSchemaKeys(t *testing.T) {
	c := loadSchema(t)
	defs := c.root["$defs"].(map[string]any)
	objects := []struct {
		name   string
		schema map[string]any
		// wrap places one object, given as its members, in a valid graph.
		wrap func(members string) []byte
		full string // members of a valid object with every required key
	}{
		{"graph", c.root, func(m string) []byte { return []byte("{" + m + "}") },
			`"feature":"auth","tasks":[` + tk("A") + `]`},
		{"task", defs["task"].(map[string]any), func(m string) []byte { return doc("{" + m + "}") },
			`"id":"A","title":"t","verification":{"command":"true"}`},
		{"files", defs["files"].(map[string]any), func(m string) []byte { return doc(tk("A", `"files":{`+m+`}`)) },
			`"create":["a"]`},
		{"verification", defs["verification"].(map[string]any), func(m string) []byte { return doc(tk("A", `"verification":{`+m+`}`)) },
			`"command":"true"`},
	}
	for _, o := range objects {
		props := o.schema["properties"].(map[string]any)
		if ok, probs := strictOK(o.wrap(o.full)); !ok {
			t.Fatalf("%s: base sample invalid: %q", o.name, probs)
		}
		var names []string
		for name := range props {
			names = append(names, name)
			// A known key never warns as unknown, whatever its value.
			_, _, warns := Check(o.wrap(o.full + "," + quote(name) + ":null"))
			for _, w := range warns {
				if strings.Contains(w.Msg, "unknown key") {
					t.Errorf("%s: schema property %q is unknown to validate: %s", o.name, name, w)
				}
			}
			// A near miss of it does.
			_, _, warns = Check(o.wrap(o.full + "," + quote(name+"q") + ":null"))
			if !slices.ContainsFunc(warns, func(w Problem) bool { return strings.Contains(w.Msg, "unknown key") }) {
				t.Errorf("%s: key %q is not warned about", o.name, name+"q")
			}
		}
		sort.Strings(names)
		if s := o.name; s != "graph" {
			// Every property is listed in the table the decoder uses.
			var table *object
			switch s {
			case "task":
				table = taskObject.Get()
			case "files":
				table = filesObject.Get()
			case "verification":
				table = verificationObject.Get()
			}
			if want := slices.Sorted(slices.Values(table.names)); !slices.Equal(names, want) {
				t.Errorf("%s: schema properties %q, decoder knows %q", s, names, want)
			}
		}
		// Each required key, left out, is an error of validate.
		required, _ := o.schema["required"].([]any)
		for _, r := range required {
			var members []string
			for _, m := range strings.Split(o.full, `,"`) {
				if !strings.HasPrefix(strings.TrimPrefix(m, `"`), r.(string)+`"`) {
					members = append(members, m)
				}
			}
			data := o.wrap(strings.Join(members, `,"`))
			if _, errs, _ := Check(data); len(errs) == 0 {
				t.Errorf("%s: without required %q validate accepts %s", o.name, r, data)
			}
		}
	}
	want := map[string][]string{
		"graph": {"feature", "tasks"}, "task": {"id", "title", "verification"}, "verification": {"command"},
	}
	for _, o := range objects {
		var got []string
		required, _ := o.schema["required"].([]any)
		for _, r := range required {
			got = append(got, r.(string))
		}
		if !slices.Equal(got, want[o.name]) {
			t.Errorf("%s: required %q, want %q", o.name, got, want[o.name])
		}
	}
}

// The schema's id rule is ValidID, on hand-picked and random strings.
func TestSchemaIDPattern(t *testing.T) {
	c := loadSchema(t)
	name := c.root["$defs"].(map[string]any)["name"].(map[string]any)
	check := func(id string) {
		schemaOK := c.valid(name, id, "id") == ""
		if schemaOK != ValidID(id) {
			t.Errorf("id %q: schema %v, ValidID %v", id, schemaOK, ValidID(id))
		}
		if featureOK := ValidFeatureName(id) == nil; schemaOK != featureOK {
			t.Errorf("feature %q: schema %v, ValidFeatureName %v", id, schemaOK, featureOK)
		}
	}
	for _, id := range []string{"", "A", "B.lock", "a..b", "x.", ".x", "a.lock.x", strings.Repeat("a", 64), strings.Repeat("a", 65), "@", "a@{0}"} {
		check(id)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const alphabet = "ab1.-_lockLOCK/@{ ü"
	runes := []rune(alphabet)
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(10) {
			b.WriteRune(runes[rng.IntN(len(runes))])
		}
		check(b.String())
	}
}
