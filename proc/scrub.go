package proc

import (
	"regexp"
	"sort"
	"strings"
	"sync"
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

// SecretName tells whether an environment variable's name marks a secret:
// it holds TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL, PRIVATE
// or COOKIE, or a part of it between underscores ends in KEY or AUTH or is
// PASS, PW or PWD (but PWD and OLDPWD are directories), case aside.
// GIT_AUTHOR_NAME is not a secret; SSH_AUTH_SOCK is taken as one, which
// costs nothing but a path in a message.
func SecretName(name string) bool {
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
		if !ok || len(value) < minSecret || seen[value] || !SecretName(name) {
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
var urlPassword = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@'"]*):[^/\s@'"]+@`)
})

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
	return prefix + urlPassword().ReplaceAllString(s, "$1:[REDACTED]@")
}
