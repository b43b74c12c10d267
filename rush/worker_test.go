package rush

import (
	"testing"
)

func TestShellError(t *testing.T) {
	for _, c := range []struct{ tail, want string }{
		{"sh: 0: cannot open work.sh: No such file\n", "sh: 0: cannot open work.sh: No such file"},
		{"progress\nsh: 3: Syntax error: end of file unexpected (expecting \"fi\")", "sh: 3: Syntax error: end of file unexpected (expecting \"fi\")"},
		{"bash: line 1: foo: command not found", "bash: line 1: foo: command not found"},
		{"work.sh: 3: Syntax error: end of file unexpected", "work.sh: 3: Syntax error: end of file unexpected"},
		{"work.sh: line 3: syntax error: unexpected end of file", "work.sh: line 3: syntax error: unexpected end of file"},
		{"step 3: saved: continue me", ""},
		{"saved my progress, continue me", ""},
		{"sh: what the worker said about sh", ""},
		{"", ""},
	} {
		if got := shellError(c.tail); got != c.want {
			t.Errorf("shellError(%q) = %q, want %q", c.tail, got, c.want)
		}
	}
}
