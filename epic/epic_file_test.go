package epic

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/engine/enginetest"
)

const epicTask = `{"feature": "x", "tasks": [{"id": "T1", "title": "t", "files": {"create": ["%s"]}, "verification": {"command": "true"}}]}`

// writeEpic writes an epic of features A and B (after A) whose graphs sit
// in graphs/ beside it, named relative to it, and returns its path.
func writeEpic(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"epic.json": `{"name": "shop", "version": 1, "features": [
			{"name": "A", "graph": "graphs/a.json"},
			{"name": "B", "graph": "graphs/b.json", "dependencies": ["A"]}]}`,
		"graphs/a.json": strings.Replace(epicTask, "%s", "a.txt", 1),
		"graphs/b.json": strings.Replace(epicTask, "%s", "b.txt", 1),
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "epic.json")
}

func TestReadEpicFile(t *testing.T) {
	file := writeEpic(t)
	plan, errs, _, err := ReadFile(file, false)
	if err != nil || len(errs) > 0 || len(plan.Plans) != 2 || plan.Plans["B"] == nil {
		t.Fatalf("%v %v %+v", err, errs, plan)
	}
	// A graph that is not there is a problem of the epic, placed.
	if err := os.Remove(filepath.Join(filepath.Dir(file), "graphs", "b.json")); err != nil {
		t.Fatal(err)
	}
	_, errs, _, err = ReadFile(file, false)
	if err != nil || len(errs) != 1 || !strings.Contains(errs[0].String(), "no such file") {
		t.Fatalf("%v %v", err, errs)
	}
	_, _, _, err = ReadFile(filepath.Join(t.TempDir(), "none.json"), false)
	enginetest.WantKind(t, err, engine.Usage, "cannot read epic")
	enginetest.WantKind(t, err, engine.Usage, "(no such file)")
}

func TestEpicStatusesAndLog(t *testing.T) {
	g, _ := enginetest.New(t, enginetest.TwoTasks, nil)
	g.Feature = ""
	_, err := Statuses(g)
	enginetest.WantKind(t, err, engine.Usage, "no epic planned")
	_, err = Log(g, "shop")
	enginetest.WantKind(t, err, engine.Usage, `epic "shop" is not planned`)

	plan, _, _, err := ReadFile(writeEpic(t), false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Plan(g, plan, false); err != nil {
		t.Fatal(err)
	}
	sts, err := Statuses(g)
	if err != nil || len(sts) != 1 {
		t.Fatalf("%v %v", sts, err)
	}
	st := sts[0]
	if st.FeaturesDone() != 0 || st.Feature("B").State != "waiting" || st.Feature("A").State != "ready" || st.Feature("Z").Name != "Z" {
		t.Fatalf("%+v", st)
	}
	log, err := Log(g, "shop")
	if err != nil || len(log) != 1 || log[0].Message.Op != "epic-plan" {
		t.Fatalf("%v %+v", err, log)
	}
	if ep, r := Review(g.Store, "A"); ep == nil || ep.Name != "shop" || r != nil {
		t.Fatalf("review of A: %v %v", ep, r)
	}
	if ep, r := Review(g.Store, "f"); ep != nil || r != nil {
		t.Fatalf("a feature of no epic: %v %v", ep, r)
	}
}
