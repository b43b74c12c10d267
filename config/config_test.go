package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

func TestDefault(t *testing.T) {
	c := Default()
	want := &Config{
		Workers: Workers{Count: 4, Agent: "claude",
			Timeout: Duration(45 * time.Minute), StallTimeout: Duration(10 * time.Minute), MaxCheckpoints: 3},
		Retry: Retry{MaxAttempts: 3, Backoff: Duration(10 * time.Second), BackoffCap: Duration(5 * time.Minute)},
		Locks: Locks{TTL: Duration(2 * time.Hour)},
		Sync:  Sync{Remote: "origin"},
		Rush:  Rush{RemoteWait: Duration(10 * time.Minute), Schedule: ScheduleFlow, FollowBase: true},
		Forge: Forge{Base: "main"},
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("Default() = %+v\nwant %+v", c, want)
	}
	// Callers may change what they get; the next caller must not see it.
	c.Workers.Count = 99
	if Default().Workers.Count != 4 {
		t.Fatal("Default() shares state between calls")
	}
}

func TestLoadMissingFileIsDefault(t *testing.T) {
	c, err := Load(filepath.Join(t.TempDir(), "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, Default()) || c.Path != "" {
		t.Fatalf("got %+v, want defaults with empty Path", c)
	}
}

func TestParseEmptyIsDefault(t *testing.T) {
	for _, src := range []string{"", "# nothing\n\n", "[workers]\n[retry]\n"} {
		c, err := parseConfig("c.toml", []byte(src))
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		want := Default()
		want.Path = "c.toml"
		if !reflect.DeepEqual(c, want) {
			t.Fatalf("%q: got %+v, want %+v", src, c, want)
		}
	}
}

const fullFile = `[workers]
count = 8
command = "claude -p \"$(cat $ZERG_PROMPT_FILE)\""   # run by sh in the worktree
timeout = "1h30m"
stall_timeout = "0s"                      # never
max_checkpoints = 0
image = "ghcr.io/x/worker:1"
pass_env = ["GH_TOKEN", "GH_TOKEN"]

[retry]
max_attempts = 5
backoff = "0s"
backoff_cap = "1m"

[locks]
ttl = "30m"

[worktrees]
root = "/tmp/wt"
setup = "npm ci"

[sync]
remote = "upstream"
arbiter = "origin"

[forge]
repo = "acme/widgets"
api = "https://github.example.com/api/v3/"
require_issue = true
review = "task"
base = "trunk"

[rush]
remote = "origin"
remote_wait = "90s"
schedule = "levels"
follow_base = false

[[gates]]
name = "test"
command = "go test ./..."
required = true
timeout = "10m"

[[gates]]
name = "lint"
command = "golangci-lint run"
required = false
pass_env = ["GITHUB_TOKEN"]

[[gates]]
name = "vet"
command = "go vet ./..."
`

func TestLoadFullFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(fullFile), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Workers: Workers{Count: 8, Agent: "claude", Command: `claude -p "$(cat $ZERG_PROMPT_FILE)"`,
			Timeout: Duration(90 * time.Minute), StallTimeout: 0, MaxCheckpoints: 0, Image: "ghcr.io/x/worker:1",
			PassEnv: []string{"GH_TOKEN"}},
		Retry:     Retry{MaxAttempts: 5, Backoff: 0, BackoffCap: Duration(time.Minute)},
		Locks:     Locks{TTL: Duration(30 * time.Minute)},
		Worktrees: Worktrees{Root: "/tmp/wt", Setup: "npm ci"},
		Sync:      Sync{Remote: "upstream", Arbiter: "origin"},
		Rush:      Rush{Remote: "origin", RemoteWait: Duration(90 * time.Second), Schedule: ScheduleLevels},
		Forge: Forge{Repo: "acme/widgets", API: "https://github.example.com/api/v3/", RequireIssue: true,
			Review: ReviewTask, Base: "trunk"},
		Gates: []Gate{
			{Name: "test", Command: "go test ./...", Required: true, Timeout: Duration(10 * time.Minute)},
			{Name: "lint", Command: "golangci-lint run", Required: false, PassEnv: []string{"GITHUB_TOKEN"}},
			{Name: "vet", Command: "go vet ./...", Required: true},
		},
		Path: path,
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got  %+v\nwant %+v", c, want)
	}
}

