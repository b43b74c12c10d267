package cmdline

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
)

// Unknown is a command name the app does not have.
type Unknown struct {
	Name string
	// Parent is the command it was to be a subcommand of ("hooks" for
	// `hooks instal`), "" for a top-level one.
	Parent string
	// Suggestion is "; did you mean install?", or "".
	Suggestion string
}

// Message is the line that reports u and the hint under it; prog is how
// the program is run ("git zerg").
func (u *Unknown) Message(prog string) (what, hint string) {
	if u.Parent == "" {
		return fmt.Sprintf("unknown command %q", u.Name) + u.Suggestion, prog + " help lists the commands"
	}
	return fmt.Sprintf("%s: unknown command %q", u.Parent, u.Name) + u.Suggestion, prog + " help " + u.Parent + " lists its commands"
}

// Run runs app on args, flags after arguments honoured (Reorder). A
// command name the app does not have is returned as Unknown, for the
// caller to report, where urfave would print help.
func Run(ctx context.Context, app *cli.App, args []string) (*Unknown, error) {
	var u *Unknown
	among := app.Commands
	app.CommandNotFound = func(c *cli.Context, name string) {
		u = &Unknown{Name: name}
		// A subcommand's context names its parent.
		if c != nil && c.Command != nil && len(c.Command.Subcommands) > 0 && c.Command.Name != app.Name {
			u.Parent, among = c.Command.Name, c.Command.Subcommands
		}
	}
	err := app.RunContext(ctx, Reorder(app, args))
	if u != nil {
		u.Suggestion = commandSuggestion(u.Name, among)
	}
	return u, err
}

// IsTerminal reports whether w is a terminal that takes redrawn lines and
// colours: not a file or pipe, not TERM=dumb.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb"
}

// Yes reads one line of in and reports whether it answers yes ("y" or
// "yes", in any case); anything else, or nothing, is no.
func Yes(in io.Reader) bool {
	answer, _ := bufio.NewReader(in).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(answer))
	return a == "y" || a == "yes"
}
