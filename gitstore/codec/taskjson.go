package codec

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/git-zerg/git-zerg/state"
)

// EncodeJSON is the JSON of every value gitstore stores in a blob:
// two-space indented, HTML left unescaped, a newline at the end.
func EncodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// EncodeTask is EncodeJSON of a task, byte for byte, written directly for
// the tasks nearly all are (no keys of their own in the spec, no usage in
// the history): going through reflection, then compacting the spec's own
// encoding, then indenting it all took most of the time a plan of 10,000
// tasks spent storing them. Any other task goes through EncodeJSON.
func EncodeTask(t *state.Task) ([]byte, error) {
	if !plainTask(t) {
		return EncodeJSON(t)
	}
	w := &indentWriter{}
	w.open('{')
	w.key("spec")
	sp := t.Spec
	w.open('{')
	w.optStrs("acceptance_criteria", sp.AcceptanceCriteria)
	w.optStrs("context", sp.Context)
	w.key("dependencies")
	w.strs(sp.Dependencies)
	w.optStr("description", sp.Description)
	w.key("files")
	w.open('{')
	w.key("create")
	w.strs(sp.Files.Create)
	w.key("modify")
	w.strs(sp.Files.Modify)
	w.key("read")
	w.strs(sp.Files.Read)
	w.close('}')
	w.key("id")
	w.str(sp.ID)
	w.optInt("issue", int64(sp.Issue))
	w.optInt("level", int64(sp.Level))
	w.optStr("risk", sp.Risk)
	w.optStrs("soft_dependencies", sp.SoftDependencies)
	w.key("title")
	w.str(sp.Title)
	w.key("verification")
	w.open('{')
	w.key("command")
	w.str(sp.Verification.Command)
	w.optInt("timeout_seconds", int64(sp.Verification.TimeoutSeconds))
	w.close('}')
	w.close('}')

	w.key("level")
	w.int(int64(t.Level))
	w.optStrs("implied", t.Implied)
	w.optStrs("dependents", t.Dependents)
	w.key("status")
	w.str(string(t.Status))
	w.optStr("worker", t.Worker)
	w.optStr("owner", t.Owner)
	w.key("attempts")
	w.int(int64(t.Attempts))
	w.optStr("base", t.Base)
	w.optStr("commit", t.Commit)
	w.optStr("approved", t.Approved)
	w.key("not_before")
	if !w.time(t.NotBefore) {
		return EncodeJSON(t)
	}
	w.optStr("reason", t.Reason)
	w.optInt("pr", int64(t.PR))
	w.key("history")
	if t.History == nil {
		w.buf = append(w.buf, "null"...)
	} else {
		w.open('[')
		for _, e := range t.History {
			w.elem()
			w.open('{')
			w.key("clock")
			w.buf = strconv.AppendUint(w.buf, e.Clock, 10)
			w.key("at")
			if !w.time(e.At) {
				return EncodeJSON(t)
			}
			w.key("op")
			w.str(string(e.Op))
			w.key("from")
			w.str(string(e.From))
			w.key("to")
			w.str(string(e.To))
			w.optStr("worker", e.Worker)
			w.optStr("commit", e.Commit)
			w.optStr("reason", e.Reason)
			w.optInt("pr", int64(e.PR))
			w.close('}')
		}
		w.close(']')
	}
	w.optStr("host", t.Host)
	w.close('}')
	w.buf = append(w.buf, '\n')
	return w.buf, nil
}

// plainTask reports whether EncodeTask writes t itself.
func plainTask(t *state.Task) bool {
	sp := t.Spec
	if sp == nil || len(sp.Extra) > 0 || len(sp.Files.Extra) > 0 || len(sp.Verification.Extra) > 0 {
		return false
	}
	for _, e := range t.History {
		if e.Usage != nil {
			return false
		}
	}
	return true
}

// indentWriter writes JSON as encoding/json's two-space indentation does.
type indentWriter struct {
	buf   []byte
	depth int
	first bool // nothing yet in the innermost object or array
}

func (w *indentWriter) open(c byte) {
	w.buf = append(w.buf, c)
	w.depth++
	w.first = true
}

func (w *indentWriter) close(c byte) {
	w.depth--
	if !w.first {
		w.newline()
	}
	w.buf = append(w.buf, c)
	w.first = false
}

func (w *indentWriter) newline() {
	w.buf = append(w.buf, '\n')
	for i := 0; i < w.depth; i++ {
		w.buf = append(w.buf, "  "...)
	}
}

// elem starts a member of an object or array.
func (w *indentWriter) elem() {
	if !w.first {
		w.buf = append(w.buf, ',')
	}
	w.first = false
	w.newline()
}

// key starts an object's member: k is a plain name, written as it is.
func (w *indentWriter) key(k string) {
	w.elem()
	w.buf = append(w.buf, '"')
	w.buf = append(w.buf, k...)
	w.buf = append(w.buf, `": `...)
}

func (w *indentWriter) int(n int64) { w.buf = strconv.AppendInt(w.buf, n, 10) }

// str writes a string as it is when encoding/json would (printable ASCII
// but for quote and backslash), else through encoding/json.
func (w *indentWriter) str(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			enc.Encode(s) // a string never fails
			w.buf = append(w.buf, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
			return
		}
	}
	w.buf = append(w.buf, '"')
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '"')
}

// strs writes a list of strings, nil as empty (the spec's lists are).
func (w *indentWriter) strs(ss []string) {
	w.open('[')
	for _, s := range ss {
		w.elem()
		w.str(s)
	}
	w.close(']')
}

func (w *indentWriter) optStr(k, v string) {
	if v != "" {
		w.key(k)
		w.str(v)
	}
}

func (w *indentWriter) optInt(k string, v int64) {
	if v != 0 {
		w.key(k)
		w.int(v)
	}
}

func (w *indentWriter) optStrs(k string, v []string) {
	if len(v) > 0 {
		w.key(k)
		w.strs(v)
	}
}

// time writes a time as encoding/json does; false for one it cannot
// write (a year past 9999).
func (w *indentWriter) time(t time.Time) bool {
	b, err := t.MarshalJSON()
	if err != nil {
		return false
	}
	w.buf = append(w.buf, b...)
	return true
}
