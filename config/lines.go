package config

import (
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// BurntSushi/toml v1.6 keeps the line of every key to itself, so to point
// at the line of a bad value or an unknown key we find the keys in the
// source again. The scanner runs only on text the toml parser has already
// accepted, so it can skip values without validating them; all it must get
// right is which key is defined on which line, which is why it follows
// strings, arrays and inline tables across lines.

// keyLoc is one definition of a key: its path with array-of-tables
// elements numbered ("gates[1].name") and the line it is on.
type keyLoc struct {
	path string
	line int
}

type keyIndex struct {
	// byPath finds the line of a path built from the decoded values.
	byPath map[string]int
	// byPlain lists, for each toml.Key.String(), its definitions in
	// document order, which is the order MetaData.Keys reports them in; the
	// n-th occurrence of a key there is the n-th entry here.
	byPlain map[string][]keyLoc
}

// lineOf is the line of path, or of its nearest enclosing key when path
// itself is not written out (a missing gate name is reported at its
// [[gates]] header), or 0.
func (ix *keyIndex) lineOf(path string) int {
	for path != "" {
		if l, ok := ix.byPath[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

// loc is the n-th definition of the plain key k.
func (ix *keyIndex) loc(k toml.Key, n int) keyLoc {
	plain := k.String()
	if locs := ix.byPlain[plain]; n < len(locs) {
		return locs[n]
	}
	return keyLoc{plain, ix.lineOf(plain)}
}

func indexKeys(src string) *keyIndex {
	s := &keyScanner{
		src:  src,
		line: 1,
		aot:  map[string]int{},
		ix:   &keyIndex{byPath: map[string]int{}, byPlain: map[string][]keyLoc{}},
	}
	s.document()
	return s.ix
}

type keyScanner struct {
	src  string
	pos  int
	line int
	aot  map[string]int // plain path of an array of tables → elements so far
	ix   *keyIndex
}

// pathPart is one key component as it appears in a path.
func pathPart(c string) string { return toml.Key{c}.String() }

func (s *keyScanner) record(plain []string, path string, line int) {
	p := toml.Key(plain).String()
	s.ix.byPlain[p] = append(s.ix.byPlain[p], keyLoc{path, line})
	// Enclosing keys that are never written out ("workers" in
	// "workers.count.x = 1") are placed where they first appear.
	for path != "" {
		if _, ok := s.ix.byPath[path]; !ok {
			s.ix.byPath[path] = line
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
}

func (s *keyScanner) eof() bool { return s.pos >= len(s.src) }

func (s *keyScanner) peek() byte {
	if s.eof() {
		return 0
	}
	return s.src[s.pos]
}

func (s *keyScanner) hasPrefix(p string) bool { return strings.HasPrefix(s.src[s.pos:], p) }

func (s *keyScanner) advance(n int) {
	for i := 0; i < n && !s.eof(); i++ {
		if s.src[s.pos] == '\n' {
			s.line++
		}
		s.pos++
	}
}

// skip passes blanks and comments, and newlines too when newlines is set.
func (s *keyScanner) skip(newlines bool) {
	for !s.eof() {
		switch c := s.peek(); {
		case c == ' ' || c == '\t' || c == '\r':
			s.advance(1)
		case c == '\n' && newlines:
			s.advance(1)
		case c == '#':
			for !s.eof() && s.peek() != '\n' {
				s.advance(1)
			}
		default:
			return
		}
	}
}

func (s *keyScanner) document() {
	var table []string // plain components of the current [table]
	prefix := ""       // the same, numbered
	for {
		s.skip(true)
		if s.eof() {
			return
		}
		if s.peek() == '[' {
			table, prefix = s.header()
			continue
		}
		start := s.pos
		s.keyValue(table, prefix)
		if s.pos == start {
			s.advance(1) // not valid TOML after all; never loop forever
		}
	}
}

func (s *keyScanner) header() ([]string, string) {
	line := s.line
	s.advance(1)
	array := s.peek() == '['
	if array {
		s.advance(1)
	}
	key := s.key()
	s.skip(false)
	s.advance(1)
	if array {
		s.advance(1)
		s.aot[toml.Key(key).String()]++
	}
	// A header below an array of tables belongs to its latest element.
	var b strings.Builder
	for i := range key {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(pathPart(key[i]))
		if n := s.aot[toml.Key(key[:i+1]).String()]; n > 0 {
			b.WriteString("[" + strconv.Itoa(n-1) + "]")
		}
	}
	s.record(key, b.String(), line)
	return key, b.String()
}

func (s *keyScanner) keyValue(table []string, prefix string) {
	line := s.line
	key := s.key()
	if len(key) == 0 {
		return
	}
	plain := append(append([]string(nil), table...), key...)
	path := prefix
	for _, c := range key {
		if path != "" {
			path += "."
		}
		path += pathPart(c)
	}
	s.record(plain, path, line)
	s.skip(false)
	if s.peek() != '=' {
		return
	}
	s.advance(1)
	s.skip(false)
	s.value(plain, path)
}

// key reads a possibly dotted key into its components.
func (s *keyScanner) key() []string {
	var parts []string
	for {
		s.skip(false)
		switch c := s.peek(); {
		case c == '"':
			start := s.pos
			s.basicString()
			raw := s.src[start:s.pos]
			if u, err := strconv.Unquote(raw); err == nil {
				parts = append(parts, u)
			} else {
				parts = append(parts, strings.Trim(raw, `"`))
			}
		case c == '\'':
			start := s.pos
			s.advance(1)
			for !s.eof() && s.peek() != '\'' && s.peek() != '\n' {
				s.advance(1)
			}
			s.advance(1)
			parts = append(parts, strings.Trim(s.src[start:s.pos], "'"))
		case isBare(c):
			start := s.pos
			for !s.eof() && isBare(s.peek()) {
				s.advance(1)
			}
			parts = append(parts, s.src[start:s.pos])
		default:
			return parts
		}
		s.skip(false)
		if s.peek() != '.' {
			return parts
		}
		s.advance(1)
	}
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func (s *keyScanner) value(plain []string, path string) {
	switch {
	case s.hasPrefix(`"""`):
		s.multiline(`"""`, true)
	case s.hasPrefix(`'''`):
		s.multiline(`'''`, false)
	case s.peek() == '"':
		s.basicString()
	case s.peek() == '\'':
		s.advance(1)
		for !s.eof() && s.peek() != '\'' && s.peek() != '\n' {
			s.advance(1)
		}
		s.advance(1)
	case s.peek() == '[':
		s.advance(1)
		for i := 0; ; i++ {
			s.skip(true)
			if s.eof() || s.peek() == ']' {
				break
			}
			s.value(plain, path+"["+strconv.Itoa(i)+"]")
			s.skip(true)
			if s.peek() != ',' {
				break
			}
			s.advance(1)
		}
		s.advance(1)
	case s.peek() == '{':
		s.advance(1)
		for {
			s.skip(true)
			if s.eof() || s.peek() == '}' {
				break
			}
			start := s.pos
			s.keyValue(plain, path)
			s.skip(true)
			if s.peek() == ',' {
				s.advance(1)
			} else if s.pos == start {
				break
			}
		}
		s.advance(1)
	default:
		// Numbers, booleans and datetimes; a datetime may hold a space.
		for !s.eof() && !strings.ContainsRune(",]}#\n", rune(s.peek())) {
			s.advance(1)
		}
	}
}

func (s *keyScanner) basicString() {
	s.advance(1)
	for !s.eof() && s.peek() != '"' && s.peek() != '\n' {
		if s.peek() == '\\' {
			s.advance(1)
		}
		s.advance(1)
	}
	s.advance(1)
}

// multiline passes a multi-line string, basic or literal. Up to two
// quotes may end its content right before the closing delimiter.
func (s *keyScanner) multiline(delim string, escapes bool) {
	s.advance(3)
	for !s.eof() && !s.hasPrefix(delim) {
		if escapes && s.peek() == '\\' {
			s.advance(1)
		}
		s.advance(1)
	}
	s.advance(3)
	for i := 0; i < 2 && s.peek() == delim[0]; i++ {
		s.advance(1)
	}
}
