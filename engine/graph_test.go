package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-zerg/git-zerg/levels"
)

func TestCheckGraph(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "g.json")
	if err := os.WriteFile(file, []byte(strings.Replace(twoTasks, `"feature": "f"`, `"feature": "bad name"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// Planned under another name, the graph's own name is only a warning.
	plan, errs, warns, err := CheckGraph(nil, file, false, false, false)
	if err != nil || plan == nil || len(errs) != 0 || len(warns) != 1 || warns[0].Place != "feature" {
		t.Fatalf("%v %v %v", err, errs, warns)
	}
	// Under --strict it refuses the graph.
	_, _, _, err = CheckGraph(nil, file, true, false, false)
	wantKind(t, err, Usage, "(0 errors, 1 warnings under --strict)")
	// When the graph names the feature, its name must be usable.
	_, errs, warns, err = CheckGraph(nil, file, false, true, false)
	var ge *GraphError
	if !errors.As(err, &ge) || len(errs) != 1 || errs[0].Place != "feature" || len(warns) != 0 {
		t.Fatalf("%v %v %v", err, errs, warns)
	}
	wantKind(t, err, Usage, "invalid task graph "+file+" (1 error)")
	// Standard input is named as such.
	_, _, _, err = CheckGraph(strings.NewReader("{"), "-", false, false, false)
	wantKind(t, err, Usage, "invalid task graph <stdin>")
	_, _, _, err = CheckGraph(nil, filepath.Join(dir, "none.json"), false, false, false)
	wantKind(t, err, Usage, "cannot read task graph")
	wantKind(t, err, Usage, "(no such file)")
}

func TestGraphFile(t *testing.T) {
	base := t.TempDir()
	if f, err := GraphFile(base, "x.json", "f"); err != nil || f != "x.json" {
		t.Fatalf("%q %v", f, err)
	}
	if f, _ := GraphFile(base, "", "f"); f != filepath.Join(base, ".gsd", "specs", "f", "task-graph.json") {
		t.Fatalf("%q", f)
	}
	_, err := GraphFile(base, "", "")
	wantKind(t, err, Usage, "no task graph given")
	for _, f := range []string{"a", "b"} {
		if err := os.MkdirAll(filepath.Join(base, ".gsd", "specs", f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(base, ".gsd", "specs", f, "task-graph.json"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = GraphFile(base, "", "")
	}
	wantKind(t, err, Usage, "several task graphs")
}

func TestCheckFeatureName(t *testing.T) {
	if err := CheckFeatureName("auth"); err != nil {
		t.Fatal(err)
	}
	err := CheckFeatureName("a b")
	wantKind(t, err, Usage, `bad feature name "a b"`)
	if strings.Count(err.Error(), `"a b"`) != 1 {
		t.Fatalf("the name said twice: %v", err)
	}
}

// The usage error names the name once and gives levels' reason after it,
// word for word, the empty name (which has none to name) in full.
func TestCheckFeatureNameText(t *testing.T) {
	for name, want := range map[string]string{
		"":     `bad feature name "" (feature name is empty)`,
		"a..b": `bad feature name "a..b" (must not contain ".." (git refs cannot))`,
		"a b":  `bad feature name "a b" (may only contain letters, digits, '.', '_' and '-', and must start with a letter or digit)`,
	} {
		if got := CheckFeatureName(name).Error(); got != want {
			t.Errorf("CheckFeatureName(%q) = %s, want %s", name, got, want)
		}
		if got := UseFeature(name, nil).Error(); got != want {
			t.Errorf("UseFeature(%q) = %s, want %s", name, got, want)
		}
	}
}

// PlanCurrent makes the planned feature the current one, and names the
// staging branch an earlier plan left.
func TestPlanCurrent(t *testing.T) {
	g, _ := newEngine(t, twoTasks, nil)
	plan, problems := levels.Load([]byte(twoTasks))
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	g.Feature = "again"
	res, err := g.PlanCurrent(plan, false)
	if err != nil || res.StagingTip != "" || g.Store.CurrentFeature() != "again" {
		t.Fatalf("%+v %v, current %q", res, err, g.Store.CurrentFeature())
	}
	run(t, g.Store.Top, "git", "branch", res.Staging)
	if res, err = g.PlanCurrent(plan, true); err != nil || res.StagingTip == "" || res.Staging != "zerg/again/staging" {
		t.Fatalf("an old staging branch: %+v %v", res, err)
	}
	if missing := RequiredIssues(g.Store, plan); len(missing) != 0 {
		t.Fatalf("issues required without the configuration asking: %v", missing)
	}
}
