// Package claude is git-zerg's agent-driven mode for Claude Code: the slash
// commands and subagent that install-commands writes under .claude/, the
// merge of git-zerg's hooks into .claude/settings.json, the PreToolUse hook
// on Bash commands (whose checks are package claude/guard's) and the
// decision of the Stop hook.
//
// Its rules (the Stop decision, the settings merge, and the guard's in
// claude/guard) touch no git: files in, files out; values in, decisions
// out. The hooks feed them what the repository says.
package claude

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/engine/setup"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/worktree"
)

//go:embed templates/*
var templates embed.FS

// settingsPath is where the hooks go, relative to the work tree's top.
const settingsPath = ".claude/settings.json"

// File is one file install-commands writes.
type File struct {
	Path string // relative to the work tree's top, slash-separated
	Data []byte
}

// hookFiles returns the generated files, sorted by path: the slash commands
// under .claude/commands/zerg/ and the worker subagent under .claude/agents/.
func hookFiles() []File {
	var out []File
	err := fs.WalkDir(templates, "templates", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := templates.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, File{Path: ".claude/" + strings.TrimPrefix(p, "templates/"), Data: data})
		return nil
	})
	if err != nil {
		panic(err) // embedded
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// previous holds the sha256 of every earlier released version of each
// generated file: such a file is still git-zerg's own, so install replaces
// it and uninstall removes it. When a template changes, add the hash of its
// old content here.
var previous = map[string][]string{}

func sum(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// ours reports whether data is a version of f that git-zerg wrote.
func (f File) ours(data []byte) bool {
	if bytes.Equal(data, f.Data) {
		return true
	}
	s := sum(data)
	for _, p := range previous[f.Path] {
		if p == s {
			return true
		}
	}
	return false
}

// Change is one thing install or uninstall did (or deliberately did not do).
type Change struct {
	Path   string `json:"path"`
	Action string `json:"action"` // wrote, updated, unchanged, kept, merged, removed
	Note   string `json:"note,omitempty"`
}

// Wrote reports whether the changes put something new in place (wrote or
// merged): then .claude/ has something to commit.
func Wrote(cs []Change) bool {
	for _, c := range cs {
		if c.Action == "wrote" || c.Action == "merged" {
			return true
		}
	}
	return false
}

func (c Change) String() string {
	s := c.Action + " " + c.Path
	if c.Note != "" {
		s += " (" + c.Note + ")"
	}
	return s
}

// installTree writes the generated files under top and merges the hooks into
// its .claude/settings.json. A file already there is replaced only when it
// is an earlier version of git-zerg's own; a file changed by someone is
// kept and reported. Running it again changes nothing. A settings file
// that cannot be merged is an error (ErrSettings) and nothing is written.
func installTree(top string) ([]Change, error) {
	if err := checkUnlinked(top); err != nil {
		return nil, err
	}
	settings := filepath.Join(top, filepath.FromSlash(settingsPath))
	old, err := readIfExists(settings)
	if err != nil {
		return nil, err
	}
	merged, changed, err := mergeSettings(old)
	if err != nil {
		return nil, err
	}
	var out []Change
	for _, f := range hookFiles() {
		name := filepath.Join(top, filepath.FromSlash(f.Path))
		cur, err := os.ReadFile(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := writeAtomic(top, f.Path, f.Data); err != nil {
				return out, err
			}
			out = append(out, Change{f.Path, "wrote", ""})
		case err != nil:
			return out, err
		case bytes.Equal(cur, f.Data):
			out = append(out, Change{f.Path, "unchanged", ""})
		case f.ours(cur):
			if err := writeAtomic(top, f.Path, f.Data); err != nil {
				return out, err
			}
			out = append(out, Change{f.Path, "updated", "from an earlier git-zerg"})
		default:
			out = append(out, Change{f.Path, "kept", "changed by someone: move it away and install again to get git-zerg's version"})
		}
	}
	if changed {
		if err := writeAtomic(top, settingsPath, merged); err != nil {
			return out, err
		}
		out = append(out, Change{settingsPath, "merged", "git-zerg's Stop and PreToolUse hooks; everything else kept"})
	} else {
		out = append(out, Change{settingsPath, "unchanged", "git-zerg's hooks are there"})
	}
	return out, nil
}

// uninstallHooks takes out what Install put in: the generated files that are
// still as git-zerg wrote them (a changed one is kept and reported), and
// git-zerg's hook entries from the settings (nothing else of it). A
// settings file left with nothing in it is removed, and so are directories
// left empty.
func uninstallHooks(top string) ([]Change, error) {
	if err := checkUnlinked(top); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(top)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	settings := filepath.Join(top, filepath.FromSlash(settingsPath))
	old, err := readIfExists(settings)
	if err != nil {
		return nil, err
	}
	var unmerged []byte
	var changed, empty bool
	if old != nil {
		if unmerged, changed, empty, err = unmergeSettings(old); err != nil {
			return nil, err
		}
	}
	var out []Change
	dirs := map[string]bool{}
	for _, f := range hookFiles() {
		name := filepath.Join(top, filepath.FromSlash(f.Path))
		cur, err := os.ReadFile(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return out, err
		case f.ours(cur):
			if err := root.Remove(filepath.FromSlash(f.Path)); err != nil {
				return out, err
			}
			out = append(out, Change{f.Path, "removed", ""})
			for d := path.Dir(f.Path); d != "." && d != ".claude"; d = path.Dir(d) {
				dirs[d] = true
			}
		default:
			out = append(out, Change{f.Path, "kept", "changed since install-commands wrote it"})
		}
	}
	switch {
	case changed && empty:
		if err := root.Remove(filepath.FromSlash(settingsPath)); err != nil {
			return out, err
		}
		out = append(out, Change{settingsPath, "removed", "it held only git-zerg's hooks"})
	case changed:
		if err := writeAtomic(top, settingsPath, unmerged); err != nil {
			return out, err
		}
		out = append(out, Change{settingsPath, "unmerged", "git-zerg's hooks taken out; everything else kept"})
	}
	// Directories left empty, deepest first; .claude itself too.
	var ds []string
	for d := range dirs {
		ds = append(ds, d)
	}
	sort.Slice(ds, func(i, j int) bool { return len(ds[i]) > len(ds[j]) })
	for _, d := range append(ds, ".claude") {
		root.Remove(filepath.FromSlash(d)) // only succeeds when empty
	}
	return out, nil
}

func readIfExists(name string) ([]byte, error) {
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// checkUnlinked refuses, before anything is written, an install or
// uninstall whose files would be written or removed through a symbolic link
// (setup.CheckUnlinked says why any link is refused).
func checkUnlinked(top string) error {
	names := []string{settingsPath}
	for _, f := range hookFiles() {
		names = append(names, f.Path)
	}
	return setup.CheckUnlinked("install-commands", top, names...)
}

// writeAtomic replaces the file at rel (slash-separated) under top with
// data, keeping the mode of the file it replaces. worktree.WriteFile
// follows no symbolic link, so a link put in place since checkUnlinked
// fails the write instead of leading it out of the work tree.
func writeAtomic(top, rel string, data []byte) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Lstat(filepath.Join(top, filepath.FromSlash(rel))); err == nil {
		mode = fi.Mode().Perm()
	}
	return worktree.WriteFile(top, rel, data, mode)
}

// InstallIn installs the agent-driven mode in the work tree of s, or takes
// it out. A bare repository has no tree to put it in, and a settings file
// that cannot be merged must be fixed by hand first: both are usage
// errors, and nothing is written.
func InstallIn(s *gitstore.Store, uninstall bool) ([]Change, error) {
	if s.Top == "" {
		return nil, &engine.Error{Kind: engine.Usage, What: "install-commands needs a work tree (this is a bare repository)"}
	}
	do := installTree
	if uninstall {
		do = uninstallHooks
	}
	changes, err := do(s.Top)
	if errors.Is(err, errSettings) {
		return nil, &engine.Error{Kind: engine.Usage, What: "install-commands: nothing written", Why: err.Error(),
			Hint: "fix .claude/settings.json (Claude Code reads it as one JSON object), then run it again", Err: err}
	}
	return changes, err
}
