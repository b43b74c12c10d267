// Package levels reads a ZERG task graph (task-graph.json), checks it, and
// turns it into a plan: the tasks grouped into dependency levels such that no
// two tasks of one level write the same files.
//
// The package does no I/O and knows nothing about git; callers hand it bytes
// and get back a Plan or a list of Problems, each with the place in the file
// it concerns, so that a user can fix every mistake in one pass.
package levels

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
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

// decoder collects every type problem instead of stopping at the first, so
// a user sees all of them at once.
type decoder struct {
	probs []Problem
	warns []Problem
}

func (d *decoder) add(place, format string, args ...any) {
	d.probs = append(d.probs, Problem{Place: place, Msg: fmt.Sprintf(format, args...)})
}

func (d *decoder) warn(place, format string, args ...any) {
	d.warns = append(d.warns, Problem{Place: place, Msg: fmt.Sprintf(format, args...)})
}

func join(place, key string) string {
	if place == "" {
		return key
	}
	return place + "." + key
}

func index(place string, i int) string {
	return place + "[" + strconv.Itoa(i) + "]"
}

// kind names the JSON type of a value the way a user thinks of it. The
// values handed to it were already checked for syntax.
func kind(raw json.RawMessage) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func (d *decoder) object(raw json.RawMessage, place, want string) (map[string]json.RawMessage, bool) {
	if k := kind(raw); k != "object" {
		d.add(place, "want %s, got %s", want, k)
		return nil, false
	}
	if m, ok := splitObject(raw); ok {
		return m, true
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		d.add(place, "%v", err)
		return nil, false
	}
	return m, true
}

func (d *decoder) str(raw json.RawMessage, place string) string {
	switch k := kind(raw); k {
	case "null":
		return ""
	case "string":
		// raw was validated with the enclosing document, so a string
		// without escapes is its bytes between the quotes; this skips the
		// reflection of json.Unmarshal for nearly every string in a graph.
		raw = bytes.TrimSpace(raw)
		if body := raw[1 : len(raw)-1]; bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
			return string(body)
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			d.add(place, "%v", err)
		}
		return s
	default:
		d.add(place, "want a string, got %s", k)
		return ""
	}
}

// strs decodes an array of strings. With lenient set a lone string is taken
// as a one-element list, for descriptive fields where some graph writers
// use a plain string.
func (d *decoder) strs(raw json.RawMessage, place string, lenient bool) []string {
	switch k := kind(raw); k {
	case "null":
		return nil
	case "array":
	case "string":
		if lenient {
			if s := d.str(raw, place); s != "" {
				return []string{s}
			}
			return nil
		}
		fallthrough
	default:
		d.add(place, "want an array of strings, got %s", k)
		return nil
	}
	elems, ok := splitArray(raw)
	if !ok {
		if err := json.Unmarshal(raw, &elems); err != nil {
			d.add(place, "%v", err)
			return nil
		}
	}
	var out []string
	for i, e := range elems {
		if k := kind(e); k != "string" {
			d.add(index(place, i), "want a string, got %s", k)
			continue
		}
		out = append(out, d.str(e, index(place, i)))
	}
	return out
}

// integer decodes a whole number; ok is false when the value is null or
// not an integer (the latter is reported).
func (d *decoder) integer(raw json.RawMessage, place string) (n int, ok bool) {
	switch k := kind(raw); k {
	case "null":
		return 0, false
	case "number":
	default:
		d.add(place, "want an integer, got %s", k)
		return 0, false
	}
	s := string(bytes.TrimSpace(raw))
	if v, err := strconv.ParseInt(s, 10, strconv.IntSize); err == nil {
		return int(v), true
	}
	// Writers that go through floating point emit 30.0 or 3e1 for 30.
	if f, err := strconv.ParseFloat(s, 64); err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
		return int(f), true
	}
	d.add(place, "want an integer, got %s", s)
	return 0, false
}

