package cmdline

import (
	"errors"
	"io"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func testApp() *cli.App {
	return &cli.App{
		Name:  "prog",
		Flags: []cli.Flag{&cli.StringFlag{Name: "C"}, &cli.BoolFlag{Name: "json"}},
		Commands: []*cli.Command{
			{Name: "claim", Flags: []cli.Flag{&cli.StringFlag{Name: "worker", Aliases: []string{"w"}}, &cli.BoolFlag{Name: "force"}}},
			{Name: "hooks", Subcommands: []*cli.Command{{Name: "install", Flags: []cli.Flag{&cli.StringFlag{Name: "dir"}}}}},
			{Name: "raw", SkipFlagParsing: true},
			{Name: "secret", Hidden: true},
			{Name: "status"},
		},
	}
}

func TestReorder(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"prog"}, []string{"prog"}},
		{[]string{"prog", "-C", "dir"}, []string{"prog", "-C", "dir"}},
		{[]string{"prog", "claim", "T1", "--worker", "w1"}, []string{"prog", "claim", "--worker", "w1", "--", "T1"}},
		{[]string{"prog", "-C", "d", "claim", "T1", "-w=w1", "--force"}, []string{"prog", "-C", "d", "claim", "-w=w1", "--force", "--", "T1"}},
		{[]string{"prog", "claim", "T1", "--", "--force"}, []string{"prog", "claim", "--", "T1", "--", "--force"}},
		{[]string{"prog", "claim", "--", "-x"}, []string{"prog", "claim", "--", "-x"}},
		{[]string{"prog", "hooks", "install", "x", "--dir", "d"}, []string{"prog", "hooks", "install", "--dir", "d", "--", "x"}},
		{[]string{"prog", "raw", "a", "--b"}, []string{"prog", "raw", "a", "--b"}},
		{[]string{"prog", "nope", "a", "--b"}, []string{"prog", "nope", "a", "--b"}},
		{[]string{"prog", "claim", "-"}, []string{"prog", "claim", "--", "-"}},
	} {
		if got := Reorder(testApp(), c.in); !slices.Equal(got, c.want) {
			t.Errorf("Reorder(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSuggestions(t *testing.T) {
	app := testApp()
	flags := app.Commands[0].Flags
	if got := FlagSuggestion(errors.New("flag provided but not defined: -wroker"), flags); got != "; did you mean --worker?" {
		t.Errorf("flag: %q", got)
	}
	if got := FlagSuggestion(errors.New("flag needs an argument: -worker"), flags); got != "" {
		t.Errorf("not an unknown flag: %q", got)
	}
	if got := commandSuggestion("stauts", app.Commands); got != "; did you mean status?" {
		t.Errorf("command: %q", got)
	}
	if got := commandSuggestion("secrte", app.Commands); got != "" {
		t.Errorf("a hidden command was suggested: %q", got)
	}
}

func TestLongFlags(t *testing.T) {
	for in, want := range map[string]string{
		"flag provided but not defined: -wrkers": "flag provided but not defined: --wrkers",
		"invalid value \"x\" for flag -ttl: bad": "invalid value \"x\" for flag --ttl: bad",
		"a-b stays":                              "a-b stays",
	} {
		if got := LongFlags(in); got != want {
			t.Errorf("LongFlags(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestVersion(t *testing.T) {
	set := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	for _, c := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
		{debug.BuildInfo{Settings: set("vcs.revision", "0123456789abcdef")}, "devel 0123456789ab"},
		{debug.BuildInfo{Settings: set("vcs.revision", "abc", "vcs.modified", "true")}, "devel abc+changes"},
	} {
		if got := version(&c.bi); got != c.want {
			t.Errorf("version(%+v) = %q, want %q", c.bi, got, c.want)
		}
	}
}

func TestCommandName(t *testing.T) {
	for args, want := range map[string]string{"prog hooks install": "hooks install", "prog claim": "claim"} {
		app := testApp()
		app.Writer, app.ErrWriter = io.Discard, io.Discard
		got := ""
		set := func(c *cli.Context) error { got = CommandName(c); return nil }
		app.Commands[0].Action = set
		app.Commands[1].Subcommands[0].Action = set
		if err := app.Run(strings.Fields(args)); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", args, got, err, want)
		}
	}
}
