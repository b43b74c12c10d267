package proc

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestChildEnv: the unset variables go, the rest stays, and the mark goes
// after the marks of the commands this process runs in.
func TestChildEnv(t *testing.T) {
	got := childEnv([]string{"A=1", "GITHUB_TOKEN=x", MarkEnv + "=outer", "B=2=3", "GH_TOKEN=y", MarkEnv + "=nearer"},
		[]string{"GITHUB_TOKEN", "GH_TOKEN"}, "m")
	want := []string{"A=1", "B=2=3", MarkEnv + "=nearer:m"}
	if !slices.Equal(got, want) {
		t.Errorf("childEnv = %q, want %q", got, want)
	}
	if got := childEnv([]string{"A=1"}, nil, "m"); !slices.Equal(got, []string{"A=1", MarkEnv + "=m"}) {
		t.Errorf("childEnv without marks = %q", got)
	}
}

// TestUnsetStillScrubbed: an unset variable does not reach the command,
// and should the command print its value all the same (read from
// elsewhere), the tail has it replaced.
func TestUnsetStillScrubbed(t *testing.T) {
	const value = "tok-1234567890"
	t.Setenv("ZERG_TEST_TOKEN", value)
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Spec{Command: `echo "set:${ZERG_TEST_TOKEN-no}"; echo "mark:$` + MarkEnv + `"; cat ` + file,
		Unset: []string{"ZERG_TEST_TOKEN"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Tail, "set:no\n") {
		t.Errorf("the unset variable reached the command: %q", res.Tail)
	}
	if strings.Contains(res.Tail, value) || !strings.Contains(res.Tail, "[REDACTED:ZERG_TEST_TOKEN]") {
		t.Errorf("tail %q, want the value replaced", res.Tail)
	}
	if !strings.Contains(res.Tail, "mark:"+processToken.Get()+"-") {
		t.Errorf("the command bears no mark of this process: %q", res.Tail)
	}
}
