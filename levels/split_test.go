package levels

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestSplit checks splitObject and splitArray against json.Unmarshal on
// every object and array of a set of documents, the fuzz corpus too.
func TestSplit(t *testing.T) {
	docs := []string{
		`{}`, ` { } `, `[]`, ` [ ] `, `{"a":1}`, `{"a" : [1, {"b": "}]"}], "c": "\"x\\\\", "d": null}`,
		`{"a":1,"a":2}`, `{"":true,"x":false}`, "{\n\t\"k\":\r\n -1.5e+3 }", `{"é":1}`, `{"a\"b":1}`, `{"a\u0041":1}`,
		`[1, "two", [3], {"four": 4}, null, true, "[]{}", "\\\""]`, `["a"]`, `[[[]]]`, `{"a":{"b":{"c":[{}]}}}`,
		`"str"`, `1`, `null`, `{"a":"x\u2028y"}`,
	}
	files, _ := filepath.Glob("testdata/fuzz/*/*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// go test fuzz files hold Go-quoted values, one a line.
		for _, line := range strings.Split(string(b), "\n") {
			if s, ok := strings.CutPrefix(line, "[]byte("); ok {
				if q, err := unquoteGo(strings.TrimSuffix(s, ")")); err == nil {
					docs = append(docs, q)
				}
			}
		}
	}
	checked := 0
	var walk func(raw []byte)
	walk = func(raw []byte) {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) == nil && m != nil {
			got, ok := splitObject(raw)
			if ok {
				checked++
				if !reflect.DeepEqual(got, m) {
					t.Errorf("splitObject(%s) = %v, want %v", raw, got, m)
				}
			} else if !bytes.ContainsAny(raw, "\\\x80\xff") && isASCII(raw) {
				t.Errorf("splitObject(%s) refused", raw)
			}
			for _, v := range m {
				walk(v)
			}
		} else if _, ok := splitObject(raw); ok && !json.Valid(raw) {
			t.Errorf("splitObject(%s) took what json.Unmarshal refuses", raw)
		}
		var a []json.RawMessage
		if json.Unmarshal(raw, &a) == nil && a != nil {
			got, ok := splitArray(raw)
			if !ok {
				t.Errorf("splitArray(%s) refused", raw)
			} else {
				checked++
				if !reflect.DeepEqual(got, a) {
					t.Errorf("splitArray(%s) = %q, want %q", raw, got, a)
				}
			}
			for _, v := range a {
				walk(v)
			}
		}
	}
	for _, d := range docs {
		if json.Valid([]byte(d)) {
			walk([]byte(d))
		}
	}
	t.Logf("%d checked", checked)
	if checked < 20 {
		t.Fatalf("only %d objects and arrays checked", checked)
	}
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

func unquoteGo(s string) (string, error) {
	var out string
	err := json.Unmarshal([]byte(strings.ReplaceAll(s, `\x`, `\u00`)), &out)
	return out, err
}
