package worktree

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Features whose rushes start at once each set their staging's base in
// the one .git/config, whose lock git takes without waiting: every
// setting must land.
func TestSetBaseConcurrently(t *testing.T) {
	top, m := newRepo(t)
	ctx := context.Background()
	const n = 8
	ms := make([]*Manager, n)
	for i := range ms {
		ms[i] = &Manager{Git: m.Git, Feature: fmt.Sprintf("f%d", i), Root: defaultRoot(top, fmt.Sprintf("f%d", i))}
		if _, err := ms[i].EnsureStaging(ctx, ""); err != nil {
			t.Fatal(err)
		}
	}
	for round := 0; round < 3; round++ {
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range ms {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = ms[i].SetBase(ctx, "main")
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, feature f%d: %v", round, i, err)
			}
		}
	}
	for i := range ms {
		if got := git(t, top, "config", "branch.zerg/f"+fmt.Sprint(i)+"/staging.merge"); strings.TrimSpace(got) != "refs/heads/main" {
			t.Errorf("f%d's staging follows %q", i, got)
		}
	}
}
