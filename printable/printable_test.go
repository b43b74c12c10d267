package printable

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"go test ./...", "go test ./..."},
		{"", ""},
		{"café ✓ 日本", "café ✓ 日本"},
		{`grep -q 'a\|b' "x"`, `grep -q 'a\|b' "x"`},
		{"true\x1b[2K\rfalse", `true\x1b[2K\rfalse`},
		{"a\nb\tc", `a\nb\tc`},
		{"del\x7f", `del\x7f`},
		{"c1\u009b31m", `c1\u009b31m`},
		{"rm -rf /\u202e#", `rm -rf /\u202e#`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"\x00", `\x00`},
	} {
		if got := String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzString(f *testing.F) {
	f.Add("true\x1b]0;x\x07")
	f.Add("café\u202e")
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if !utf8.ValidString(out) {
			t.Fatalf("String(%q) = %q: not UTF-8", s, out)
		}
		for _, r := range out {
			if needsEscape(r) {
				t.Fatalf("String(%q) = %q: holds %U", s, out, r)
			}
		}
		if !strings.ContainsFunc(s, func(r rune) bool { return needsEscape(r) || r == utf8.RuneError }) && out != s && utf8.ValidString(s) {
			t.Fatalf("String(%q) = %q: changed a printable string", s, out)
		}
	})
}
