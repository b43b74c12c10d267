//go:build !unix

package gitcmd

import "os/exec"

func ownGroup(*exec.Cmd) {}
