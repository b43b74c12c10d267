package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/hooks"
)

// The hooks record says whether this repository meant to have git-zerg's
// hooks: install writes "installed <dir>", uninstall "uninstalled". Only a
// repository that meant to have them is warned when git would not run them;
// one that never installed them, or removed them on purpose, is left in
// peace. Reading it costs one small file, so the warning's git processes
// are spent only where the answer matters.
const (
	hooksInstalled   = "installed"
	hooksUninstalled = "uninstalled"
)

func hooksRecordPath(s *gitstore.Store) string { return filepath.Join(s.ZergDir(), "hooks") }

func writeHooksRecord(s *gitstore.Store, what, dir string) error {
	line := what
	if dir != "" {
		line += " " + dir
	}
	name := hooksRecordPath(s)
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, []byte(line+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

// hooksWanted reports whether git-zerg's hooks were installed here and not
// uninstalled since. A repository whose hooks an older git-zerg installed
// has no record; its hooks in the shared default directory stand for one.
func hooksWanted(s *gitstore.Store) bool {
	b, err := os.ReadFile(hooksRecordPath(s))
	switch {
	case err == nil:
		return bytes.HasPrefix(b, []byte(hooksInstalled))
	case !errors.Is(err, fs.ErrNotExist):
		return false
	}
	hs, err := hooks.Status(filepath.Join(s.CommonDir, "hooks"))
	if err != nil {
		return false
	}
	for _, h := range hs {
		if h.State == hooks.Installed {
			return true
		}
	}
	return false
}

// startHooksWarning starts working out the hooks warning (a git process)
// while the caller does its own work; the function it returns
// waits for the answer: "" when there is nothing to say, or when it cannot
// be told (a warning never fails a command).
func (e *env) startHooksWarning(s *gitstore.Store) func() string {
	if s == nil || !hooksWanted(s) {
		return func() string { return "" }
	}
	ch := make(chan string, 1)
	go func() {
		w, err := hooks.WarningIn(e.ctx, gitIn(s), s.CommonDir)
		if err != nil {
			w = ""
		}
		ch <- w
	}()
	return func() string { return <-ch }
}

// printHooksWarning prints the warning line, when there is one, on stderr:
// stdout may be a JSON document.
func (e *env) printHooksWarning(w string) {
	if w != "" {
		fmt.Fprintf(e.stderr, "warning: %s\n", w)
	}
}
