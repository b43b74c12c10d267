package gitstore

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// layoutFiles is where each of Layout's files is, relative to .git/zerg,
// for feature "f", task "T1", attempt 2. A file that moves is lost to
// every clone that has it (a moved gates.key is a new key, refusing the
// state the old one sealed), so a move must be meant: it changes this list.
var layoutFiles = map[string][]string{
	"Key":            {"gates.key"},
	"HostID":         {"host-id"},
	"WriterLock":     {"writer.lock"},
	"CurrentFeature": {"feature"},
	"Hooks":          {"hooks"},
	"GitHooks":       {"githooks"},
	"GateGroup":      {"run/f/gates.pgid"},
	"InfoOrig":       {"info.orig"},
	"ReflogChecked":  {"reflog-checked/refs/zerg/features/f"},
	"DemoBinary":     {"bin/git-zerg"},
	"ClaudeSession":  {"claude/f"},
	"TaskCache":      {"cache/f.tasks"},
	"TaskCacheDelta": {"cache/f.delta.tasks"},
	"WorkersCache":   {"cache/f.workers"},
	"Index":          {"cache/f.index"},
	"IndexDelta":     {"cache/f.index-delta"},
	"TaskJSON":       {"cache/f.task-json"},
	"LegacyCaches":   {"cache/f.gob", "cache/f.delta.gob", "cache/f.workers.json"},
	"LocksCache":     {"cache/locks"},
	"LocksTip":       {"cache/locks-tip"},
	"RushDir":        {"rush"},
	"Rush":           {"rush/f.json"},
	"RunRoot":        {"run"},
	"RunFeature":     {"run/f"},
	"RunDir":         {"run/f/T1"},
	"AttemptLog":     {"run/f/T1/attempt-2.log"},
	"Prompt":         {"run/f/T1/prompt-2.md"},
	"TaskFile":       {"run/f/T1/task.json"},
	"Note":           {"run/f/T1/note.md"},
	"ProcessGroup":   {"run/f/T1/pgid"},
	"Seen":           {"seen/f"},
	"Staging":        {"staging/f"},
	"Verified":       {"verified/f/T1"},
	"Trusted":        {"trusted/f"},
	"Accepted":       {"accepted/f.json"},
	"Checked":        {"checked/f"},
}

// Directories of the layout, which hold others of its paths.
var layoutDirs = map[string]bool{"rush": true, "run": true, "run/f": true, "run/f/T1": true}

// Every path Layout yields, for every method it has (found by reflection,
// so a new one cannot be left out), is under .git/zerg, where the list
// above says, and no two are one file.
func TestLayoutPaths(t *testing.T) {
	common := filepath.Join(t.TempDir(), ".git")
	l := LayoutOf(common)
	if want := filepath.Join(common, "zerg"); l.Dir() != want {
		t.Fatalf("Dir() = %s, want %s", l.Dir(), want)
	}
	owner := map[string]string{}
	v := reflect.ValueOf(l)
	for i := 0; i < v.NumMethod(); i++ {
		m := v.Type().Method(i)
		if m.Name == "Dir" {
			continue
		}
		want, ok := layoutFiles[m.Name]
		if !ok {
			t.Errorf("Layout.%s is not in layoutFiles: add where it puts its file", m.Name)
			continue
		}
		var got []string
		for _, p := range callWithSample(t, m.Name, v.Method(i)) {
			rel, err := filepath.Rel(l.Dir(), p)
			if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
				t.Errorf("Layout.%s = %s: not under %s", m.Name, p, l.Dir())
				continue
			}
			rel = filepath.ToSlash(rel)
			got = append(got, rel)
			if other, dup := owner[rel]; dup {
				t.Errorf("Layout.%s and Layout.%s are both %s", m.Name, other, rel)
			}
			owner[rel] = m.Name
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Layout.%s = %q, want %q", m.Name, got, want)
		}
	}
	if len(owner) != countPaths(layoutFiles) {
		t.Errorf("%d paths, layoutFiles lists %d: a method it lists is gone", len(owner), countPaths(layoutFiles))
	}
	// A file is never where another path needs a directory.
	for rel := range owner {
		for d := filepath.ToSlash(filepath.Dir(rel)); d != "."; d = filepath.ToSlash(filepath.Dir(d)) {
			if name, ok := owner[d]; ok && !layoutDirs[d] {
				t.Errorf("%s (Layout.%s) is a file, and %s is in it", d, name, rel)
			}
		}
	}
}

func countPaths(m map[string][]string) int {
	n := 0
	for _, ps := range m {
		n += len(ps)
	}
	return n
}

// callWithSample calls a Layout method with the sample names: strings in
// turn "f" (or a ref, for ReflogChecked) and "T1", ints 2.
func callWithSample(t *testing.T, name string, m reflect.Value) []string {
	t.Helper()
	strs := []string{"f", "T1"}
	if name == "ReflogChecked" {
		strs = []string{"refs/zerg/features/f"}
	}
	var args []reflect.Value
	for i := 0; i < m.Type().NumIn(); i++ {
		switch m.Type().In(i).Kind() {
		case reflect.String:
			args = append(args, reflect.ValueOf(strs[0]))
			strs = strs[1:]
		case reflect.Int:
			args = append(args, reflect.ValueOf(2))
		default:
			t.Fatalf("%v: no sample for a %v", m.Type(), m.Type().In(i))
		}
	}
	switch out := m.Call(args)[0].Interface().(type) {
	case string:
		return []string{out}
	case []string:
		return out
	default:
		t.Fatalf("%v returns a %T, not a path", m.Type(), out)
		return nil
	}
}

func TestAttemptOf(t *testing.T) {
	l := LayoutOf("/r/.git")
	if n, ok := AttemptOf(filepath.Base(l.AttemptLog("f", "T1", 12))); !ok || n != 12 {
		t.Errorf("AttemptOf(AttemptLog 12) = %d, %v", n, ok)
	}
	for _, name := range []string{"attempt-0.log", "attempt--1.log", "attempt-x.log", "attempt-3.log.bak", "prompt-3.md", "note.md"} {
		if n, ok := AttemptOf(name); ok {
			t.Errorf("AttemptOf(%q) = %d: not an attempt's log", name, n)
		}
	}
}

// zergJoin is a path made under .git/zerg by hand: a "zerg" piece joined
// on, "/zerg" added to a git directory, Layout's directory joined onto
// instead of one of its methods asked, or a ZergDir of old.
var zergJoin = regexp.MustCompile(`ZergDir\(|Join\(.*"zerg"|Dir\)? *\+ *"/zerg|Join\(.*Layout(Of\(.*\))?\(?\)?\.Dir\(\)`)

// Only layout.go makes paths in .git/zerg: no other package of the module
// spells one of its files again.
func TestNoZergPathsOutsideLayout(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("%s is not the module's root: %v", root, err)
	}
	self := filepath.Join(root, "gitstore", "layout.go")
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || path == self {
			return nil
		}
		checked++
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if !strings.HasPrefix(line, "//") && zergJoin.MatchString(line) {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d makes a path in .git/zerg; ask gitstore.Layout for it: %s", rel, n, line)
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d Go files checked under %s", checked, root)
	}
}
