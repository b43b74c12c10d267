package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitstore"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or writes it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", filepath.FromSlash(name))
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./claude/ -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./claude/ -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// goldenName is where the golden copy of a generated file is kept: not
// under a .claude directory, which Claude Code might take for its own.
func goldenName(path string) string {
	return "install/" + strings.TrimPrefix(path, ".")
}

// tree reads every file under dir, by slash path.
func tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	return out
}

// TestInstallGolden: what install-commands writes into a repository with no
// .claude/ at all, file by file. A template that changes fails here until
// the hash of its old version is in previous (so that install still
// recognises installed copies of it as git-zerg's) and -update is run.
func TestInstallGolden(t *testing.T) {
	top := t.TempDir()
	changes, err := installTree(top)
	if err != nil {
		t.Fatal(err)
	}
	got := tree(t, top)
	if len(got) != len(hookFiles())+1 {
		t.Errorf("install wrote %d files, want %d", len(got), len(hookFiles())+1)
	}
	for path, data := range got {
		if !*update {
			old, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(goldenName(path))))
			if err == nil && !bytes.Equal(old, data) && path != settingsPath {
				f := File{Path: path}
				if !f.ours(old) {
					t.Errorf("%s changed: add %q to previous[%q] (so installed copies of the old version are still git-zerg's), then run -update", path, sum(old), path)
				}
			}
		}
		golden(t, goldenName(path), data)
	}
	var lines []string
	for _, c := range changes {
		lines = append(lines, c.String())
	}
	golden(t, "install.changes", []byte(strings.Join(lines, "\n")+"\n"))

	// Twice changes nothing.
	again, err := installTree(top)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range again {
		if c.Action != "unchanged" {
			t.Errorf("second install: %s", c)
		}
	}
	if after := tree(t, top); !reflect.DeepEqual(after, got) {
		t.Error("second install changed files")
	}

	// Uninstall leaves nothing behind, not even the directories.
	if _, err := uninstallHooks(top); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(top); len(ents) != 0 {
		t.Errorf("uninstall left %v", ents)
	}
}

// TestSettingsGolden merges the hooks into existing settings files:
// testdata/settings/NAME.json gives NAME.merged.json and, after uninstall,
// NAME.uninstalled.json.
func TestSettingsGolden(t *testing.T) {
	for _, name := range []string{"full", "ours-in-group", "empty", "none"} {
		t.Run(name, func(t *testing.T) {
			top := t.TempDir()
			settings := filepath.Join(top, ".claude", "settings.json")
			var orig []byte
			if name != "none" {
				var err error
				if orig, err = os.ReadFile(filepath.Join("testdata", "settings", name+".json")); err != nil {
					t.Fatal(err)
				}
				os.MkdirAll(filepath.Dir(settings), 0o755)
				os.WriteFile(settings, orig, 0o600)
			}
			if _, err := installTree(top); err != nil {
				t.Fatal(err)
			}
			merged, err := os.ReadFile(settings)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "settings/"+name+".merged.json", merged)
			if fi, _ := os.Stat(settings); name != "none" && fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want the file's own 0600", fi.Mode().Perm())
			}
			if orig != nil {
				checkKept(t, orig, merged)
			}
			if _, err := installTree(top); err != nil {
				t.Fatal(err)
			}
			if again, _ := os.ReadFile(settings); !bytes.Equal(again, merged) {
				t.Errorf("second install changed the settings:\n%s", again)
			}
			if _, err := uninstallHooks(top); err != nil {
				t.Fatal(err)
			}
			after, err := os.ReadFile(settings)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				golden(t, "settings/"+name+".uninstalled.json", []byte("(removed: nothing else was in it)\n"))
				return
			case err != nil:
				t.Fatal(err)
			}
			golden(t, "settings/"+name+".uninstalled.json", after)
			if orig != nil && after != nil && !bytes.Contains(orig, []byte("git zerg hook")) {
				// Uninstall takes out exactly what install put in.
				if !reflect.DeepEqual(decode(t, after), decode(t, orig)) {
					t.Errorf("uninstall did not restore the settings:\n%s", after)
				}
				if !reflect.DeepEqual(topKeys(t, after), topKeys(t, orig)) {
					t.Errorf("key order changed: %v, want %v", topKeys(t, after), topKeys(t, orig))
				}
			}
		})
	}
}

// checkKept: merged holds everything orig held, keys in the same order,
// every earlier hook group first and unchanged, ours after them.
func checkKept(t *testing.T, orig, merged []byte) {
	t.Helper()
	o, m := decode(t, orig), decode(t, merged)
	for k, v := range o {
		if k == "hooks" {
			continue
		}
		if !reflect.DeepEqual(m[k], v) {
			t.Errorf("key %q: %v, want %v", k, m[k], v)
		}
	}
	ok, mk := topKeys(t, orig), topKeys(t, merged)
	if len(mk) < len(ok) || strings.Join(mk[:len(ok)], ",") != strings.Join(ok, ",") {
		t.Errorf("top-level keys %v, want %v first", mk, ok)
	}
	oh, _ := o["hooks"].(map[string]any)
	mh, _ := m["hooks"].(map[string]any)
	for event, groups := range oh {
		og, isList := groups.([]any)
		if !isList {
			if !reflect.DeepEqual(mh[event], groups) {
				t.Errorf("hooks.%s changed", event)
			}
			continue
		}
		mg, _ := mh[event].([]any)
		if len(mg) < len(og) || !reflect.DeepEqual(mg[:len(og)], og) {
			t.Errorf("hooks.%s: the groups already there changed:\n%v\nwant first\n%v", event, mg, og)
		}
	}
	for _, h := range Hooks {
		found := false
		for _, g := range mh[h.Event].([]any) {
			b, _ := json.Marshal(g)
			var hg hookGroup
			json.Unmarshal(b, &hg)
			if hg.has(h.Command) && (h.Matcher == "" || hg.Matcher == h.Matcher) {
				found = true
			}
		}
		if !found {
			t.Errorf("hook %s %q missing", h.Event, h.Command)
		}
	}
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v:\n%s", err, b)
	}
	return v
}

