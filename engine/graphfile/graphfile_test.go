package graphfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/engine/enginetest"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "g.json")
	if err := os.WriteFile(file, []byte(strings.Replace(enginetest.TwoTasks, `"feature": "f"`, `"feature": "bad name"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// Planned under another name, the graph's own name is only a warning.
	plan, errs, warns, err := Check(nil, file, false, false, false)
	if err != nil || plan == nil || len(errs) != 0 || len(warns) != 1 || warns[0].Place != "feature" {
		t.Fatalf("%v %v %v", err, errs, warns)
	}
	// Under --strict it refuses the graph.
	_, _, _, err = Check(nil, file, true, false, false)
	enginetest.WantKind(t, err, engine.Usage, "(0 errors, 1 warnings under --strict)")
	// When the graph names the feature, its name must be usable.
	_, errs, warns, err = Check(nil, file, false, true, false)
	var ge *Error
	if !errors.As(err, &ge) || len(errs) != 1 || errs[0].Place != "feature" || len(warns) != 0 {
		t.Fatalf("%v %v %v", err, errs, warns)
	}
	enginetest.WantKind(t, err, engine.Usage, "invalid task graph "+file+" (1 error)")
	// Standard input is named as such.
	_, _, _, err = Check(strings.NewReader("{"), "-", false, false, false)
	enginetest.WantKind(t, err, engine.Usage, "invalid task graph <stdin>")
	_, _, _, err = Check(nil, filepath.Join(dir, "none.json"), false, false, false)
	enginetest.WantKind(t, err, engine.Usage, "cannot read task graph")
	enginetest.WantKind(t, err, engine.Usage, "(no such file)")
}

func TestFind(t *testing.T) {
	base := t.TempDir()
	if f, err := Find(base, "x.json", "f"); err != nil || f != "x.json" {
		t.Fatalf("%q %v", f, err)
	}
	if f, _ := Find(base, "", "f"); f != filepath.Join(base, ".gsd", "specs", "f", "task-graph.json") {
		t.Fatalf("%q", f)
	}
	_, err := Find(base, "", "")
	enginetest.WantKind(t, err, engine.Usage, "no task graph given")
	for _, f := range []string{"a", "b"} {
		if err := os.MkdirAll(filepath.Join(base, ".gsd", "specs", f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(base, ".gsd", "specs", f, "task-graph.json"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = Find(base, "", "")
	}
	enginetest.WantKind(t, err, engine.Usage, "several task graphs")
}
