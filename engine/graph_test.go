package engine

import (
	"strings"
	"testing"

	"github.com/git-zerg/git-zerg/levels"
)

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
