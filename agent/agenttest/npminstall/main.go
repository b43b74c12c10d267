// Command npminstall installs the agent CLIs that testdata/agents pins
// into the cache the tests look in (agenttest.Dir), unless they are
// there: `go run ./agent/agenttest/npminstall` from the repository's root.
// It prints nothing when it succeeds.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/git-zerg/git-zerg/agent/agenttest"
)

func main() {
	if _, err := agenttest.Install(context.Background(), agenttest.Lockfiles); err != nil {
		fmt.Fprintln(os.Stderr, "npminstall:", err)
		os.Exit(1)
	}
}
