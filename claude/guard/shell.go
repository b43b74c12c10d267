package guard

import (
	"strings"
)

// A small reader of shell command lines, enough to see which programs a
// Bash tool call runs and with which words: it splits on ; & && || | and
// newlines, honours quotes, escapes and comments, and also reads what runs
// inside $(...), `...`, <(...), here-documents and here-strings. It
// evaluates nothing: a word built from a substitution reads as its text.

// simple is one simple command.
type simple struct {
	words  []string // assignments first, as written (NAME=value)
	redirs []string // targets of output redirections
	stdin  []string // bodies of here-documents and here-strings
	piped  bool     // its input is the output of the command before it
}

// maxDepth bounds nested substitutions and sh -c strings.
const maxDepth = 8

type lexer struct {
	src   string
	i     int
	depth int
	out   []simple // simple commands of this level, in order
	inner []simple // commands from substitutions, met on the way
	cur   simple
	word  strings.Builder
	inW   bool // a word is being built (even an empty quoted one)
	// pending here-documents of the current line: their commands and
	// delimiters.
	heredocs []heredoc
	// redirect: the next word is a redirection target (out: an output one;
	// here: a here-document delimiter, strip: <<-; str: a here-string).
	redirect   bool
	redirOut   bool
	redirHere  bool
	redirStrip bool
	redirStr   bool
}

type heredoc struct {
	cmd   int // index in out of the command it feeds, -1 for the current one
	delim string
	strip bool
	// set when the delimiter was attached to the current command, which
	// is not finished yet
	current bool
}

// parseShell returns the simple commands of src, those inside
// substitutions included (after the command they appear in).
func parseShell(src string, depth int) []simple {
	l := &lexer{src: src, depth: depth}
	l.run()
	return append(l.out, l.inner...)
}

func (l *lexer) run() {
	for l.i < len(l.src) {
		c := l.src[l.i]
		switch {
		case c == '\\':
			if l.i+1 < len(l.src) && l.src[l.i+1] == '\n' {
				l.i += 2 // line continuation
				continue
			}
			if l.i+1 < len(l.src) {
				l.add(l.src[l.i+1 : l.i+2])
				l.i += 2
				continue
			}
			l.i++
		case c == '\'':
			end := strings.IndexByte(l.src[l.i+1:], '\'')
			if end < 0 {
				end = len(l.src) - l.i - 1
			}
			l.add(l.src[l.i+1 : l.i+1+end])
			l.i += end + 2
		case c == '"':
			l.i++
			l.double()
		case c == '$' && l.peek(1) == '\'':
			l.i += 2
			l.ansi()
		case c == '$' && l.peek(1) == '(':
			l.add(l.substitution(l.i+1, '(', ')'))
		case c == '$' && l.peek(1) == '{':
			l.add(l.skipBalanced(l.i+1, '{', '}'))
		case c == '`':
			l.add(l.backtick())
		case (c == '<' || c == '>') && l.peek(1) == '(' && !l.inW:
			l.add(l.substitution(l.i+1, '(', ')'))
		case c == '#' && !l.inW:
			for l.i < len(l.src) && l.src[l.i] != '\n' {
				l.i++
			}
		case c == ' ' || c == '\t' || c == '\r':
			l.endWord()
			l.i++
		case c == '\n':
			l.endWord()
			l.endCommand()
			l.i++
			l.readHeredocs()
		case c == ';' || c == '&' || c == '|' || c == '(' || c == ')':
			if c == '&' && l.peek(1) == '>' { // &> and &>>: output redirection
				l.endWord()
				l.i += 2
				if l.peek(0) == '>' {
					l.i++
				}
				l.redirect, l.redirOut = true, true
				continue
			}
			pipe := c == '|' && l.peek(1) != '|'
			if c == '|' && l.peek(1) == '|' || c == '&' && l.peek(1) == '&' || c == ';' && l.peek(1) == ';' || c == '|' && l.peek(1) == '&' {
				l.i++
			}
			l.endWord()
			l.endCommand()
			l.cur.piped = pipe
			l.i++
		case c == '<' || c == '>':
			l.redirection()
		default:
			l.add(string(c))
			l.i++
		}
	}
	l.endWord()
	l.endCommand()
}

