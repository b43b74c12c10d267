package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
)

// git turns `git zerg --help` into `man git-zerg`, so the page must be
// where man looks. man-db adds, for each directory of PATH, the man
// directory of its prefix (<prefix>/bin → <prefix>/share/man, else
// <prefix>/man): installing the page under the prefix of the git-zerg that
// PATH finds needs no MANPATH and no root, `go install`'s GOPATH/bin
// included.

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

// manDirFor is the man directory man-db maps the directory of bin to.
func manDirFor(bin string) string {
	prefix := filepath.Dir(filepath.Dir(bin))
	if share := filepath.Join(prefix, "share", "man"); isDir(share) || !isDir(filepath.Join(prefix, "man")) {
		return share
	}
	return filepath.Join(prefix, "man")
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func runInstallMan(e *env, c *cli.Context, o *installManOptions) error {
	dir := o.dir
	if dir == "" {
		// The git-zerg git runs is the one on PATH, whatever runs now
		// (`go run`, say).
		bin, err := exec.LookPath("git-zerg")
		if err != nil {
			return &cliError{code: exitUsage, what: "install-man: git-zerg is not on PATH", why: err.Error(),
				hint: "install it first (go install ./cmd/git-zerg puts it in $(go env GOPATH)/bin), or give --dir DIR"}
		}
		if bin, err = filepath.Abs(bin); err != nil {
			return err
		}
		dir = manDirFor(bin)
	}
	page, err := c.App.ToManWithSection(1)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "man1", "git-zerg.1")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return &cliError{code: exitFailed, what: "install-man: cannot write the man page", why: err.Error(),
			hint: "give a man directory you can write: --dir DIR (then add DIR to MANPATH)"}
	}
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		return &cliError{code: exitFailed, what: "install-man: cannot write the man page", why: err.Error(),
			hint: "give a man directory you can write: --dir DIR (then add DIR to MANPATH)"}
	}
	fmt.Fprintf(e.stdout, "installed %s\n", path)
	// Say so when man would still not find it (MANPATH set without this
	// directory, a man that does not map PATH): --help would fail.
	if found, ok := manFinds(); ok && !samePathFile(found, path) {
		fmt.Fprintf(e.stderr, "warning: man finds %s, not this page: add %s to MANPATH\n", orNothing(found), dir)
	}
	return nil
}

// manFinds asks man where git-zerg's page is; ok is false when there is no
// man to ask.
func manFinds() (string, bool) {
	if _, err := exec.LookPath("man"); err != nil {
		return "", false
	}
	var out bytes.Buffer
	cmd := exec.Command("man", "-w", "git-zerg")
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			return "", false
		}
	}
	return strings.TrimSpace(strings.SplitN(out.String(), "\n", 2)[0]), true
}

func samePathFile(a, b string) bool {
	if a == "" {
		return false
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

func orNothing(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}
