package proc

import (
	"syscall"
	"time"
)

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

// clockTick is the unit of /proc's times: USER_HZ, 100 on every Linux.
const clockTick = 10 * time.Millisecond

// groupCPU is the processor time the group's processes have used, with
// that of the children they reaped; 0 when /proc cannot be read. A
// process that ended and was reaped outside the group takes its time
// with it, so the sum can fall back: the watchdog keeps the most it saw.
func groupCPU(pgid int) time.Duration {
	procs, ok := processes()
	if !ok {
		return 0
	}
	var ticks uint64
	for _, p := range procs {
		if p.pgrp == pgid {
			ticks += p.cpu
		}
	}
	return time.Duration(ticks) * clockTick
}
