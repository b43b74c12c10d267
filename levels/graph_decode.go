package levels

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

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
