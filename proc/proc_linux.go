package proc

import "syscall"

// sysProcAttr puts the command in its own process group (so a timeout kills
// all it started) and has the kernel kill the shell if git-zerg itself dies,
// so a crashed rush does not leave workers running unattended.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// hasLiveMember tells whether a process other than a zombie is in the
// group. kill(2) cannot tell: it succeeds on a group of zombies. When /proc
// cannot be read, the group is taken as alive.
func hasLiveMember(pgid int) bool {
	procs, ok := processes()
	if !ok {
		return true
	}
	for _, p := range procs {
		if p.pgrp == pgid && !p.zombie() {
			return true
		}
	}
	return false
}
