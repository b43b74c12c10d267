// Command git-zerg runs a feature's task graph with parallel workers, with
// all state kept as commits under refs/zerg/. git runs it as `git zerg`.
package main

import "os"

func main() { os.Exit(Main(os.Args, os.Stdin, os.Stdout, os.Stderr)) }