func (l *lexer) peek(n int) byte {
	if l.i+n < len(l.src) {
		return l.src[l.i+n]
	}
	return 0
}

func (l *lexer) add(s string) {
	l.word.WriteString(s)
	l.inW = true
}

// redirection reads <, >, >>, >|, <>, <&, >&, << , <<-, <<<. A word made
// only of digits just before it is a file descriptor, not an argument.
func (l *lexer) redirection() {
	if l.inW && isDigits(l.word.String()) {
		l.word.Reset()
		l.inW = false
	}
	l.endWord()
	c := l.src[l.i]
	l.i++
	l.redirect = true
	l.redirOut = c == '>'
	switch {
	case c == '<' && l.peek(0) == '<' && l.peek(1) == '<':
		l.i += 2
		l.redirStr = true
	case c == '<' && l.peek(0) == '<':
		l.i++
		l.redirHere = true
		if l.peek(0) == '-' {
			l.i++
			l.redirStrip = true
		}
	case c == '<' && l.peek(0) == '>':
		l.i++
		l.redirOut = true
	case l.peek(0) == '&':
		// >&2, <&0, >&-: duplicating a descriptor names no file.
		l.i++
		if l.peek(0) == '-' || l.peek(0) >= '0' && l.peek(0) <= '9' {
			for l.peek(0) == '-' || l.peek(0) >= '0' && l.peek(0) <= '9' {
				l.i++
			}
			l.redirect, l.redirOut = false, false
		}
	case c == '>' && (l.peek(0) == '>' || l.peek(0) == '|'):
		l.i++
	}
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func (l *lexer) endWord() {
	if !l.inW {
		return
	}
	w := l.word.String()
	l.word.Reset()
	l.inW = false
	if l.redirect {
		switch {
		case l.redirHere:
			l.heredocs = append(l.heredocs, heredoc{cmd: -1, delim: w, strip: l.redirStrip, current: true})
		case l.redirStr:
			l.cur.stdin = append(l.cur.stdin, w)
		case l.redirOut:
			l.cur.redirs = append(l.cur.redirs, w)
		}
		l.redirect, l.redirOut, l.redirHere, l.redirStrip, l.redirStr = false, false, false, false, false
		return
	}
	l.cur.words = append(l.cur.words, w)
}

func (l *lexer) endCommand() {
	l.redirect, l.redirOut, l.redirHere, l.redirStrip, l.redirStr = false, false, false, false, false
	for k := range l.heredocs {
		if l.heredocs[k].current {
			l.heredocs[k].current = false
			l.heredocs[k].cmd = len(l.out)
		}
	}
	if len(l.cur.words) > 0 || len(l.cur.redirs) > 0 || len(l.cur.stdin) > 0 {
		l.out = append(l.out, l.cur)
	} else {
		// a here-document of an empty command feeds nothing we read
		for k := range l.heredocs {
			if l.heredocs[k].cmd == len(l.out) {
				l.heredocs[k].cmd = -1
			}
		}
	}
	l.cur = simple{}
}

// readHeredocs reads the bodies of the here-documents opened on the line
// that just ended.
func (l *lexer) readHeredocs() {
	for _, h := range l.heredocs {
		var body strings.Builder
		for l.i < len(l.src) {
			end := strings.IndexByte(l.src[l.i:], '\n')
			line := ""
			if end < 0 {
				line = l.src[l.i:]
				l.i = len(l.src)
			} else {
				line = l.src[l.i : l.i+end]
				l.i += end + 1
			}
			check := line
			if h.strip {
				check = strings.TrimLeft(line, "\t")
			}
			if check == h.delim {
				break
			}
			body.WriteString(line)
			body.WriteByte('\n')
		}
		if h.cmd >= 0 && h.cmd < len(l.out) {
			l.out[h.cmd].stdin = append(l.out[h.cmd].stdin, body.String())
		}
	}
	l.heredocs = nil
}

// double reads a double-quoted string after its opening quote.
func (l *lexer) double() {
	l.inW = true
	for l.i < len(l.src) {
		c := l.src[l.i]
		switch {
		case c == '"':
			l.i++
			return
		case c == '\\' && l.i+1 < len(l.src):
			n := l.src[l.i+1]
			switch n {
			case '"', '\\', '$', '`':
				l.add(string(n))
			case '\n':
			default:
				l.add(string(c) + string(n))
			}
			l.i += 2
		case c == '$' && l.peek(1) == '(':
			l.add(l.substitution(l.i+1, '(', ')'))
		case c == '$' && l.peek(1) == '{':
			l.add(l.skipBalanced(l.i+1, '{', '}'))
		case c == '`':
			l.add(l.backtick())
		default:
			l.add(string(c))
			l.i++
		}
	}
}

// ansi reads a $'...' string after its opening quote.
func (l *lexer) ansi() {
	l.inW = true
	for l.i < len(l.src) {
		c := l.src[l.i]
		switch {
		case c == '\'':
			l.i++
			return
		case c == '\\' && l.i+1 < len(l.src):
			n := l.src[l.i+1]
			switch n {
			case 'n':
				l.add("\n")
			case 't':
				l.add("\t")
			default:
				l.add(string(n))
			}
			l.i += 2
		default:
			l.add(string(c))
			l.i++
		}
	}
}

// substitution reads $(...) (or <(...), >(...)) whose opening parenthesis
// is at open, parses what is inside as commands of their own, and returns
// its text.
func (l *lexer) substitution(open int, o, c byte) string {
	text := l.skipBalanced(open, o, c)
	inner := strings.TrimSuffix(strings.TrimPrefix(text[1:], string(o)), string(c))
	if strings.HasPrefix(inner, "(") { // $(( arithmetic ))
		return text
	}
	if l.depth < maxDepth {
		l.inner = append(l.inner, parseShell(inner, l.depth+1)...)
	}
	return text
}

// skipBalanced moves past a bracketed region that opens at open (the byte
// before it is the $ or < that introduced it) and returns its text. Quotes
// inside are honoured.
func (l *lexer) skipBalanced(open int, o, c byte) string {
	start := open - 1
	depth := 0
	i := open
	for i < len(l.src) {
		ch := l.src[i]
		switch {
		case ch == '\\':
			i += 2
			continue
		case ch == '\'':
			end := strings.IndexByte(l.src[i+1:], '\'')
			if end < 0 {
				i = len(l.src)
				continue
			}
			i += end + 2
			continue
		case ch == '"':
			i++
			for i < len(l.src) && l.src[i] != '"' {
				if l.src[i] == '\\' {
					i++
				}
				i++
			}
		case ch == o:
			depth++
		case ch == c:
			depth--
			if depth == 0 {
				l.i = i + 1
				return l.src[start : i+1]
			}
		}
		i++
	}
	l.i = len(l.src)
	return l.src[start:]
}

// backtick reads `...` and parses what is inside.
func (l *lexer) backtick() string {
	start := l.i
	i := l.i + 1
	var inner strings.Builder
	for i < len(l.src) && l.src[i] != '`' {
		if l.src[i] == '\\' && i+1 < len(l.src) {
			inner.WriteByte(l.src[i+1])
			i += 2
			continue
		}
		inner.WriteByte(l.src[i])
		i++
	}
	if i < len(l.src) {
		i++
	}
	l.i = i
	if l.depth < maxDepth {
		l.inner = append(l.inner, parseShell(inner.String(), l.depth+1)...)
	}
	return l.src[start:i]
}