// taskKey tells the task keys the decoder reads into Task fields; the
// rest, known or not, go to Extra. A switch, not a map: a map literal is
// built at every start of the program.
func taskKey(k string) bool {
	switch k {
	case "id", "title", "description", "level", "files", "dependencies", "soft_dependencies",
		"acceptance_criteria", "context", "risk", "verification", "issue":
		return true
	}
	return false
}

func extras(m map[string]json.RawMessage, known func(string) bool) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for k, v := range m {
		if known(k) {
			continue
		}
		if out == nil {
			out = make(map[string]json.RawMessage)
		}
		out[k] = v
	}
	return out
}

// decodeTask never returns nil: a task that could not be decoded still
// takes its slot so that the indexes in later places match the file.
func (d *decoder) task(raw json.RawMessage, place string) *Task {
	t := &Task{}
	m, ok := d.object(raw, place, "a task object")
	if !ok {
		return t
	}
	d.unknownKeys(m, place, taskObject.Get())
	// Known keys are visited in a fixed order so problems come out in a
	// stable order.
	if v, ok := m["id"]; ok {
		t.ID = d.str(v, join(place, "id"))
	}
	if v, ok := m["title"]; ok {
		t.Title = d.str(v, join(place, "title"))
	}
	if v, ok := m["description"]; ok {
		t.Description = d.str(v, join(place, "description"))
	}
	if v, ok := m["level"]; ok {
		p := join(place, "level")
		if n, ok := d.integer(v, p); ok {
			// 0 would be indistinguishable from "absent" once decoded.
			if n == 0 {
				d.add(p, "must be at least 1, got 0")
			}
			t.Level = n
		}
	}
	if v, ok := m["files"]; ok && kind(v) != "null" {
		p := join(place, "files")
		if fm, ok := d.object(v, p, "an object with create, modify and read"); ok {
			if v, ok := fm["create"]; ok {
				t.Files.Create = d.strs(v, join(p, "create"), false)
			}
			if v, ok := fm["modify"]; ok {
				t.Files.Modify = d.strs(v, join(p, "modify"), false)
			}
			if v, ok := fm["read"]; ok {
				t.Files.Read = d.strs(v, join(p, "read"), false)
			}
			t.Files.Extra = extras(fm, func(k string) bool { return k == "create" || k == "modify" || k == "read" })
			d.unknownKeys(fm, p, filesObject.Get())
		}
	}
	if v, ok := m["dependencies"]; ok {
		t.Dependencies = d.strs(v, join(place, "dependencies"), false)
	}
	if v, ok := m["soft_dependencies"]; ok {
		t.SoftDependencies = d.strs(v, join(place, "soft_dependencies"), false)
	}
	if v, ok := m["acceptance_criteria"]; ok {
		t.AcceptanceCriteria = d.strs(v, join(place, "acceptance_criteria"), true)
	}
	if v, ok := m["context"]; ok {
		t.Context = d.strs(v, join(place, "context"), true)
	}
	if v, ok := m["risk"]; ok {
		t.Risk = d.str(v, join(place, "risk"))
	}
	if v, ok := m["issue"]; ok {
		p := join(place, "issue")
		if n, ok := d.integer(v, p); ok {
			// 0 would be indistinguishable from "absent" once decoded.
			if n == 0 {
				d.add(p, "must be an issue number, at least 1, got 0")
			}
			t.Issue = n
		}
	}
	if v, ok := m["verification"]; ok && kind(v) != "null" {
		p := join(place, "verification")
		if vm, ok := d.object(v, p, "an object with command and timeout_seconds"); ok {
			if v, ok := vm["command"]; ok {
				t.Verification.Command = d.str(v, join(p, "command"))
			}
			if v, ok := vm["timeout_seconds"]; ok {
				tp := join(p, "timeout_seconds")
				if n, ok := d.integer(v, tp); ok {
					if n == 0 {
						d.add(tp, "must be a positive number of seconds, got 0")
					}
					t.Verification.TimeoutSeconds = n
				}
			}
			t.Verification.Extra = extras(vm, func(k string) bool { return k == "command" || k == "timeout_seconds" })
			d.unknownKeys(vm, p, verificationObject.Get())
		}
	}
	t.Extra = extras(m, taskKey)
	return t
}

