package proc

import (
	"context"
	"strings"
	"testing"
)

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"GITHUB_TOKEN": true, "ANTHROPIC_API_KEY": true, "openai_api_key": true, "AWS_SECRET_ACCESS_KEY": true,
		"DB_PASSWORD": true, "SMTP_PASSWD": true, "MYSQL_PWD": true, "DB_PASS": true, "GPG_PASSPHRASE": true,
		"GOOGLE_APPLICATION_CREDENTIALS": true, "CLAUDE_CODE_OAUTH_TOKEN": true, "APIKEY": true,
		"NPM_AUTH": true, "SSH_PRIVATE": true, "SESSION_COOKIE": true,
		"GIT_AUTHOR_NAME": false, "GIT_AUTHOR_EMAIL": false, "PWD": false, "OLDPWD": false, "HOME": false,
		"PATH": false, "KEYBOARD_LAYOUT": false, "PASSAGE": false, "ZERG_PROMPT_FILE": false,
	} {
		if got := secretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestScrub(t *testing.T) {
	env := []string{
		"HOME=/home/someone", "GITHUB_TOKEN=ghp_abcdefghijklmnop", "SHORT_KEY=abc", "DB_PASSWORD=hunter22",
		"LONG_SECRET=hunter22-and-more", "NOT_A_SECRET_VALUE", "EMPTY_TOKEN=",
	}
	for _, c := range []struct{ in, want string }{
		{"push with ghp_abcdefghijklmnop failed", "push with [REDACTED:GITHUB_TOKEN] failed"},
		{"abc stays, /home/someone stays", "abc stays, /home/someone stays"},
		// The longer value is replaced whole, not by the shorter one inside it.
		{"x hunter22-and-more y hunter22", "x [REDACTED:LONG_SECRET] y [REDACTED:DB_PASSWORD]"},
		{"fatal: unable to access 'https://x-access-token:s3cr3t@github.com/o/r.git/'",
			"fatal: unable to access 'https://x-access-token:[REDACTED]@github.com/o/r.git/'"},
		{"ssh://git@github.com/o/r and https://github.com/o/r", "ssh://git@github.com/o/r and https://github.com/o/r"},
		{"", ""},
	} {
		if got := Scrub(c.in, env); got != c.want {
			t.Errorf("Scrub(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// A value that looks like a marker's name is not searched in markers.
	env = []string{"A_TOKEN=REDACTED", "B_TOKEN=xREDACTEDx"}
	if got := Scrub("xREDACTEDx", env); got != "[REDACTED:B_TOKEN]" {
		t.Errorf("got %q", got)
	}
}

// TestScrubCutTail: a tail that starts in the middle of a secret does not
// keep its end.
func TestScrubCutTail(t *testing.T) {
	secs := secrets([]string{"GITHUB_TOKEN=ghp_abcdefghijklmnop"})
	if got := scrub("ijklmnop then more", secs, true); got != "[REDACTED:GITHUB_TOKEN] then more" {
		t.Errorf("got %q", got)
	}
	if got := scrub("ijklmnop then more", secs, false); got != "ijklmnop then more" {
		t.Errorf("an uncut output changed: %q", got)
	}
}

// TestRunScrubs: Run's tails come scrubbed, with the secret from the
// environment of git-zerg or from Spec.Env.
func TestRunScrubs(t *testing.T) {
	t.Setenv("ZERG_TEST_API_KEY", "sk-test-0123456789")
	spec := Spec{
		Command:     `echo "key $ZERG_TEST_API_KEY"; echo "token $MY_TOKEN" >&2`,
		Env:         []string{"MY_TOKEN=tok-abcdef-123"},
		SplitStderr: true,
	}
	res, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	// Two pipes: the order of the lines is not kept.
	if !strings.Contains(res.Tail, "key [REDACTED:ZERG_TEST_API_KEY]\n") || !strings.Contains(res.Tail, "token [REDACTED:MY_TOKEN]\n") {
		t.Errorf("tail %q", res.Tail)
	}
	if res.StderrTail != "token [REDACTED:MY_TOKEN]\n" {
		t.Errorf("stderr tail %q", res.StderrTail)
	}
	spec.KeepSecrets = true
	if res, _ = Run(context.Background(), spec); !strings.Contains(res.Tail, "sk-test-0123456789") {
		t.Errorf("KeepSecrets: tail %q", res.Tail)
	}
}

// TestScrubWriter: whatever pieces the output comes in, what reaches the
// log is what Scrub makes of the whole, a secret cut across two writes
// included.
func TestScrubWriter(t *testing.T) {
	env := []string{"GITHUB_TOKEN=ghp_abcdefghijklmnop", "DB_PASSWORD=hunter22", "LONG_SECRET=hunter22-and-more"}
	in := "start ghp_abcdefghijklmnop, then hunter22-and-more and hunter22\n" +
		"clone https://x-access-token:s3cr3t-pass@github.com/o/r.git 'https://u:p4ss@h/x'\n" +
		"ghp_abcdefghijklmnopghp_abcdefghijklmnop end hunter2"
	want := Scrub(in, env)
	if strings.Contains(want, "ghp_") || strings.Contains(want, "s3cr3t") || strings.Contains(want, "p4ss") {
		t.Fatalf("Scrub left a secret: %q", want)
	}
	write := func(pieces []string) string {
		var out strings.Builder
		sw := NewScrubWriter(&out, env)
		for _, p := range pieces {
			if n, err := sw.Write([]byte(p)); n != len(p) || err != nil {
				t.Fatalf("Write: %d, %v", n, err)
			}
		}
		if err := sw.Close(); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	// Every cut in two, and every run of one-byte writes.
	for i := 0; i <= len(in); i++ {
		if got := write([]string{in[:i], in[i:]}); got != want {
			t.Fatalf("cut at %d (%q | %q):\n got %q\nwant %q", i, in[:i], in[i:], got, want)
		}
	}
	bytes := make([]string, len(in))
	for i := range in {
		bytes[i] = in[i : i+1]
	}
	if got := write(bytes); got != want {
		t.Fatalf("byte by byte:\n got %q\nwant %q", got, want)
	}

	// What can be told clean is written at once; a line whose end may
	// start a secret or a URL waits, from its start.
	var out strings.Builder
	sw := NewScrubWriter(&out, env)
	sw.Write([]byte("the first line\nthen ghp_abcdefghij"))
	if out.String() != "the first line\n" {
		t.Errorf("written before the secret ends: %q", out.String())
	}
	sw.Write([]byte("klmnop done\n"))
	if out.String() != "the first line\nthen [REDACTED:GITHUB_TOKEN] done\n" {
		t.Errorf("after the secret: %q", out.String())
	}
	sw.Write([]byte("50% "))
	if !strings.HasSuffix(out.String(), "done\n50% ") {
		t.Errorf("an end that starts nothing was held back: %q", out.String())
	}
	sw.Write([]byte("https://"))
	sw.Flush()
	if !strings.HasSuffix(out.String(), "50% https://") {
		t.Errorf("flush: %q", out.String())
	}
	// A word longer than maxHeld without a space is not held for ever.
	out.Reset()
	sw = NewScrubWriter(&out, nil)
	sw.Write([]byte("line\n"))
	sw.Write([]byte(strings.Repeat(".", 3*maxHeld)))
	if out.Len() < maxHeld {
		t.Errorf("a long word held back: %d bytes written of %d", out.Len(), 3*maxHeld)
	}
}
