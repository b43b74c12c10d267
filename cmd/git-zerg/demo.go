package main

import (
	"fmt"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/demo"
)

func demoCmd(e *env) *cli.Command {
	var workers int
	return &cli.Command{
		Name:      "demo",
		Usage:     "create a sample repository and run a real rush on it with a scripted worker",
		ArgsUsage: "[DIR]",
		Description: "DIR (default: a new directory under the system's temporary directory) must not exist\n" +
			"or be empty. The worker is git-zerg itself (`git zerg demo-worker`), writing the files each\n" +
			"task asks for; one task fails on its first attempt to show a retry. No AI account needed.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "workers", Aliases: []string{"n"}, Value: 3, Usage: "parallel workers", Destination: &workers},
		},
		Action: withArgs(0, 1, func(a []string) error { return runDemo(e, append(a, "")[0], workers) }),
	}
}

// demoWorkerCmd is the demo's scripted worker (package demo).
func demoWorkerCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:   "demo-worker",
		Usage:  "the demo's scripted worker (run by rush)",
		Hidden: true,
		Action: func(c *cli.Context) error { return demo.Work(e.stderr) },
	}
}

func runDemo(e *env, dir string, workers int) error {
	if workers < 1 {
		return usageErr("demo: --workers must be at least 1")
	}
	dir, err := demo.Setup(dir, workers)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "demo repository: %s\n\n", dir)
	sub := func(args ...string) int {
		return Main(append([]string{"git-zerg", "-C", dir}, args...), e.stdin, e.stdout, e.stderr)
	}
	if code := sub("plan"); code != 0 {
		return &cliError{code: code, what: "demo: plan failed"}
	}
	fmt.Fprintln(e.stderr)
	code := sub("rush", "--workers", strconv.Itoa(workers))
	fmt.Fprintln(e.stdout)
	sub("dag")
	fmt.Fprintf(e.stdout, "\nEverything is in git:\n")
	for _, c := range demo.Explore {
		fmt.Fprintf(e.stdout, "  (cd %s && %s)\n", dir, c)
	}
	if code != 0 {
		return &cliError{code: code, what: "demo: the rush did not complete"}
	}
	return nil
}
