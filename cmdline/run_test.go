package cmdline

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestRunUnknown(t *testing.T) {
	for _, c := range []struct {
		args []string
		want *Unknown
	}{
		{[]string{"prog", "stauts"}, &Unknown{Name: "stauts", Suggestion: "; did you mean status?"}},
		{[]string{"prog", "zzzzzz"}, &Unknown{Name: "zzzzzz"}},
		{[]string{"prog", "hooks", "instal"}, &Unknown{Name: "instal", Parent: "hooks", Suggestion: "; did you mean install?"}},
		{[]string{"prog", "status"}, nil},
	} {
		app := testApp()
		app.Writer, app.ErrWriter = io.Discard, io.Discard
		ran := ""
		app.Commands[len(app.Commands)-1].Action = func(c *cli.Context) error { ran = c.Command.Name; return nil }
		u, err := Run(context.Background(), app, c.args)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		switch {
		case c.want == nil && (u != nil || ran != "status"):
			t.Errorf("%q: unknown %+v, ran %q", c.args, u, ran)
		case c.want != nil && (u == nil || *u != *c.want):
			t.Errorf("%q: %+v, want %+v", c.args, u, c.want)
		}
	}
}

func TestUnknownMessage(t *testing.T) {
	what, hint := (&Unknown{Name: "stauts", Suggestion: "; did you mean status?"}).Message("prog")
	if what != `unknown command "stauts"; did you mean status?` || hint != "prog help lists the commands" {
		t.Errorf("top level: %q, %q", what, hint)
	}
	what, hint = (&Unknown{Name: "x", Parent: "hooks"}).Message("prog")
	if what != `hooks: unknown command "x"` || hint != "prog help hooks lists its commands" {
		t.Errorf("subcommand: %q, %q", what, hint)
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.Create(t.TempDir() + "/f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) || IsTerminal(&strings.Builder{}) {
		t.Fatal("a file or a buffer taken for a terminal")
	}
}

func TestYes(t *testing.T) {
	for in, want := range map[string]bool{"y\n": true, " YES \n": true, "yes": true, "n\n": false, "": false, "yess\n": false, "\ny\n": false} {
		if got := Yes(strings.NewReader(in)); got != want {
			t.Errorf("Yes(%q) = %v", in, got)
		}
	}
}