func topKeys(t *testing.T, b []byte) []string {
	t.Helper()
	o, err := parseObject(b, "test")
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for _, m := range o {
		ks = append(ks, m.key)
	}
	return ks
}

// TestSettingsRefused: a settings file git-zerg cannot merge into is an
// error, and nothing at all is written.
func TestSettingsRefused(t *testing.T) {
	for _, name := range []string{"invalid", "hooks-array", "stop-object"} {
		t.Run(name, func(t *testing.T) {
			top := t.TempDir()
			orig, err := os.ReadFile(filepath.Join("testdata", "settings", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			settings := filepath.Join(top, ".claude", "settings.json")
			os.MkdirAll(filepath.Dir(settings), 0o755)
			os.WriteFile(settings, orig, 0o644)
			if _, err := installTree(top); !errors.Is(err, errSettings) {
				t.Fatalf("install: %v, want ErrSettings", err)
			}
			if _, err := uninstallHooks(top); !errors.Is(err, errSettings) {
				t.Fatalf("uninstall: %v, want ErrSettings", err)
			}
			var ee *engine.Error
			if _, err := InstallIn(&gitstore.Store{Top: top}, false); !errors.As(err, &ee) || ee.Kind != engine.Usage || !errors.Is(err, errSettings) {
				t.Fatalf("InstallIn: %v, want a usage error", err)
			}
			if got := tree(t, top); len(got) != 1 || !bytes.Equal(got[settingsPath], orig) {
				t.Errorf("files changed: %v", got)
			}
		})
	}
}

// TestInstallInBare: a bare repository has no work tree to install in.
func TestInstallInBare(t *testing.T) {
	var ee *engine.Error
	if _, err := InstallIn(&gitstore.Store{}, false); !errors.As(err, &ee) || ee.Kind != engine.Usage {
		t.Fatalf("InstallIn: %v, want a usage error", err)
	}
}

// TestChangedFilesKept: a generated file someone edited is neither
// replaced by install nor removed by uninstall; an earlier version of
// git-zerg's own is replaced.
func TestChangedFilesKept(t *testing.T) {
	top := t.TempDir()
	if _, err := installTree(top); err != nil {
		t.Fatal(err)
	}
	rush := filepath.Join(top, ".claude", "commands", "zerg", "rush.md")
	edited := []byte("my own rush\n")
	os.WriteFile(rush, edited, 0o644)
	changes, err := installTree(top)
	if err != nil {
		t.Fatal(err)
	}
	if !hasChange(changes, ".claude/commands/zerg/rush.md", "kept") {
		t.Errorf("install: %v", changes)
	}
	if b, _ := os.ReadFile(rush); !bytes.Equal(b, edited) {
		t.Error("install replaced an edited file")
	}
	changes, err = uninstallHooks(top)
	if err != nil {
		t.Fatal(err)
	}
	if !hasChange(changes, ".claude/commands/zerg/rush.md", "kept") || !hasChange(changes, ".claude/commands/zerg/status.md", "removed") {
		t.Errorf("uninstall: %v", changes)
	}
	if b, _ := os.ReadFile(rush); !bytes.Equal(b, edited) {
		t.Error("uninstall removed an edited file")
	}
	if _, err := os.Stat(filepath.Join(top, settingsPath)); !errors.Is(err, fs.ErrNotExist) {
		t.Error("settings with only our hooks still there")
	}

	// An earlier version of ours is replaced.
	old := []byte("git-zerg's rush, version 0\n")
	previous[".claude/commands/zerg/rush.md"] = []string{sum(old)}
	defer delete(previous, ".claude/commands/zerg/rush.md")
	os.WriteFile(rush, old, 0o644)
	changes, err = installTree(top)
	if err != nil {
		t.Fatal(err)
	}
	if !hasChange(changes, ".claude/commands/zerg/rush.md", "updated") {
		t.Errorf("install over an old version: %v", changes)
	}
}

func hasChange(cs []Change, path, action string) bool {
	for _, c := range cs {
		if c.Path == path && c.Action == action {
			return true
		}
	}
	return false
}

// TestRushTemplate: /zerg:rush drives the loop with git-zerg's verbs only,
// the ones the end-to-end script (testdata/script/claude_rush_e2e.txtar)
// runs, and it takes $ARGUMENTS.
func TestRushTemplate(t *testing.T) {
	var rush string
	for _, f := range hookFiles() {
		if f.Path == ".claude/commands/zerg/rush.md" {
			rush = string(f.Data)
		}
	}
	for _, want := range []string{
		"$ARGUMENTS",
		"git zerg rush --mode <mode>",
		"git zerg rush --mode task --json",
		"git zerg claim --worker <suggested_worker> <id>",
		"all in one message",
		"ZERG_WORKER=<worker>",
		"git zerg done --worker <worker> <id>",
		"git zerg fail --worker <worker> --reason",
		"git zerg release --worker <worker> <id>",
		"git zerg hook claude-gates",
		"git zerg status",
		"--resume",
		"attempts` is below 2",
	} {
		if !strings.Contains(rush, want) {
			t.Errorf("rush.md lacks %q", want)
		}
	}
	if !strings.Contains(rush, "attempts` is below 2") || TaskModeAttempts != 2 {
		t.Error("rush.md and the Stop hook disagree on how often a task is tried")
	}
}