// topObject decodes the top-level JSON object of a file, or says where
// the file stops being one.
func topObject(data []byte) (map[string]json.RawMessage, []Problem) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			msg := se.Error()
			at := int(se.Offset) - 1 // Offset counts the offending byte
			if msg == "unexpected end of JSON input" {
				msg, at = "unexpected end of input", len(data)
			}
			return nil, []Problem{{Place: position(data, at), Msg: msg}}
		case errors.As(err, &te):
			start := len(data) - len(bytes.TrimLeft(data, " \t\r\n"))
			return nil, []Problem{{Place: position(data, start), Msg: "want a JSON object at the top level, got " + te.Value}}
		default:
			return nil, []Problem{{Msg: err.Error()}}
		}
	}
	if m == nil {
		start := len(data) - len(bytes.TrimLeft(data, " \t\r\n"))
		return nil, []Problem{{Place: position(data, start), Msg: "want a JSON object at the top level, got null"}}
	}
	return m, nil
}

// decodeGraph returns a nil graph only when data is not a JSON object.
// Its warnings are about keys it does not know.
func decodeGraph(data []byte) (*Graph, []Problem, []Problem) {
	m, probs := topObject(data)
	if m == nil {
		return nil, probs, nil
	}
	d := &decoder{}
	g := &Graph{}
	if v, ok := m["feature"]; ok {
		g.Feature = d.str(v, "feature")
	}
	if v, ok := m["tasks"]; ok && kind(v) != "null" {
		if k := kind(v); k != "array" {
			d.add("tasks", "want an array of tasks, got %s", k)
		} else {
			elems, ok := splitArray(v)
			if !ok {
				if err := json.Unmarshal(v, &elems); err != nil {
					d.add("tasks", "%v", err)
				}
			}
			g.Tasks = d.tasks(elems)
		}
	}
	g.Extra = extras(m, func(k string) bool { return k == "feature" || k == "tasks" })
	d.unknownKeys(m, "", graphObject.Get())
	return g, d.probs, d.warns
}

// taskChunk is how many tasks one goroutine decodes at a time.
const taskChunk = 512

// tasks decodes a graph's tasks, chunks of them on every processor: at
// 10,000 tasks decoding is most of the time checking a graph takes. The
// problems come out in the order of the tasks, as from one decoder.
func (d *decoder) tasks(elems []json.RawMessage) []*Task {
	tasks := make([]*Task, len(elems))
	chunks := make([]decoder, (len(elems)+taskChunk-1)/taskChunk)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(chunks)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1)) - 1
				if c >= len(chunks) {
					return
				}
				for i := c * taskChunk; i < min((c+1)*taskChunk, len(elems)); i++ {
					tasks[i] = chunks[c].task(elems[i], index("tasks", i))
				}
			}
		}()
	}
	wg.Wait()
	for _, c := range chunks {
		d.probs = append(d.probs, c.probs...)
		d.warns = append(d.warns, c.warns...)
	}
	return tasks
}

// position turns a byte offset into "line L, column C" (both 1-based,
// columns counted in characters), clamping offsets outside data.
func position(data []byte, at int) string {
	at = max(0, min(at, len(data)))
	line := 1 + bytes.Count(data[:at], []byte{'\n'})
	lineStart := bytes.LastIndexByte(data[:at], '\n') + 1
	col := 1 + utf8.RuneCount(data[lineStart:at])
	return fmt.Sprintf("line %d, column %d", line, col)
}

