//go:build unix

package gitcmd

import (
	"os/exec"
	"syscall"
)

// ownGroup puts cmd in a process group of its own, out of the terminal's
// foreground group: a Ctrl-C there signals every process of that group,
// and a helper that died with it would fail the very writes (a task
// given back, an attempt saved) the interrupted command then makes. Only
// for processes that never read the terminal: one in a background group
// that did would be stopped (SIGTTIN).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
