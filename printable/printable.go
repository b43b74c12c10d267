// Package printable makes text from elsewhere safe to print on a terminal.
//
// Task titles, verification commands, failure reasons and lock reasons
// arrive by sync from other machines, and a worker's stderr ends up in a
// reason. Printed raw, an escape sequence in one of them could move the
// cursor, erase the line that shows it, or rewrite what a reviewer is
// about to accept.
package printable

import (
	"strings"
	"unicode/utf8"
)

// String returns s with every character that a terminal would act on
// instead of showing escaped Go-style (\x1b, \n, \u202e); everything else,
// ordinary Unicode included, is left as it is. Backslashes and quotes are
// not escaped: the result is for reading, not for parsing back.
func String(s string) string {
	if plain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			// Not UTF-8: a terminal may take the raw byte for a C1 control.
			b.WriteString(`\x`)
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&0xf])
		case needsEscape(r):
			writeEscape(&b, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

const hex = "0123456789abcdef"

// plain reports, cheaply, the usual case: printable ASCII only.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// needsEscape: the C0 and C1 controls and DEL, which terminals interpret;
// the Unicode bidirectional controls, which reorder what is shown (a
// command can read differently from what runs); and the line and paragraph
// separators, which some terminals and editors break lines at.
func needsEscape(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

func writeEscape(b *strings.Builder, r rune) {
	switch r {
	case '\a':
		b.WriteString(`\a`)
	case '\b':
		b.WriteString(`\b`)
	case '\f':
		b.WriteString(`\f`)
	case '\n':
		b.WriteString(`\n`)
	case '\r':
		b.WriteString(`\r`)
	case '\t':
		b.WriteString(`\t`)
	case '\v':
		b.WriteString(`\v`)
	default:
		if r < 0x80 {
			b.WriteString(`\x`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&0xf])
			return
		}
		b.WriteString(`\u`)
		for shift := 12; shift >= 0; shift -= 4 {
			b.WriteByte(hex[(r>>uint(shift))&0xf])
		}
	}
}