func problemsError(probs []Problem) error {
	if len(probs) == 0 {
		return nil
	}
	msgs := make([]string, len(probs))
	for i, p := range probs {
		msgs[i] = p.String()
	}
	return errors.New("levels: " + strings.Join(msgs, "; "))
}

// UnmarshalJSON decodes a task without validating it (see Compute for
// that); it fails only when a field has the wrong JSON type.
func (t *Task) UnmarshalJSON(data []byte) error {
	if kind(data) == "null" {
		return nil // as encoding/json itself does
	}
	d := &decoder{}
	*t = *d.task(data, "")
	return problemsError(d.probs)
}

// UnmarshalJSON decodes a graph without validating it; Parse is usually
// what you want.
func (g *Graph) UnmarshalJSON(data []byte) error {
	if kind(data) == "null" {
		return nil
	}
	dg, probs, _ := decodeGraph(data)
	if dg != nil {
		*g = *dg
	}
	return problemsError(probs)
}

// ---- encoding ----

// MarshalJSON writes the known fields and Extra with sorted keys, so that
// rewriting a graph gives a stable, diffable file. The always-present
// fields (id, title, files, dependencies, verification) are written even
// when empty because ZERG expects them.
func (t *Task) MarshalJSON() ([]byte, error) {
	if len(t.Extra) == 0 && len(t.Files.Extra) == 0 && len(t.Verification.Extra) == 0 {
		return t.marshalKnown(), nil
	}
	return t.marshalAny()
}

// marshalKnown is MarshalJSON for a task without keys of its own, nearly
// every one: its keys are known and written in their sorted order, where
// collecting and sorting them was most of the cost of encoding a task.
func (t *Task) marshalKnown() []byte {
	w := newObjectWriter()
	w.open()
	if len(t.AcceptanceCriteria) > 0 {
		w.key("acceptance_criteria").strs(t.AcceptanceCriteria)
	}
	if len(t.Context) > 0 {
		w.key("context").strs(t.Context)
	}
	w.key("dependencies").strs(t.Dependencies)
	if t.Description != "" {
		w.key("description").str(t.Description)
	}
	w.key("files").open()
	w.key("create").strs(t.Files.Create)
	w.key("modify").strs(t.Files.Modify)
	w.key("read").strs(t.Files.Read)
	w.close()
	w.key("id").str(t.ID)
	if t.Issue != 0 {
		w.key("issue").int(t.Issue)
	}
	if t.Level != 0 {
		w.key("level").int(t.Level)
	}
	if t.Risk != "" {
		w.key("risk").str(t.Risk)
	}
	if len(t.SoftDependencies) > 0 {
		w.key("soft_dependencies").strs(t.SoftDependencies)
	}
	w.key("title").str(t.Title)
	w.key("verification").open()
	w.key("command").str(t.Verification.Command)
	if t.Verification.TimeoutSeconds != 0 {
		w.key("timeout_seconds").int(t.Verification.TimeoutSeconds)
	}
	w.close()
	w.close()
	return w.buf.Bytes()
}

// objectWriter writes compact JSON as marshalObject does, HTML escaping
// off. Keys are plain names, written as they are.
type objectWriter struct {
	buf   bytes.Buffer
	enc   *json.Encoder
	first bool
}

func newObjectWriter() *objectWriter {
	w := &objectWriter{}
	w.enc = json.NewEncoder(&w.buf)
	w.enc.SetEscapeHTML(false)
	return w
}

func (w *objectWriter) open() {
	w.buf.WriteByte('{')
	w.first = true
}

func (w *objectWriter) close() {
	w.buf.WriteByte('}')
	w.first = false
}

func (w *objectWriter) key(k string) *objectWriter {
	if !w.first {
		w.buf.WriteByte(',')
	}
	w.first = false
	w.buf.WriteByte('"')
	w.buf.WriteString(k)
	w.buf.WriteString(`":`)
	return w
}

