package gitcmd

import (
	"reflect"
	"testing"
)

func TestParseLogFiles(t *testing.T) {
	a, b := "0123456789abcdef0123456789abcdef01234567", "89abcdef0123456789abcdef0123456789abcdef"
	raw := "\x01" + a + "\x00\nsrc/a.go\x00odd\nname\x00\x01" + b + "\x00\x01" + a + "\x00\nx\x00"
	got := ParseLogFiles([]byte(raw))
	want := []CommitFiles{{a, []string{"src/a.go", "odd\nname"}}, {Commit: b}, {a, []string{"x"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if got := ParseLogFiles(nil); got != nil {
		t.Fatalf("empty log: %q", got)
	}
}
