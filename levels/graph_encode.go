package levels

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
)

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
