package hooks

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
)

// The hooks record says whether this repository meant to have git-zerg's
// hooks: install writes "installed <dir>", uninstall "uninstalled". Only a
// repository that meant to have them is warned when git would not run them;
// one that never installed them, or removed them on purpose, is left in
// peace. Reading it costs one small file, so the warning's git processes
// are spent only where the answer matters.
const (
	recordInstalled   = "installed"
	recordUninstalled = "uninstalled"
)

func recordPath(s *gitstore.Store) string { return s.Layout().Hooks() }

func writeRecord(s *gitstore.Store, what, dir string) error {
	line := what
	if dir != "" {
		line += " " + dir
	}
	name := recordPath(s)
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, []byte(line+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

// wanted reports whether git-zerg's hooks were installed here and not
// uninstalled since. A repository whose hooks an older git-zerg installed
// has no record; its hooks in the shared default directory stand for one.
func wanted(s *gitstore.Store) bool {
	b, err := os.ReadFile(recordPath(s))
	switch {
	case err == nil:
		return bytes.HasPrefix(b, []byte(recordInstalled))
	case !errors.Is(err, fs.ErrNotExist):
		return false
	}
	hs, err := Status(filepath.Join(s.CommonDir, "hooks"))
	return err == nil && installedAny(hs)
}

// StartWarning starts working out the hooks warning (WarningIn: a git
// process) while the caller does its own work; the function it returns
// waits for the answer: "" when there is nothing to say, when the hooks are
// not wanted here, or when it cannot be told (a warning never fails a
// command).
func StartWarning(ctx context.Context, s *gitstore.Store) func() string {
	if s == nil || !wanted(s) {
		return func() string { return "" }
	}
	ch := make(chan string, 1)
	go func() {
		w, err := warningIn(ctx, gitIn(s), s.CommonDir)
		if err != nil {
			w = ""
		}
		ch <- w
	}()
	return func() string { return <-ch }
}

// gitIn runs git in the store's repository, for what only git answers
// (where it looks for hooks).
func gitIn(s *gitstore.Store) *gitcmd.Runner { return &gitcmd.Runner{Dir: s.Dir()} }
