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

// object appends the fields of one JSON object as WriteJSON lays them
// out: each on a line of its own at the object's indentation plus two,
// the comma before it when it is not the first.
type object struct {
	b      []byte
	prefix string // where the object's closing brace goes
	in     string // where its fields go
	n      int
}

func beginObject(b []byte, prefix string) object {
	return object{b: append(b, '{'), prefix: prefix, in: prefix + "  "}
}

func (o *object) key(name string) {
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = append(o.b, '\n')
	o.b = append(o.b, o.in...)
	o.b = appendString(o.b, name)
	o.b = append(o.b, ": "...)
}

// end closes the object (which has a field: no document has an empty
// one) and returns the bytes.
func (o *object) end() []byte {
	o.b = append(o.b, '\n')
	o.b = append(o.b, o.prefix...)
	return append(o.b, '}')
}

func (o *object) str(name, v string) {
	o.key(name)
	o.b = appendString(o.b, v)
}

// strOmit is str of a field tagged omitempty.
func (o *object) strOmit(name, v string) {
	if v != "" {
		o.str(name, v)
	}
}

func (o *object) int(name string, v int64) {
	o.key(name)
	o.b = strconv.AppendInt(o.b, v, 10)
}

func (o *object) intOmit(name string, v int64) {
	if v != 0 {
		o.int(name, v)
	}
}

func (o *object) time(name string, t time.Time) {
	o.key(name)
	o.b = appendTime(o.b, t)
}

func (o *object) strs(name string, ss []string) {
	o.key(name)
	o.b = appendStrings(o.b, ss, o.in)
}

// value is a field no hand-written encoder is worth having for.
func (o *object) value(name string, v any) {
	o.key(name)
	u, _ := marshalIndent(v, o.in)
	o.b = append(o.b, u...)
}

// object opens a nested object as the field's value; the caller ends it
// and takes its bytes back.
func (o *object) object(name string) object {
	o.key(name)
	return beginObject(o.b, o.in)
}

// list writes a non-empty list whose n elements elem appends, each with
// its own indentation, at the fields' indentation plus two.
func (o *object) list(name string, n int, elem func(b []byte, i int, prefix string) []byte) {
	o.key(name)
	o.b = append(o.b, "[\n"...)
	for i := 0; i < n; i++ {
		o.b = elem(o.b, i, o.in+"  ")
		if i < n-1 {
			o.b = append(o.b, ',')
		}
		o.b = append(o.b, '\n')
	}
	o.b = append(o.b, o.in...)
	o.b = append(o.b, ']')
}

// appendTask appends t as WriteJSON renders it nested at prefix.
func appendTask(b []byte, t *Task, prefix string) []byte {
	o := beginObject(append(b, prefix...), prefix)
	o.str("id", t.ID)
	o.str("title", t.Title)
	o.int("level", int64(t.Level))
	o.str("status", string(t.Status))
	o.str("worker", t.Worker)
	o.int("attempts", int64(t.Attempts))
	o.str("commit", t.Commit)
	o.strOmit("base", t.Base)
	o.strs("dependencies", t.Dependencies)
	o.strs("soft_dependencies", t.SoftDependencies)
	o.strs("implied_dependencies", t.ImpliedDependencies)
	files := o.object("files")
	files.strs("create", t.Files.Create)
	files.strs("modify", t.Files.Modify)
	files.strs("read", t.Files.Read)
	o.b = files.end()
	o.strOmit("risk", t.Risk)
	o.strOmit("approved", t.Approved)
	o.intOmit("issue", int64(t.Issue))
	o.intOmit("pr", int64(t.PR))
	o.strOmit("reason", t.Reason)
	if t.NotBefore != nil {
		o.time("not_before", *t.NotBefore)
	}
	if t.Usage != nil {
		o.value("usage", t.Usage)
	}
	o.strOmit("host", t.Host)
	v := o.object("verification")
	v.str("command", t.Verification.Command)
	v.intOmit("timeout_seconds", int64(t.Verification.TimeoutSeconds))
	o.b = v.end()
	if len(t.Runs) > 0 {
		o.list("runs", len(t.Runs), func(b []byte, i int, prefix string) []byte {
			return appendRun(b, &t.Runs[i], prefix)
		})
	}
	if len(t.History) > 0 {
		o.list("history", len(t.History), func(b []byte, i int, prefix string) []byte {
			return appendEvent(b, &t.History[i], prefix)
		})
	}
	return o.end()
}

func appendRun(b []byte, r *Run, prefix string) []byte {
	o := beginObject(append(b, prefix...), prefix)
	o.int("attempt", int64(r.Attempt))
	o.str("worker", r.Worker)
	o.time("start", r.Start)
	if r.End != nil {
		o.time("end", *r.End)
	}
	o.strOmit("outcome", r.Outcome)
	return o.end()
}

func appendEvent(b []byte, ev *Event, prefix string) []byte {
	o := beginObject(append(b, prefix...), prefix)
	o.key("clock")
	o.b = strconv.AppendUint(o.b, ev.Clock, 10)
	o.time("at", ev.At)
	o.str("op", string(ev.Op))
	o.str("from", ev.From)
	o.str("to", ev.To)
	o.strOmit("worker", ev.Worker)
	o.strOmit("commit", ev.Commit)
	o.strOmit("reason", ev.Reason)
	o.intOmit("pr", int64(ev.PR))
	if ev.Usage != nil {
		o.value("usage", ev.Usage)
	}
	return o.end()
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
