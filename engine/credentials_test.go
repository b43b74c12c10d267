package engine

import (
	"slices"
	"strings"
	"testing"
)

// TestWithheld: every forge credential is withheld but those passed
// through.
func TestWithheld(t *testing.T) {
	if got, want := withheld(nil), []string{"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"}; !slices.Equal(got, want) {
		t.Errorf("withheld(nil) = %q, want %q", got, want)
	}
	if got, want := withheld([]string{"GH_TOKEN", "GITHUB_ENTERPRISE_TOKEN"}), []string{"GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN"}; !slices.Equal(got, want) {
		t.Errorf("withheld = %q, want %q", got, want)
	}
}

// TestContainerPassesCredentialsByName: a credential passed through to a
// container goes as -e NAME, its value left for docker to read from its
// own environment, off every command line.
func TestContainerPassesCredentialsByName(t *testing.T) {
	t.Setenv("GH_TOKEN", "gho_secret_value")
	cmd := containerCommand("img", "/wt", "/repo/.git", "/run", []string{"ZERG_TASK=T1"}, []string{"GH_TOKEN"}, "sh worker.sh")
	if !strings.Contains(cmd, " -e ZERG_TASK=T1 -e GH_TOKEN img ") {
		t.Errorf("command %q does not pass GH_TOKEN by name", cmd)
	}
	if strings.Contains(cmd, "gho_secret_value") {
		t.Errorf("command %q holds the credential's value", cmd)
	}
}
