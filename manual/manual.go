// Package manual builds a program's man page and shell completion from its
// urfave/cli command tree, and knows where man looks for a page.
//
// It serves a git subcommand git-NAME: git turns `git NAME --help` into
// `man git-NAME`, and git's own completion of bash, zsh and fish hands
// `git NAME ...` to a function the completion script of Script defines,
// which asks the program (`git NAME __complete SHELL WORD... CURRENT`) what
// fits.
package manual

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
)

// Dir is the man directory man-db maps the directory of the binary bin to.
// man-db adds, for each directory of PATH, the man directory of its prefix
// (<prefix>/bin → <prefix>/share/man, else <prefix>/man): a page installed
// there under the prefix of the binary PATH finds needs no MANPATH and no
// root, `go install`'s GOPATH/bin included.
func Dir(bin string) string {
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

// Install writes app's page as dir/man1/NAME.1 and returns its path.
func Install(app *cli.App, dir, name string) (string, error) {
	page, err := Page(app)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "man1", name+".1")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return path, &WriteError{err}
	}
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		return path, &WriteError{err}
	}
	return path, nil
}

// WriteError is a page that could not be written where it was asked.
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// Finds asks man where the page of name is ("" for nowhere); ok is false
// when there is no man to ask.
func Finds(name string) (string, bool) {
	if _, err := exec.LookPath("man"); err != nil {
		return "", false
	}
	var out bytes.Buffer
	cmd := exec.Command("man", "-w", name)
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			return "", false
		}
	}
	return strings.TrimSpace(strings.SplitN(out.String(), "\n", 2)[0]), true
}

// SameFile reports whether the paths a and b name one existing file.
func SameFile(a, b string) bool {
	if a == "" {
		return false
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}
