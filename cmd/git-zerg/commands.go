package main

import (
	"fmt"
	"sort"

	"github.com/urfave/cli/v2"
)

func commands(e *env) []*cli.Command {
	return []*cli.Command{
		validateCmd(e),
		planCmd(e),
		useCmd(e),
		featuresCmd(e),
		statusCmd(e),
		dagCmd(e),
		nextCmd(e),
		claimCmd(e),
		heartbeatCmd(e),
		releaseCmd(e),
		doneCmd(e),
		failCmd(e),
		retryCmd(e),
		approveCmd(e),
		lockCmd(e),
		unlockCmd(e),
		locksCmd(e),
		logCmd(e),
		fsckCmd(e),
		exportCmd(e),
		rushCmd(e),
		demoCmd(e),
		cleanupCmd(e),
		syncCmd(e),
		demoWorkerCmd(e),
		mergeCmd(e),
		gatesCmd(e),
		initCmd(e),
		hooksCmd(e),
		withClaudeHooks(e, hookCmd(e)),
		installCommandsCmd(e),
		manCmd(e),
		completionCmd(e),
		completeCmd(e),
	}
}

// args checks the number of arguments: at least min, at most max (-1: any).
func args(c *cli.Context, min, max int) ([]string, error) {
	a := c.Args().Slice()
	switch {
	case len(a) < min:
		return nil, &cliError{code: exitUsage, what: fmt.Sprintf("%s: missing argument", c.Command.Name),
			hint: "usage: git zerg " + c.Command.Name + " " + c.Command.ArgsUsage}
	case max >= 0 && len(a) > max:
		return nil, &cliError{code: exitUsage, what: fmt.Sprintf("%s: unexpected argument %q", c.Command.Name, a[max]),
			hint: "usage: git zerg " + c.Command.Name + " " + c.Command.ArgsUsage}
	}
	return a, nil
}

func sortStrings(s []string) { sort.Strings(s) }
