package proc

import (
	"os"
	"strconv"
	"strings"
	"syscall"
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
	d, err := os.Open("/proc")
	if err != nil {
		return true
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return true
	}
	want := strconv.Itoa(pgid)
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[2] != want {
			continue
		}
		if f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}
