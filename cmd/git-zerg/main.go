// Command git-zerg runs a feature's task graph with parallel workers, with
// all state kept as commits under refs/zerg/. git runs it as `git zerg`.
package main

import (
	"os"
	"runtime/debug"
)

func main() { os.Exit(process()) }

// process is the whole program as a process: the tests run it so too.
func process() int {
	// A command lives for milliseconds: collecting garbage four times less
	// often buys a fifth of status at 10,000 tasks for a few MB of memory.
	debug.SetGCPercent(400)
	return Main(os.Args, os.Stdin, os.Stdout, os.Stderr)
}
