package proc

import (
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/git-zerg/git-zerg/lazy"
)

// minSecret is the shortest value Scrub replaces. A shorter value of a
// secret-named variable ("1", "true", "none") is more likely a setting than
// a secret, and replacing it everywhere would garble the output.
const minSecret = 6

// minFragment is the shortest end of a secret replaced at the start of a
// tail that was cut in the middle of it.
const minFragment = 4

// Scrub replaces, in s, each value of a variable in env (NAME=value
// entries) whose name marks a secret with [REDACTED:NAME], and passwords
// in URLs (scheme://user:password@host) with [REDACTED]. Worker and
// verification output is kept in state that sync pushes elsewhere.
func Scrub(s string, env []string) string {
	return scrub(s, secrets(env), false)
}

type secret struct{ name, value string }

// secretName tells whether an environment variable's name marks a secret:
// it holds TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL, PRIVATE
// or COOKIE, or a part of it between underscores ends in KEY or AUTH or is
// PASS, PW or PWD (but PWD and OLDPWD are directories), case aside.
// GIT_AUTHOR_NAME is not a secret; SSH_AUTH_SOCK is taken as one, which
// costs nothing but a path in a message.
func secretName(name string) bool {
	up := strings.ToUpper(name)
	if up == "PWD" || up == "OLDPWD" {
		return false
	}
	for _, m := range []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "PRIVATE", "COOKIE"} {
		if strings.Contains(up, m) {
			return true
		}
	}
	for _, part := range strings.FieldsFunc(up, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		switch {
		case strings.HasSuffix(part, "KEY"), strings.HasSuffix(part, "AUTH"),
			part == "PASS", part == "PW", part == "PWD":
			return true
		}
	}
	return false
}

// secrets picks the values to replace, longest first, so that a value
// holding another is replaced whole.
func secrets(env []string) []secret {
	seen := map[string]bool{}
	var out []secret
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || len(value) < minSecret || seen[value] || !secretName(name) {
			continue
		}
		seen[value] = true
		out = append(out, secret{name, value})
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].value) > len(out[j].value) })
	return out
}

func (s secret) mark() string { return "[REDACTED:" + s.name + "]" }

// urlPassword is the password in a URL's user information. A token given
// as the user name alone (https://TOKEN@host) is not caught: it cannot be
// told from git@host.
var urlPassword = &lazy.Value[*regexp.Regexp]{Build: func() *regexp.Regexp {
	return regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@'"]*):[^/\s@'"]+@`)
}}

// scrub replaces the secrets in s. cut says s is the end of a longer
// output, so it may start with the end of a secret, which is replaced too.
func scrub(s string, secs []secret, cut bool) string {
	prefix := ""
	if cut {
		best := 0
		for _, sec := range secs {
			for k := len(sec.value) - 1; k >= minFragment && k > best; k-- {
				if strings.HasPrefix(s, sec.value[len(sec.value)-k:]) {
					best, prefix = k, sec.mark()
					break
				}
			}
		}
		s = s[best:]
	}
	if len(secs) > 0 {
		pairs := make([]string, 0, 2*len(secs))
		for _, sec := range secs {
			pairs = append(pairs, sec.value, sec.mark())
		}
		// One pass: a replacement is never searched again, and at one
		// place the longer value, listed first, wins.
		s = strings.NewReplacer(pairs...).Replace(s)
	}
	return prefix + urlPassword.Get().ReplaceAllString(s, "$1:[REDACTED]@")
}

// maxHeld bounds what a ScrubWriter holds back for the end of a word: a
// URL whose user information is longer than this is not waited for.
const maxHeld = 4 << 10

// ScrubWriter scrubs what is written through it as Scrub does before it
// reaches the writer under it, so that a log kept on disk holds no more
// secrets than the state. Output comes in whatever pieces a pipe gives,
// and a secret may straddle two of them: the writer holds back the end of
// what it was given while that may be the start of a secret or of a URL
// with a password in it (such a URL holds no space or quote), from the
// start of its line, so that another stream written to the same file
// falls between whole lines. Flush and Close write what is held.
type ScrubWriter struct {
	mu   sync.Mutex
	w    io.Writer
	secs []secret
	buf  []byte
	err  error
}

// NewScrubWriter scrubs, on their way to w, the values of the
// secret-named variables of env (NAME=value entries) and the passwords of
// URLs.
func NewScrubWriter(w io.Writer, env []string) *ScrubWriter {
	return &ScrubWriter{w: w, secs: secrets(env)}
}

// Write takes all of p; what can be told clean is written on at once.
func (sw *ScrubWriter) Write(p []byte) (int, error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.err != nil {
		return 0, sw.err
	}
	sw.buf = append(sw.buf, p...)
	if cut := sw.safeCut(); cut > 0 {
		sw.emit(sw.buf[:cut])
		sw.buf = append(sw.buf[:0], sw.buf[cut:]...)
	}
	return len(p), sw.err
}

// Flush writes on what is held back.
func (sw *ScrubWriter) Flush() error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.err == nil && len(sw.buf) > 0 {
		sw.emit(sw.buf)
		sw.buf = sw.buf[:0]
	}
	return sw.err
}

// Close flushes; the writer under it is the caller's to close.
func (sw *ScrubWriter) Close() error { return sw.Flush() }

func (sw *ScrubWriter) emit(b []byte) {
	if _, err := io.WriteString(sw.w, scrub(string(b), sw.secs, false)); err != nil {
		sw.err = err
	}
}

// boundaries end a word: no URL password match spans one.
const boundaries = " \t\n\f\r'\""

// safeCut is how much of the buffer can be scrubbed and written now: none
// of it is the start of a secret or of a URL that the rest may complete.
func (sw *ScrubWriter) safeCut() int {
	s := string(sw.buf)
	hold := 0
	// The end may be the start of a secret: the longest such end.
	for _, sec := range sw.secs {
		for i := max(0, len(s)-len(sec.value)+1); i < len(s); i++ {
			if strings.HasPrefix(sec.value, s[i:]) {
				hold = max(hold, len(s)-i)
				break
			}
		}
	}
	// Or of a URL: the last word, unless it is longer than any worth
	// waiting for.
	if word := len(s) - (strings.LastIndexAny(s, boundaries) + 1); word <= maxHeld {
		hold = max(hold, word)
	}
	cut := len(s) - hold
	if hold > 0 {
		if nl := strings.LastIndexByte(s[:cut], '\n') + 1; cut-nl <= maxHeld {
			cut = nl
		}
	}
	// Nor cut a secret in two (one that holds a space or a newline): move
	// the cut to the start of any that crosses it, until none does.
	for moved := true; moved && cut > 0; {
		moved = false
		for _, sec := range sw.secs {
			from := max(0, cut-len(sec.value)+1)
			if i := strings.Index(s[from:], sec.value); i >= 0 && from+i < cut {
				cut, moved = from+i, true
			}
		}
	}
	return cut
}
