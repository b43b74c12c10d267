package proc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestLookProgram(t *testing.T) {
	bin := t.TempDir()
	for _, name := range []string{"zergfake", "zerg fake"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "zergplain"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	fake, spaced := filepath.Join(bin, "zergfake"), filepath.Join(bin, "zerg fake")

	for _, c := range []struct{ command, want string }{
		{`zergfake -p x`, fake},
		{`  zergfake`, fake},
		{`zergfake -p "$(cat "$ZERG_PROMPT_FILE")" --permission-mode acceptEdits`, fake},
		{`FOO=1 BAR='a b' zergfake`, fake},
		{`FOO="$(missing-thing)" zergfake`, fake},
		{`exec zergfake`, fake},
		{`exec -a name zergfake`, fake},
		{`env -i FOO=1 'BAR=x y' zergfake`, fake},
		{`env -u HOME -- zergfake`, fake},
		{`exec env FOO=1 nohup zergfake`, fake},
		{`command -p zergfake`, fake},
		{`2>/dev/null zergfake`, fake},
		{`<in >out zergfake`, fake},
		{`'zergfake' arg`, fake},
		{`zerg"fa"ke`, fake},
		{`zerg\ fake --x`, spaced},
		{`"zerg fake"; other`, spaced},
		{`zergfake&& missing`, fake},
		{fake + ` x`, fake},
		{`/bin/sh -c x`, "/bin/sh"},
		// Not refused: the program is not known before the shell runs.
		{``, ""},
		{`# a comment`, ""},
		{`$AGENT -p x`, ""},
		{`"$AGENT"`, ""},
		{`$(which agent) x`, ""},
		{`~/bin/agent`, ""},
		{`zerg*`, ""},
		{`./agent.sh`, ""},
		{`scripts/agent`, ""},
		{`cd sub && missing-program`, ""},
		{`if true; then missing-program; fi`, ""},
		{`(missing-program)`, ""},
		{`{ missing-program; }`, ""},
		{`echo hi`, ""},
		{`command -v missing-program`, ""},
		{`env -S 'missing-program x'`, ""},
		{`FOO=1`, ""},
		{`exec`, ""},
		{`"zergfake`, ""},
		{`zergfake $(unclosed`, ""},
	} {
		got, err := LookProgram(c.command)
		if err != nil || got != c.want {
			t.Errorf("LookProgram(%q) = %q, %v; want %q", c.command, got, err, c.want)
		}
	}

	for _, command := range []string{
		`zerg-no-such-program -p x`,
		`FOO=bar zerg-no-such-program`,
		`exec env A=1 zerg-no-such-program`,
		`zergplain`, // not executable
		`/nonexistent/agent`,
		`"zerg-no such"`,
	} {
		got, err := LookProgram(command)
		if err == nil {
			t.Errorf("LookProgram(%q) = %q, want an error", command, got)
		}
	}
	if _, err := LookProgram("zerg-no-such-program"); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("error %v, want exec.ErrNotFound", err)
	}
}

func TestLocalScript(t *testing.T) {
	for _, c := range []struct{ command, want string }{
		{"sh work.sh", "work.sh"},
		{"bash -e scripts/run.sh --fast", "scripts/run.sh"},
		{"FOO=1 exec python3 tools/worker.py", "tools/worker.py"},
		{"./work.sh arg", "work.sh"},
		{"bin/agent", "bin/agent"},
		{"env -u X node ./w.js", "w.js"},
		{"/usr/bin/python3 w.py", "w.py"},
		{"sh -c 'echo hi'", ""},
		{"python3 -m worker", ""},
		{"sh /opt/work.sh", ""},
		{"sh ~/work.sh", ""},
		{"sh $SCRIPT", ""},
		{"sh < work.sh", ""},
		{"claude -p", ""},
		{"true", ""},
		{"sh", ""},
		{"(cd x && sh w.sh)", ""},
	} {
		if got := LocalScript(c.command); got != c.want {
			t.Errorf("LocalScript(%q) = %q, want %q", c.command, got, c.want)
		}
	}
}
