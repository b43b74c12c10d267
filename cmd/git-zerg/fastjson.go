package main

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"
	"time"
	"unicode/utf8"
)

// Task lists are the bulk of `status --json` and `export`: 10,000 tasks make
// a 4 MB document, and encoding/json's reflection plus its second pass for
// indentation cost more than everything else status does. appendTask
// writes a task exactly as writeJSON would (TestFastTaskJSON holds the two
// together), in one pass.

// writeDoc writes a JSON object whose fields are written in order by
// writeJSON, except the named task lists, which go through appendTask.
// The output is byte-identical to writeJSON of the equivalent struct.
type docField struct {
	name  string
	value any        // written with encoding/json
	tasks []taskJSON // when value is nil
}

func writeDoc(w io.Writer, fields []docField) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString("{\n")
	var b []byte
	for i, f := range fields {
		b = append(b[:0], "  "...)
		b = appendString(b, f.name)
		b = append(b, ": "...)
		if f.value != nil {
			v, err := marshalIndent(f.value, "  ")
			if err != nil {
				return err
			}
			b = append(b, v...)
		} else if len(f.tasks) == 0 {
			b = append(b, "[]"...)
		} else {
			b = append(b, "[\n"...)
			for j := range f.tasks {
				bw.Write(b)
				b = appendTask(b[:0], &f.tasks[j], "    ")
				if j < len(f.tasks)-1 {
					b = append(b, ',')
				}
				b = append(b, '\n')
			}
			b = append(b, "  ]"...)
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
func appendTask(b []byte, t *taskJSON, prefix string) []byte {
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

func appendEvent(b []byte, ev *eventJSON, prefix string) []byte {
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
	str("op", ev.Op, false)
	str("from", ev.From, false)
	str("to", ev.To, false)
	str("worker", ev.Worker, true)
	str("commit", ev.Commit, true)
	str("reason", ev.Reason, true)
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
