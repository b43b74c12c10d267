package main

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/manual"
)

type installManOptions struct{ dir string }

func installManCmd(e *env) *cli.Command {
	var o installManOptions
	return &cli.Command{
		Name:  "install-man",
		Usage: "install the man page, so that git zerg --help opens it",
		Description: "Writes git-zerg.1 under the prefix of the git-zerg found on PATH:\n" +
			"<prefix>/bin/git-zerg → <prefix>/share/man/man1/git-zerg.1, where man finds it\n" +
			"without MANPATH. --dir DIR writes DIR/man1/git-zerg.1 instead. Running it again\n" +
			"replaces the page (after an upgrade). No repository needed.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "man directory `DIR` (the page goes to DIR/man1)", Destination: &o.dir},
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			return runInstallMan(e, c, &o)
		},
	}
}

func runInstallMan(e *env, c *cli.Context, o *installManOptions) error {
	dir := o.dir
	if dir == "" {
		// git runs the git-zerg on PATH, whatever runs now (`go run`, say).
		bin, err := exec.LookPath("git-zerg")
		if err != nil {
			return &cliError{code: exitUsage, what: "install-man: git-zerg is not on PATH", why: err.Error(),
				hint: "install it first (CGO_ENABLED=0 go install ./cmd/git-zerg puts it in $(go env GOPATH)/bin), or give --dir DIR"}
		}
		if bin, err = filepath.Abs(bin); err != nil {
			return err
		}
		dir = manual.Dir(bin)
	}
	path, err := manual.Install(c.App, dir, "git-zerg")
	var we *manual.WriteError
	switch {
	case errors.As(err, &we):
		return &cliError{code: exitFailed, what: "install-man: cannot write the man page", why: we.Error(),
			hint: "give a man directory you can write: --dir DIR (then add DIR to MANPATH)"}
	case err != nil:
		return err
	}
	fmt.Fprintf(e.stdout, "installed %s\n", path)
	// Say so when man would still not find it (MANPATH set without this
	// directory, a man that does not map PATH): --help would fail.
	if found, ok := manual.Finds("git-zerg"); ok && !manual.SameFile(found, path) {
		if found == "" {
			found = "nothing"
		}
		fmt.Fprintf(e.stderr, "warning: man finds %s, not this page: add %s to MANPATH\n", found, dir)
	}
	return nil
}
