package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/cmdline"
)

func commands(e *env) []*cli.Command {
	return []*cli.Command{
		validateCmd(e),
		schemaCmd(e),
		planCmd(e),
		epicCmd(e),
		useCmd(e),
		featuresCmd(e),
		statusCmd(e),
		doctorCmd(e),
		watchCmd(e),
		serveCmd(e),
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
		logsCmd(e),
		fsckCmd(e),
		exportCmd(e),
		rushCmd(e),
		demoCmd(e),
		cleanupCmd(e),
		finishCmd(e),
		syncCmd(e),
		shipCmd(e),
		demoWorkerCmd(e),
		mergeCmd(e),
		gatesCmd(e),
		initCmd(e),
		hooksCmd(e),
		withClaudeHooks(e, hookCmd(e)),
		installCommandsCmd(e),
		manCmd(e),
		installManCmd(e),
		completionCmd(e),
		completeCmd(e),
	}
}

// args checks the number of arguments: at least min, at most max (-1: any).
func args(c *cli.Context, min, max int) ([]string, error) {
	a := c.Args().Slice()
	name := cmdline.CommandName(c)
	usage := strings.TrimSpace("usage: git zerg " + name + " " + c.Command.ArgsUsage)
	switch {
	case len(a) < min:
		return nil, &cliError{code: exitUsage, what: fmt.Sprintf("%s: missing argument", name), hint: usage}
	case max >= 0 && len(a) > max:
		return nil, &cliError{code: exitUsage, what: fmt.Sprintf("%s: unexpected argument %q", name, a[max]), hint: usage}
	}
	return a, nil
}
