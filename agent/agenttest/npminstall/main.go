// Command npminstall installs the agent CLIs that testdata/agents pins,
// and the hook managers that testdata/hookmanagers pins, into the cache the
// tests look in (agenttest.Dir), unless they are there:
// `go run ./agent/agenttest/npminstall` from the repository's root.
// It prints nothing when it succeeds.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/git-zerg/git-zerg/agent/agenttest"
)

func main() {
	for _, lockDir := range []string{agenttest.Lockfiles, agenttest.HookManagers} {
		if _, err := agenttest.Install(context.Background(), lockDir); err != nil {
			fmt.Fprintln(os.Stderr, "npminstall:", err)
			os.Exit(1)
		}
	}
}
