package manual

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func testApp() *cli.App {
	return &cli.App{
		Name:  "git-x",
		Flags: []cli.Flag{&cli.StringFlag{Name: "C", Usage: "dir"}, &cli.StringFlag{Name: "feature", Aliases: []string{"f"}}},
		Commands: []*cli.Command{
			{Name: "claim", Usage: "claim a task", ArgsUsage: "TASK", Flags: []cli.Flag{
				&cli.StringFlag{Name: "mode", Usage: "how"}, &cli.BoolFlag{Name: "force", Usage: "even so"},
				&cli.BoolFlag{Name: "secret", Hidden: true}}},
			{Name: "hooks", Usage: "hooks", Subcommands: []*cli.Command{{Name: "install", Usage: "put them in"}}},
			{Name: "hidden", Hidden: true},
			{Name: "help", Usage: "help"},
		},
	}
}

func values(cs []Candidate) string {
	var v []string
	for _, c := range cs {
		v = append(v, c.Value)
	}
	return strings.Join(v, " ")
}

func TestComplete(t *testing.T) {
	var set []string
	src := Source{
		SetFlag: func(n, v string) { set = append(set, n+"="+v) },
		FlagValues: func(n string) []Candidate {
			if n == "mode" {
				return []Candidate{{"fast", ""}, {"slow", ""}}
			}
			return []Candidate{{"f1", "feature"}}
		},
		Args: func(c *cli.Command) []Candidate { return []Candidate{{"T1", "pending: " + c.Name}, {"T2", ""}} },
	}
	for _, c := range []struct {
		words []string
		cur   string
		want  string
	}{
		{nil, "", "claim hooks help"},
		{nil, "h", "hooks help"},
		{nil, "--", "--feature"},
		{nil, "-", "-C --feature -f"},
		{[]string{"-C", "d"}, "cl", "claim"},
		{[]string{"hooks"}, "", "install"},
		{[]string{"claim"}, "", "T1 T2"},
		{[]string{"claim"}, "--", "--mode --force"},
		{[]string{"claim", "--mode"}, "f", "fast"},
		{[]string{"claim"}, "--mode=s", "--mode=slow"},
		{[]string{"-f"}, "", "f1"},
		{[]string{"help"}, "c", "claim"},
		{[]string{"claim", "--"}, "-", "T1 T2"[:0]},
	} {
		if got := values(Complete(testApp(), src, c.words, c.cur)); got != c.want {
			t.Errorf("Complete(%q, %q) = %q, want %q", c.words, c.cur, got, c.want)
		}
	}
	set = nil
	Complete(testApp(), src, []string{"-C", "dir", "--feature=f2", "claim"}, "")
	if strings.Join(set, " ") != "C=dir feature=f2" {
		t.Errorf("flags set: %q", set)
	}
}

func TestProgramSource(t *testing.T) {
	src := Program{
		Values:      map[string][]string{"mode": {"fast", "slow"}},
		FeatureFlag: "feature",
		Features:    func() []string { return []string{"f1", "f2"} },
		Tasks:       func(cmd string) []Candidate { return []Candidate{{"T1", cmd}} },
		Completion:  "completion",
	}.Source()
	app := testApp()
	app.Commands = append(app.Commands,
		&cli.Command{Name: "completion", ArgsUsage: "bash|zsh|fish"},
		&cli.Command{Name: "switch", ArgsUsage: "FEATURE"})
	for _, c := range []struct {
		words []string
		cur   string
		want  string
	}{
		{[]string{"claim"}, "", "T1"},
		{[]string{"claim", "--mode"}, "", "fast slow"},
		{[]string{"--feature"}, "", "f1 f2"},
		{[]string{"switch"}, "f", "f1 f2"},
		{[]string{"completion"}, "", strings.Join(shells, " ")},
		{[]string{"hooks", "install"}, "", ""},
	} {
		if got := values(Complete(app, src, c.words, c.cur)); got != c.want {
			t.Errorf("Complete(%q, %q) = %q, want %q", c.words, c.cur, got, c.want)
		}
	}
}

func TestWrite(t *testing.T) {
	cands := []Candidate{{"a:b", "two\n words"}}
	for shell, want := range map[string]string{"zsh": "a\\:b:two words\n", "fish": "a:b\ttwo words\n", "bash": "a:b\n"} {
		var b strings.Builder
		Write(&b, shell, cands)
		if b.String() != want {
			t.Errorf("%s: %q, want %q", shell, b.String(), want)
		}
	}
}

func TestScript(t *testing.T) {
	for _, sh := range shells {
		s, ok := Script(sh, "x")
		if !ok || strings.Contains(s, "{{") || !strings.Contains(s, "git x __complete "+sh) {
			t.Errorf("%s: ok=%v\n%s", sh, ok, s)
		}
	}
	for _, sh := range []string{"", "tcsh", "../manual.go"} {
		if _, ok := Script(sh, "x"); ok {
			t.Errorf("a script for %q", sh)
		}
	}
}

func TestDir(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "bin", "git-x")
	if got := Dir(bin); got != filepath.Join(root, "share", "man") {
		t.Errorf("no man dir yet: %s", got)
	}
	if err := os.Mkdir(filepath.Join(root, "man"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := Dir(bin); got != filepath.Join(root, "man") {
		t.Errorf("<prefix>/man only: %s", got)
	}
	if err := os.MkdirAll(filepath.Join(root, "share", "man"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := Dir(bin); got != filepath.Join(root, "share", "man") {
		t.Errorf("both: %s", got)
	}
}

func TestInstall(t *testing.T) {
	dir := t.TempDir()
	path, err := Install(testApp(), dir, "git-x")
	if err != nil || path != filepath.Join(dir, "man1", "git-x.1") {
		t.Fatal(path, err)
	}
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), "claim a task") {
		t.Fatalf("%v\n%s", err, b)
	}
	if !SameFile(path, filepath.Join(dir, "man1", ".", "git-x.1")) || SameFile("", path) {
		t.Error("SameFile")
	}
	blocked := filepath.Join(dir, "file")
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var we *WriteError
	if _, err := Install(testApp(), blocked, "git-x"); err == nil || !errors.As(err, &we) {
		t.Fatalf("under a file: %v", err)
	}
}

func TestPage(t *testing.T) {
	app := testApp()
	app.Usage = "run things"
	app.Commands[0].Description = "First line,\nsame paragraph.\n\n  git x claim T1\n.dot at the start\n"
	app.Commands[0].Flags = append(app.Commands[0].Flags, &cli.StringFlag{Name: "worker", Usage: "claim as `NAME`"})
	page, err := Page(app)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		".TH GIT\\-X 1",
		"git\\-x \\- run things\n",
		".SS claim\n.nf\ngit zerg claim [flags] TASK\n.fi\n",
		"First line,\nsame paragraph.\n",
		".nf\n.RS 4\n  git x claim T1\n.RE\n.fi\n",
		"\\&.dot at the start\n",
		"\\fB\\-\\-worker\\fR \\fINAME\\fR\nclaim as NAME\n",
		"\\fB\\-\\-force\\fR\neven so\n",
		"\\fB\\-\\-feature\\fR, \\fB\\-f\\fR \\fIvalue\\fR\n",
		".SS \"hooks install\"\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	for _, not := range []string{"secret", "hidden"} {
		if strings.Contains(page, not) {
			t.Errorf("page shows hidden %q", not)
		}
	}
}
