package proc

import "syscall"

// sysProcAttr puts the command in its own process group (so a timeout kills
// all it started) and has the kernel kill the shell if git-zerg itself dies,
// so a crashed rush does not leave workers running unattended.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
