package rush

import (
	"strings"
	"testing"
)

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