func (w *objectWriter) int(n int) { w.buf.WriteString(strconv.Itoa(n)) }

// str writes a string as it is when encoding/json would (printable ASCII
// but for quote and backslash), else through encoding/json.
func (w *objectWriter) str(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			w.enc.Encode(s)                 // a string never fails
			w.buf.Truncate(w.buf.Len() - 1) // Encode appends a newline
			return
		}
	}
	w.buf.WriteByte('"')
	w.buf.WriteString(s)
	w.buf.WriteByte('"')
}

// strs writes a list of strings, nil as empty.
func (w *objectWriter) strs(ss []string) {
	w.buf.WriteByte('[')
	for i, s := range ss {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		w.str(s)
	}
	w.buf.WriteByte(']')
}

// marshalAny is MarshalJSON for a task with keys of its own, merged in.
func (t *Task) marshalAny() ([]byte, error) {
	files, err := marshalObject(map[string]any{
		"create": nonNil(t.Files.Create),
		"modify": nonNil(t.Files.Modify),
		"read":   nonNil(t.Files.Read),
	}, t.Files.Extra)
	if err != nil {
		return nil, err
	}
	verif := map[string]any{"command": t.Verification.Command}
	if t.Verification.TimeoutSeconds != 0 {
		verif["timeout_seconds"] = t.Verification.TimeoutSeconds
	}
	ver, err := marshalObject(verif, t.Verification.Extra)
	if err != nil {
		return nil, err
	}
	known := map[string]any{
		"id":           t.ID,
		"title":        t.Title,
		"files":        json.RawMessage(files),
		"dependencies": nonNil(t.Dependencies),
		"verification": json.RawMessage(ver),
	}
	if t.Description != "" {
		known["description"] = t.Description
	}
	if t.Level != 0 {
		known["level"] = t.Level
	}
	if len(t.SoftDependencies) > 0 {
		known["soft_dependencies"] = t.SoftDependencies
	}
	if len(t.AcceptanceCriteria) > 0 {
		known["acceptance_criteria"] = t.AcceptanceCriteria
	}
	if len(t.Context) > 0 {
		known["context"] = t.Context
	}
	if t.Risk != "" {
		known["risk"] = t.Risk
	}
	if t.Issue != 0 {
		known["issue"] = t.Issue
	}
	return marshalObject(known, t.Extra)
}

// MarshalJSON writes feature, tasks and Extra with sorted keys. Extra is
// written as is: callers that change Tasks should update total_tasks and
// levels themselves if they care about them.
func (g *Graph) MarshalJSON() ([]byte, error) {
	var tasks bytes.Buffer
	tasks.WriteByte('[')
	for i, t := range g.Tasks {
		if i > 0 {
			tasks.WriteByte(',')
		}
		if t == nil {
			tasks.WriteString("null")
			continue
		}
		b, err := t.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("tasks[%d]: %w", i, err)
		}
		tasks.Write(b)
	}
	tasks.WriteByte(']')
	return marshalObject(map[string]any{
		"feature": g.Feature,
		"tasks":   json.RawMessage(tasks.Bytes()),
	}, g.Extra)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// marshalObject writes known and extra as one object with sorted keys; a
// known key wins over the same key in extra. HTML escaping is off because
// verification commands are full of '&' and '>'.
func marshalObject(known map[string]any, extra map[string]json.RawMessage) ([]byte, error) {
	keys := make([]string, 0, len(known)+len(extra))
	for k := range known {
		keys = append(keys, k)
	}
	for k := range extra {
		if _, ok := known[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	encode := func(v any) error {
		if err := enc.Encode(v); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1) // Encode appends a newline
		return nil
	}
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := encode(k); err != nil {
			return nil, err
		}
		buf.WriteByte(':')
		if v, ok := known[k]; ok {
			if err := encode(v); err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			continue
		}
		if err := json.Compact(&buf, extra[k]); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
