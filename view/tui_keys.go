package view

import (
	"unicode/utf8"
)

// Key is one key press, decoded from the terminal's input.
type Key string

const (
	KeyUp       Key = "up"
	KeyDown     Key = "down"
	KeyPageUp   Key = "pgup"
	KeyPageDown Key = "pgdn"
	KeyHome     Key = "home"
	KeyEnd      Key = "end"
	KeyTab      Key = "tab"
	KeyBackTab  Key = "backtab"
	KeyEnter    Key = "enter"
	KeyEsc      Key = "esc"
	KeyLeft     Key = "left"
	KeyRight    Key = "right"
	KeyCtrlC    Key = "ctrl-c"
)

// parseKeys splits terminal input into keys. Sequences it does not know
// are dropped whole, so a stray function key does nothing rather than
// something.
func parseKeys(b []byte) []Key {
	var out []Key
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == 0x1b:
			if i+1 == len(b) {
				out = append(out, KeyEsc)
				i++
				continue
			}
			n := escapeLen(string(b[i:]))
			if b[i+1] == 'O' && i+2 < len(b) {
				n = 3
			}
			seq := string(b[i : i+n])
			if k, ok := escKey(seq); ok {
				out = append(out, k)
			} else if n == 2 && b[i+1] == 0x1b {
				out = append(out, KeyEsc)
				n = 1
			}
			i += n
		case c == '\r' || c == '\n':
			out = append(out, KeyEnter)
			i++
		case c == '\t':
			out = append(out, KeyTab)
			i++
		case c == 0x03:
			out = append(out, KeyCtrlC)
			i++
		case c < 0x20 || c == 0x7f:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			out = append(out, Key(string(r)))
			i += size
		}
	}
	return out
}

// escKey is the key an escape sequence stands for. Switches here, not
// maps that every start of the program would build.
func escKey(seq string) (Key, bool) {
	switch seq {
	case "\x1b[A", "\x1bOA":
		return KeyUp, true
	case "\x1b[B", "\x1bOB":
		return KeyDown, true
	case "\x1b[C", "\x1bOC":
		return KeyRight, true
	case "\x1b[D", "\x1bOD":
		return KeyLeft, true
	case "\x1b[5~":
		return KeyPageUp, true
	case "\x1b[6~":
		return KeyPageDown, true
	case "\x1b[H", "\x1bOH", "\x1b[1~", "\x1b[7~":
		return KeyHome, true
	case "\x1b[F", "\x1bOF", "\x1b[4~", "\x1b[8~":
		return KeyEnd, true
	case "\x1b[Z":
		return KeyBackTab, true
	}
	return "", false
}