func TestPartialFileKeepsOtherDefaults(t *testing.T) {
	c, err := parseConfig("c.toml", []byte("[workers]\ncount = 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Workers.Count = 2
	want.Path = "c.toml"
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v, want %+v", c, want)
	}
}

func TestGateRequiredDefaultsToTrue(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []bool
	}{
		{"absent", "[[gates]]\nname = \"a\"\ncommand = \"true\"\n", []bool{true}},
		{"false", "[[gates]]\nname = \"a\"\ncommand = \"true\"\nrequired = false\n", []bool{false}},
		{"true", "[[gates]]\nname = \"a\"\ncommand = \"true\"\nrequired = true\n", []bool{true}},
		{"inline", `gates = [{name = "a", command = "x"}, {name = "b", command = "y", required = false}]`, []bool{true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseConfig("c.toml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			var got []bool
			for _, g := range c.Gates {
				got = append(got, g.Required)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("required = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTemplateParsesToDefault(t *testing.T) {
	c, err := parseConfig("template", []byte(Template))
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Path = "template"
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("Template parses to %+v\nwant %+v", c, want)
	}
}

func TestTemplateShowsEveryKey(t *testing.T) {
	for _, table := range tableNames.Get() {
		header := "\n[" + table + "]\n"
		if table == "gates" {
			header = "\n# [[gates]]\n"
		}
		if !strings.Contains(Template, header) {
			t.Errorf("Template lacks %q", strings.TrimSpace(header))
		}
		for _, key := range fieldNames.Get()[table] {
			line := "\n" + key + " = "
			if table == "gates" {
				line = "\n# " + key + " = "
			}
			if !strings.Contains(Template, line) {
				t.Errorf("Template lacks %s.%s", table, key)
			}
		}
	}
	// The gates example must work once uncommented.
	var gates []string
	on := false
	for _, l := range strings.Split(Template, "\n") {
		if l == "# [[gates]]" {
			on = true
		}
		if on {
			gates = append(gates, strings.TrimPrefix(l, "# "))
		}
	}
	c, err := parseConfig("gates", []byte(strings.Join(gates, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	want := []Gate{{Name: "test", Command: "go test ./...", Required: true, Timeout: Duration(10 * time.Minute)}}
	if !reflect.DeepEqual(c.Gates, want) {
		t.Fatalf("uncommented gates example = %+v, want %+v", c.Gates, want)
	}
}

// parseErrors parses src as c.toml and returns every error it reports.
func parseErrors(t *testing.T, src string) []string {
	t.Helper()
	c, err := parseConfig("c.toml", []byte(src))
	if err == nil {
		t.Fatalf("no error; got %+v", c)
	}
	if c != nil {
		t.Errorf("got a config along with the error")
	}
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("error %T is not Errors: %v", err, err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Error())
	}
	if got := err.Error(); got != strings.Join(out, "; ") {
		t.Errorf("Errors.Error() = %q", got)
	}
	return out
}

func checkErrors(t *testing.T, src string, want []string) {
	t.Helper()
	got := parseErrors(t, src)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("errors:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestBadValues(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"count zero", "[workers]\ncount = 0\n",
			[]string{"c.toml:2: workers.count: must be at least 1, got 0"}},
		{"count negative", "\n\n[workers]\ncommand = \"x\"\ncount = -3\n",
			[]string{"c.toml:5: workers.count: must be at least 1, got -3"}},
		{"count huge", "[workers]\ncount = 99999999999\n",
			[]string{"c.toml:2: workers.count: must be at most 256, got 99999999999"}},
		{"count just too many", "[workers]\n\ncount = 257\n",
			[]string{"c.toml:3: workers.count: must be at most 256, got 257"}},
		{"count past int64", "[workers]\ncount = 9223372036854775808\n",
			[]string{"c.toml:2: workers.count: 9223372036854775808 is out of range for int64"}},
		{"count string", "[workers]\ncount = \"four\"\n",
			[]string{`c.toml:2: workers.count: must be an integer, got string "four"`}},
		{"count float", "[workers]\ncount = 4.5\n",
			[]string{"c.toml:2: workers.count: must be an integer, got float 4.5"}},
		{"count table", "workers.count.x = 1\n",
			[]string{"c.toml:1: workers.count: must be an integer, got a table"}},
		{"command empty", "[workers]\ncommand = \"  \"\n",
			[]string{"c.toml:2: workers.command: must not be blank (leave it out to run the agent's preset)"}},
		{"agent unknown", "[workers]\nagent = \"clade\"\n",
			[]string{"c.toml:2: workers.agent: unknown agent \"clade\" (aider, claude, codex, gemini, custom)"}},
		{"custom without command", "[workers]\nagent = \"custom\"\n",
			[]string{"c.toml:2: workers.agent: \"custom\" needs workers.command"}},
		{"pass_env not a list", "[workers]\npass_env = \"GH_TOKEN\"\n",
			[]string{`c.toml:2: workers.pass_env: must be an array of names such as ["GITHUB_TOKEN"], got string "GH_TOKEN"`}},
		{"pass_env not names", "[workers]\npass_env = [1]\n",
			[]string{`c.toml:2: workers.pass_env: must hold names (strings), got integer 1`}},
		{"pass_env not withheld", "[[gates]]\nname = \"a\"\ncommand = \"b\"\npass_env = [\"GITHUB_TOKEN\", \"NPM_TOKEN\"]\n",
			[]string{`c.toml:4: gates[0].pass_env: "NPM_TOKEN" is not a withheld credential (GITHUB_TOKEN, GH_TOKEN, GH_ENTERPRISE_TOKEN, GITHUB_ENTERPRISE_TOKEN; any other variable is passed anyway)`}},
		{"budget negative", "[budget]\nmax_cost_usd = -1.5\nmax_tokens = -3\n",
			[]string{"c.toml:2: budget.max_cost_usd: must not be negative, got -1.5", "c.toml:3: budget.max_tokens: must not be negative, got -3"}},
		{"forge values", "[forge]\nrepo = \"widgets\"\napi = \"ftp://x\"\nrequire_issue = \"yes\"\nreview = \"pr\"\nbase = \"\"\n",
			[]string{`c.toml:2: forge.repo: want "owner/name", got "widgets"`,
				`c.toml:3: forge.api: want an http or https URL such as "https://github.example.com/api/v3/", got "ftp://x"`,
				`c.toml:4: forge.require_issue: must be true or false, got string "yes"`,
				`c.toml:5: forge.review: want "feature", "task" or "" (no review), got "pr"`,
				`c.toml:6: forge.base: must name a branch`}},
		{"forge key misspelt", "[forge]\nrequire_issues = true\n",
			[]string{`c.toml:2: forge.require_issues: unknown key (did you mean "require_issue"?)`}},
		{"budget not a number", "[budget]\nmax_cost_usd = \"5\"\n",
			[]string{"c.toml:2: budget.max_cost_usd: must be a number, got string \"5\""}},
		{"command not string", "[workers]\ncommand = [\"claude\"]\n",
			[]string{"c.toml:2: workers.command: must be a string, got an array"}},
		{"max_checkpoints negative", "[workers]\nmax_checkpoints = -1\n",
			[]string{"c.toml:2: workers.max_checkpoints: must not be negative, got -1"}},
		{"image not string", "[workers]\nimage = true\n",
			[]string{"c.toml:2: workers.image: must be a string, got boolean true"}},
		{"timeout unparsable", "[workers]\ntimeout = \"soon\"\n",
			[]string{`c.toml:2: workers.timeout: "soon" is not a duration (write e.g. "45m", "10s" or "2h")`}},
		{"timeout empty", "[workers]\ntimeout = \"\"\n",
			[]string{`c.toml:2: workers.timeout: "" is not a duration (write e.g. "45m", "10s" or "2h")`}},
		{"timeout zero", "[workers]\ntimeout = \"0s\"\n",
			[]string{`c.toml:2: workers.timeout: must be positive, got "0s"`}},
		{"timeout negative", "[workers]\ntimeout = \"-5m\"\n",
			[]string{`c.toml:2: workers.timeout: must be positive, got "-5m"`}},
		{"timeout integer", "[workers]\ntimeout = 45\n",
			[]string{`c.toml:2: workers.timeout: must be a duration string such as "45m", got integer 45`}},
		{"stall_timeout negative", "[workers]\nstall_timeout = \"-1s\"\n",
			[]string{`c.toml:2: workers.stall_timeout: must not be negative, got "-1s"`}},
		{"stall_timeout integer", "[workers]\nstall_timeout = 10\n",
			[]string{`c.toml:2: workers.stall_timeout: must be a duration string such as "45m", got integer 10`}},
		{"max_attempts zero", "[retry]\nmax_attempts = 0\n",
			[]string{"c.toml:2: retry.max_attempts: must be at least 1, got 0"}},
		{"backoff negative", "[retry]\nbackoff = \"-1s\"\n",
			[]string{`c.toml:2: retry.backoff: must not be negative, got "-1s"`}},
		{"backoff_cap zero", "[retry]\nbackoff_cap = \"0s\"\n",
			[]string{`c.toml:2: retry.backoff_cap: must be positive, got "0s"`}},
		{"ttl unparsable", "[locks]\nttl = \"2 hours\"\n",
			[]string{`c.toml:2: locks.ttl: "2 hours" is not a duration (write e.g. "45m", "10s" or "2h")`}},
		{"ttl zero", "[locks]\nttl = \"0h\"\n",
			[]string{`c.toml:2: locks.ttl: must be positive, got "0h"`}},
		{"root not string", "[worktrees]\nroot = 1\n",
			[]string{"c.toml:2: worktrees.root: must be a string, got integer 1"}},
		{"remote not string", "[sync]\nremote = false\n",
			[]string{"c.toml:2: sync.remote: must be a string, got boolean false"}},
		{"rush remote an option", "[rush]\nremote = \"--upload-pack=x\"\n",
			[]string{`c.toml:2: rush.remote: not a remote name or URL: "--upload-pack=x"`}},
		{"rush remote wait zero", "[rush]\nremote_wait = \"0s\"\n",
			[]string{`c.toml:2: rush.remote_wait: must be positive, got "0s"`}},
		{"rush schedule unknown", "[rush]\nschedule = \"level\"\n",
			[]string{`c.toml:2: rush.schedule: must be "flow" or "levels", got "level"`}},
		{"table not a table", "workers = 5\n",
			[]string{"c.toml:1: workers: must be a table ([workers]), got integer 5"}},
		{"table array instead of table", "[[locks]]\nttl = \"1h\"\n",
			[]string{"c.toml:1: locks: must be a table ([locks]), got an array of tables"}},
		{"inline table", "workers = { count = 0, timeout = \"x\" }\n", []string{
			"c.toml:1: workers.count: must be at least 1, got 0",
			`c.toml:1: workers.timeout: "x" is not a duration (write e.g. "45m", "10s" or "2h")`,
		}},
		{"gates as a table", "[gates]\nname = \"test\"\n",
			[]string{"c.toml:1: gates: must be an array of tables ([[gates]]), got a table"}},
		{"gates as strings", "gates = [\"test\"]\n",
			[]string{"c.toml:1: gates: must be an array of tables ([[gates]]), got an array"}},
		{"gate name empty", "[[gates]]\nname = \"\"\ncommand = \"x\"\n",
			[]string{"c.toml:2: gates[0].name: must not be empty"}},
		{"gate name missing", "[[gates]]\nname = \"a\"\ncommand = \"x\"\n\n[[gates]]\ncommand = \"y\"\n",
			[]string{"c.toml:5: gates[1].name: must be set"}},
		{"gate name not string", "[[gates]]\nname = 7\ncommand = \"x\"\n",
			[]string{"c.toml:2: gates[0].name: must be a string, got integer 7"}},
		{"gate command empty", "[[gates]]\nname = \"a\"\ncommand = \"\"\n",
			[]string{"c.toml:3: gates[0].command: must not be empty"}},
		{"gate command missing", "[[gates]]\nname = \"a\"\n",
			[]string{"c.toml:1: gates[0].command: must be set"}},
		{"gate required not bool", "[[gates]]\nname = \"a\"\ncommand = \"x\"\nrequired = \"yes\"\n",
			[]string{`c.toml:4: gates[0].required: must be true or false, got string "yes"`}},
		{"gate timeout zero", "[[gates]]\nname = \"a\"\ncommand = \"x\"\ntimeout = \"0s\"\n",
			[]string{`c.toml:4: gates[0].timeout: must be positive, got "0s"`}},
		{"duplicate gate names", "[[gates]]\nname = \"test\"\ncommand = \"x\"\n[[gates]]\nname = \"lint\"\ncommand = \"y\"\n[[gates]]\nname = \"test\"\ncommand = \"z\"\n",
			[]string{`c.toml:8: gates[2].name: duplicate gate name "test" (first used by gates[0])`}},
		{"duplicate inline gates", "gates = [\n  {name = \"a\", command = \"x\"},\n  # second\n  {name = \"a\", command = \"y\"},\n]\n",
			[]string{`c.toml:4: gates[1].name: duplicate gate name "a" (first used by gates[0])`}},
		{"every problem at once", `[workers]
count = "four"
timeout = "soon"
max_checkpoints = -1

[retry]
max_attempts = 0

[locks]
ttl = "0s"

[[gates]]
command = ""
`, []string{
			`c.toml:2: workers.count: must be an integer, got string "four"`,
			`c.toml:3: workers.timeout: "soon" is not a duration (write e.g. "45m", "10s" or "2h")`,
			"c.toml:4: workers.max_checkpoints: must not be negative, got -1",
			"c.toml:7: retry.max_attempts: must be at least 1, got 0",
			`c.toml:10: locks.ttl: must be positive, got "0s"`,
			"c.toml:12: gates[0].name: must be set",
			"c.toml:13: gates[0].command: must not be empty",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkErrors(t, tt.src, tt.want) })
	}
}

func TestUnknownKeys(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"typo", "[workers]\ncount = 4\ncout = 4\n",
			[]string{`c.toml:3: workers.cout: unknown key (did you mean "count"?)`}},
		{"wrong case", "[workers]\nCount = 4\n",
			[]string{`c.toml:2: workers.Count: unknown key (did you mean "count"?)`}},
		{"wrong case beside right case", "[workers]\ncount = 2\nCount = \"x\"\n",
			[]string{`c.toml:3: workers.Count: unknown key (did you mean "count"?)`}},
		{"nothing close", "[retry]\njitter = \"1s\"\n",
			[]string{"c.toml:2: retry.jitter: unknown key"}},
		{"top-level key", "# comment\nverbose = true\n",
			[]string{"c.toml:2: verbose: unknown key"}},
		{"unknown table reported once", "[wrokers]\ncount = 4\ntimeout = \"1m\"\n",
			[]string{`c.toml:1: wrokers: unknown table (did you mean "workers"?)`}},
		{"unknown table in wrong case", "[Workers]\ncount = 4\n",
			[]string{`c.toml:1: Workers: unknown table (did you mean "workers"?)`}},
		{"unknown table array", "[workers]\ncount = 2\n\n[[hooks]]\nrun = \"x\"\n",
			[]string{"c.toml:4: hooks[0]: unknown table"}},
		{"unknown subtable", "[sync]\nremote = \"origin\"\n[sync.extra]\nx = 1\n",
			[]string{"c.toml:3: sync.extra: unknown table"}},
		{"dotted key", "[workers]\nx.y = 1\n",
			[]string{"c.toml:2: workers.x.y: unknown key"}},
		{"in a later gate", "[[gates]]\nname = \"a\"\ncommand = \"x\"\n\n[[gates]]\nname = \"b\"\ncommand = \"y\"\nrequird = false\n",
			[]string{`c.toml:8: gates[1].requird: unknown key (did you mean "required"?)`}},
		{"in every gate", "[[gates]]\nname = \"a\"\ncommand = \"x\"\nenv = 1\n[[gates]]\nname = \"b\"\ncommand = \"y\"\nenv = 2\n", []string{
			"c.toml:4: gates[0].env: unknown key",
			"c.toml:8: gates[1].env: unknown key",
		}},
		{"in an inline gate", "gates = [{name = \"a\", command = \"x\"},\n {name = \"b\", command = \"y\", when = 1}]\n",
			[]string{"c.toml:2: gates[1].when: unknown key"}},
		{"after look-alike text in strings", "[workers]\ncommand = \"\"\"\ncout = 1\n\"\"\"\nimage = '''\ncout = 2'''\ncout = 3\n",
			[]string{`c.toml:7: workers.cout: unknown key (did you mean "count"?)`}},
		{"with bad values, in line order", "[workers]\ncout = 4\ncount = 0\n[extra]\n", []string{
			`c.toml:2: workers.cout: unknown key (did you mean "count"?)`,
			"c.toml:3: workers.count: must be at least 1, got 0",
			"c.toml:4: extra: unknown table",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkErrors(t, tt.src, tt.want) })
	}
}

func TestSyntaxErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // the message is the toml package's own
	}{
		{"missing value", "[workers]\ncount = 4\ntimeout =\n",
			`c.toml:3: workers.timeout: expected value but found '\n' instead`},
		{"unclosed header", "[workers]\ncount = 4\n\n[retry\n",
			`c.toml:4: expected '.' or ']' to end table name, but got '\n' instead`},
		{"unclosed string", "[workers]\ncommand = \"claude\n",
			`c.toml:2: workers.command: strings cannot contain newlines`},
		{"duplicate key", "[workers]\ncount = 4\ncount = 5\n",
			`c.toml:3: workers.count: Key 'workers.count' has already been defined.`},
		{"duplicate table", "[workers]\ncount = 4\n[locks]\n[workers]\n",
			`c.toml:4: Key 'workers' has already been defined.`},
		{"unclosed array", "[workers]\ncount = [1,\n2\ntimeout = \"1m\"\n",
			`c.toml:4: expected a comma (',') or array terminator (']'), but got 't'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseErrors(t, tt.src)
			if len(got) != 1 || got[0] != tt.want {
				t.Fatalf("errors %q, want %q", got, tt.want)
			}
		})
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{File: "c.toml", Line: 3, Key: "workers.count", Msg: "bad"}, "c.toml:3: workers.count: bad"},
		{&Error{File: "c.toml", Key: "workers.count", Msg: "bad"}, "c.toml: workers.count: bad"},
		{&Error{File: "c.toml", Line: 3, Msg: "bad"}, "c.toml:3: bad"},
		{&Error{Msg: "bad"}, "bad"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	es := Errors{tests[0].err, tests[2].err}
	if got, want := es.Error(), "c.toml:3: workers.count: bad; c.toml:3: bad"; got != want {
		t.Errorf("Errors.Error() = %q, want %q", got, want)
	}
	var e *Error
	if !errors.As(error(es), &e) || e != tests[0].err {
		t.Error("errors.As does not reach the first *Error")
	}
}

func TestLoadUnreadable(t *testing.T) {
	// A directory where the file should be is not "missing": say so.
	dir := t.TempDir()
	if _, err := Load(dir); err == nil {
		t.Fatal("Load of a directory succeeded")
	}
}

func TestLoadReportsPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte("[workers]\ncount = 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || err.Error() != path+":2: workers.count: must be at least 1, got 0" {
		t.Fatalf("Load error = %v", err)
	}
}

func TestDurationText(t *testing.T) {
	var d Duration
	if err := d.UnmarshalText([]byte("1h30m")); err != nil || d != Duration(90*time.Minute) {
		t.Fatalf("UnmarshalText(1h30m) = %v, %v", d, err)
	}
	if err := d.UnmarshalText([]byte("soon")); err == nil {
		t.Fatal("UnmarshalText(soon) succeeded")
	}
	if b, _ := Duration(10 * time.Second).MarshalText(); string(b) != "10s" {
		t.Fatalf("MarshalText = %q", b)
	}
}

func TestKeyLines(t *testing.T) {
	src := `top = 1
[a]
s = """x
y = 1
"""
arr = [
  1, # ] not the end
  "]",
]
lit = 'it''s'
t = { u = 1, v = { w = 2 } }
d = 1979-05-27 07:32:00
[[g]]
k = 1
[g.sub]
m = 2
[[g]]
k = 3
"quoted key" = 4
`
	ix := indexKeys(src)
	want := map[string]int{
		"top": 1, "a": 2, "a.s": 3, "a.arr": 6, "a.lit": 10, "a.t": 11, "a.t.u": 11,
		"a.t.v.w": 11, "a.d": 12, "g[0]": 13, "g[0].k": 14, "g[0].sub": 15,
		"g[0].sub.m": 16, "g[1]": 17, "g[1].k": 18, `g[1]."quoted key"`: 19,
		"a.y":     2, // not a key: found at its table
		"nowhere": 0,
	}
	for path, line := range want {
		if got := ix.lineOf(path); got != line {
			t.Errorf("lineOf(%q) = %d, want %d", path, got, line)
		}
	}
}

// FuzzParse holds Parse to never panicking; to either a config or errors
// that each have a message and a place; to configs within their bounds;
// and to an accepted config reading back the same once written out. Its
// seeds run with every go test; go test -run=^$ -fuzz=FuzzParse -fuzztime=10s
// ./config/ explores further.
func FuzzParse(f *testing.F) {
	f.Add(Template)
	f.Add(fullFile)
	f.Add("gates = [{name = \"a\", command = \"x\", t = {u = [1, {v = 2}]}}]\n[workers.x]\n'q.r' = \"\"\"\n\"\"\"\"\n")
	f.Add("[workers]\ncount = 99999999999\n")
	f.Add("[workers]\ncount = 256\ntimeout = \"1ns\"\n[retry]\nbackoff = \"0s\"\n")
	f.Add("[[gates]]\nname = \"a\"\ncommand = \"x\"\nrequired = false\ntimeout = \"1h\"\n[[gates]]\nname = \"a\"\n")
	f.Fuzz(func(t *testing.T, src string) {
		c, err := parseConfig("f.toml", []byte(src))
		if (c == nil) == (err == nil) {
			t.Fatalf("Parse = %v, %v", c, err)
		}
		if err != nil {
			for _, e := range err.(Errors) {
				if e.Msg == "" || e.File != "f.toml" {
					t.Fatalf("bad error %#v", e)
				}
				if e.Line < 1 && e.Key == "" {
					t.Fatalf("error without a place: %#v", e)
				}
			}
			return
		}
		if w := c.Workers.Count; w < 1 || w > MaxWorkers {
			t.Fatalf("workers.count %d accepted", w)
		}
		if c.Workers.Timeout <= 0 || c.Retry.MaxAttempts < 1 || c.Retry.Backoff < 0 || c.Locks.TTL <= 0 || c.Workers.MaxCheckpoints < 0 {
			t.Fatalf("out-of-range value accepted: %+v", c)
		}
		var buf strings.Builder
		if err := toml.NewEncoder(&buf).Encode(c); err != nil {
			t.Fatalf("encode: %v", err)
		}
		again, err := parseConfig("f.toml", []byte(buf.String()))
		if err != nil {
			t.Fatalf("written config does not read back: %v\n%s", err, buf.String())
		}
		if !reflect.DeepEqual(c, again) {
			t.Fatalf("read back differently:\n%+v\n%+v\n%s", c, again, buf.String())
		}
	})
}
