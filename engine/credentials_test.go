package engine

import (
	"slices"
	"testing"
)

// TestWithheld: every forge credential is withheld but those passed
// through.
func TestWithheld(t *testing.T) {
	if got, want := Withheld(nil), []string{"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"}; !slices.Equal(got, want) {
		t.Errorf("withheld(nil) = %q, want %q", got, want)
	}
	if got, want := Withheld([]string{"GH_TOKEN", "GITHUB_ENTERPRISE_TOKEN"}), []string{"GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN"}; !slices.Equal(got, want) {
		t.Errorf("withheld = %q, want %q", got, want)
	}
}
