package report

import (
	"bufio"
	"encoding/json"
	"io"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"
)

// Task lists are the bulk of `status --json` and `export`: 10,000 tasks make
// a 4 MB document, and encoding/json's reflection plus its second pass for
// indentation cost more than everything else status does. appendTask
// writes a task exactly as WriteJSON would (TestTaskJSON holds the two
// together, for every field of state.Task), in one pass.

// field is one field of a document written by writeDoc: a value, written
// as WriteJSON would, or a list of tasks streamed as each is rendered.
type field struct {
	name  string
	value any // when tasks is nil
	// tasks calls emit with each element of the list in order, rendered
	// at taskPrefix without a separator.
	tasks func(emit func(elem []byte) error) error
}

// taskPrefix is the indentation of a task in every document's task list.
const taskPrefix = "    "

// writeDoc writes a JSON object of the fields in order, byte-identical to
// WriteJSON of the equivalent struct. The task lists go out as they are
// produced: the document is never whole in memory.
func writeDoc(w io.Writer, fields []field) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString("{\n")
	var b []byte
	for i, f := range fields {
		b = append(b[:0], "  "...)
		b = appendString(b, f.name)
		b = append(b, ": "...)
		if lv, ok := f.value.([]Level); ok {
			// A level lists its tasks: as long as the task list in ids.
			b = appendLevels(b, lv, "  ")
		} else if f.tasks == nil {
			v, err := marshalIndent(f.value, "  ")
			if err != nil {
				return err
			}
			b = append(b, v...)
		} else {
			bw.Write(b)
			n := 0
			err := f.tasks(func(elem []byte) error {
				if n == 0 {
					bw.WriteString("[\n")
				} else {
					bw.WriteString(",\n")
				}
				n++
				_, err := bw.Write(elem)
				return err
			})
			if err != nil {
				return err
			}
			if n == 0 {
				b = append(b[:0], "[]"...)
			} else {
				b = append(b[:0], "\n  ]"...)
			}
		}
		if i < len(fields)-1 {
			b = append(b, ',')
		}
		b = append(b, '\n')
		bw.Write(b)
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

func marshalIndent(v any, prefix string) ([]byte, error) {
	var buf jsonBuffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.b[:len(buf.b)-1], nil // no trailing newline
}

type jsonBuffer struct{ b []byte }

func (j *jsonBuffer) Write(p []byte) (int, error) { j.b = append(j.b, p...); return len(p), nil }

// appendTask appends t as writeJSON renders it nested at prefix.
func appendTask(b []byte, t *Task, prefix string) []byte {
	in := prefix + "  "
	field := func(name string) {
		b = append(b, in...)
		b = appendString(b, name)
		b = append(b, ": "...)
	}
	b = append(b, prefix...)
	b = append(b, "{\n"...)
	field("id")
	b = appendString(b, t.ID)
	b = append(b, ",\n"...)
	field("title")
	b = appendString(b, t.Title)
	b = append(b, ",\n"...)
	field("level")
	b = strconv.AppendInt(b, int64(t.Level), 10)
	b = append(b, ",\n"...)
	field("status")
	b = appendString(b, string(t.Status))
	b = append(b, ",\n"...)
	field("worker")
	b = appendString(b, t.Worker)
	b = append(b, ",\n"...)
	field("attempts")
	b = strconv.AppendInt(b, int64(t.Attempts), 10)
	b = append(b, ",\n"...)
	field("commit")
	b = appendString(b, t.Commit)
	b = append(b, ",\n"...)
	if t.Base != "" {
		field("base")
		b = appendString(b, t.Base)
		b = append(b, ",\n"...)
	}
	field("dependencies")
	b = appendStrings(b, t.Dependencies, in)
	b = append(b, ",\n"...)
	field("soft_dependencies")
	b = appendStrings(b, t.SoftDependencies, in)
	b = append(b, ",\n"...)
	field("implied_dependencies")
	b = appendStrings(b, t.ImpliedDependencies, in)
	b = append(b, ",\n"...)
	field("files")
	b = append(b, "{\n"...)
	in2 := in + "  "
	for i, f := range []struct {
		name  string
		paths []string
	}{{"create", t.Files.Create}, {"modify", t.Files.Modify}, {"read", t.Files.Read}} {
		b = append(b, in2...)
		b = appendString(b, f.name)
		b = append(b, ": "...)
		b = appendStrings(b, f.paths, in2)
		if i < 2 {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	b = append(b, in...)
	b = append(b, "},\n"...)
	if t.Risk != "" {
		field("risk")
		b = appendString(b, t.Risk)
		b = append(b, ",\n"...)
	}
	if t.Approved != "" {
		field("approved")
		b = appendString(b, t.Approved)
		b = append(b, ",\n"...)
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"issue", t.Issue}, {"pr", t.PR}} {
		if n.v != 0 {
			field(n.name)
			b = strconv.AppendInt(b, int64(n.v), 10)
			b = append(b, ",\n"...)
		}
	}
	if t.Reason != "" {
		field("reason")
		b = appendString(b, t.Reason)
		b = append(b, ",\n"...)
	}
	if t.NotBefore != nil {
		field("not_before")
		b = appendTime(b, *t.NotBefore)
		b = append(b, ",\n"...)
	}
	if t.Usage != nil {
		field("usage")
		u, _ := marshalIndent(t.Usage, in)
		b = append(b, u...)
		b = append(b, ",\n"...)
	}
	if t.Host != "" {
		field("host")
		b = appendString(b, t.Host)
		b = append(b, ",\n"...)
	}
	field("verification")
	b = append(b, "{\n"...)
	b = append(b, in2...)
	b = append(b, `"command": `...)
	b = appendString(b, t.Verification.Command)
	if t.Verification.TimeoutSeconds != 0 {
		b = append(b, ",\n"...)
		b = append(b, in2...)
		b = append(b, `"timeout_seconds": `...)
		b = strconv.AppendInt(b, int64(t.Verification.TimeoutSeconds), 10)
	}
	b = append(b, '\n')
	b = append(b, in...)
	b = append(b, '}')
	if len(t.Runs) > 0 {
		b = append(b, ",\n"...)
		field("runs")
		b = append(b, "[\n"...)
		in3 := in2 + "  "
		for i, r := range t.Runs {
			b = append(b, in2...)
			b = append(b, "{\n"...)
			b = append(b, in3...)
			b = append(b, `"attempt": `...)
			b = strconv.AppendInt(b, int64(r.Attempt), 10)
			b = append(b, ",\n"...)
			b = append(b, in3...)
			b = append(b, `"worker": `...)
			b = appendString(b, r.Worker)
			b = append(b, ",\n"...)
			b = append(b, in3...)
			b = append(b, `"start": `...)
			b = appendTime(b, r.Start)
			if r.End != nil {
				b = append(b, ",\n"...)
				b = append(b, in3...)
				b = append(b, `"end": `...)
				b = appendTime(b, *r.End)
			}
			if r.Outcome != "" {
				b = append(b, ",\n"...)
				b = append(b, in3...)
				b = append(b, `"outcome": `...)
				b = appendString(b, r.Outcome)
			}
			b = append(b, '\n')
			b = append(b, in2...)
			b = append(b, '}')
			if i < len(t.Runs)-1 {
				b = append(b, ',')
			}
			b = append(b, '\n')
		}
		b = append(b, in...)
		b = append(b, ']')
	}
	if len(t.History) > 0 {
		b = append(b, ",\n"...)
		field("history")
		b = append(b, "[\n"...)
		for i := range t.History {
			b = appendEvent(b, &t.History[i], in2)
			if i < len(t.History)-1 {
				b = append(b, ',')
			}
			b = append(b, '\n')
		}
		b = append(b, in...)
		b = append(b, ']')
	}
	b = append(b, '\n')
	b = append(b, prefix...)
	b = append(b, '}')
	return b
}

func appendEvent(b []byte, ev *Event, prefix string) []byte {
	in := prefix + "  "
	b = append(b, prefix...)
	b = append(b, "{\n"...)
	str := func(name, v string, omitEmpty bool) {
		if omitEmpty && v == "" {
			return
		}
		b = append(b, ",\n"...)
		b = append(b, in...)
		b = appendString(b, name)
		b = append(b, ": "...)
		b = appendString(b, v)
	}
	b = append(b, in...)
	b = append(b, `"clock": `...)
	b = strconv.AppendUint(b, ev.Clock, 10)
	b = append(b, ",\n"...)
	b = append(b, in...)
	b = append(b, `"at": `...)
	b = appendTime(b, ev.At)
	str("op", string(ev.Op), false)
	str("from", ev.From, false)
	str("to", ev.To, false)
	str("worker", ev.Worker, true)
	str("commit", ev.Commit, true)
	str("reason", ev.Reason, true)
	if ev.PR != 0 {
		b = append(b, ",\n"...)
		b = append(b, in...)
		b = append(b, `"pr": `...)
		b = strconv.AppendInt(b, int64(ev.PR), 10)
	}
	if ev.Usage != nil {
		b = append(b, ",\n"...)
		b = append(b, in...)
		b = append(b, `"usage": `...)
		u, _ := marshalIndent(ev.Usage, in)
		b = append(b, u...)
	}
	b = append(b, '\n')
	b = append(b, prefix...)
	b = append(b, '}')
	return b
}

// appendLevels appends lv as WriteJSON renders it nested at prefix.
func appendLevels(b []byte, lv []Level, prefix string) []byte {
	if lv == nil {
		return append(b, "null"...)
	}
	if len(lv) == 0 {
		return append(b, "[]"...)
	}
	in, in2 := prefix+"  ", prefix+"    "
	b = append(b, "[\n"...)
	for i := range lv {
		l := &lv[i]
		b = append(b, in...)
		b = append(b, "{\n"...)
		b = append(b, in2...)
		b = append(b, `"level": `...)
		b = strconv.AppendInt(b, int64(l.Level), 10)
		b = append(b, ",\n"...)
		b = append(b, in2...)
		b = append(b, `"tasks": `...)
		if l.Tasks == nil {
			b = append(b, "null"...)
		} else {
			b = appendStrings(b, l.Tasks, in2)
		}
		b = append(b, ",\n"...)
		b = append(b, in2...)
		b = append(b, `"counts": `...)
		b = appendCounts(b, l.Counts, in2)
		b = append(b, ",\n"...)
		b = append(b, in2...)
		b = append(b, `"done": `...)
		b = strconv.AppendBool(b, l.Done)
		b = append(b, '\n')
		b = append(b, in...)
		b = append(b, '}')
		if i < len(lv)-1 {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	b = append(b, prefix...)
	return append(b, ']')
}

// appendCounts appends m with its keys sorted, as encoding/json does.
func appendCounts(b []byte, m map[string]int, prefix string) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	if len(m) == 0 {
		return append(b, "{}"...)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = append(b, "{\n"...)
	for i, k := range keys {
		b = append(b, prefix...)
		b = append(b, "  "...)
		b = appendString(b, k)
		b = append(b, ": "...)
		b = strconv.AppendInt(b, int64(m[k]), 10)
		if i < len(keys)-1 {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	b = append(b, prefix...)
	return append(b, '}')
}

func appendStrings(b []byte, ss []string, prefix string) []byte {
	if len(ss) == 0 {
		return append(b, "[]"...)
	}
	b = append(b, "[\n"...)
	for i, s := range ss {
		b = append(b, prefix...)
		b = append(b, "  "...)
		b = appendString(b, s)
		if i < len(ss)-1 {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	b = append(b, prefix...)
	return append(b, ']')
}

func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// appendString quotes s as encoding/json does with HTML escaping off.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
