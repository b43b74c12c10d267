//go:build !linux

package proc

import (
	"syscall"
	"time"
)

func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// hasLiveMember is asked only once kill(2) found the group. Without /proc
// zombies cannot be told apart, so they count as alive: the systems this
// builds for have an init that reaps them.
func hasLiveMember(pgid int) bool { return true }

// Without /proc a process's environment cannot be read, so the marks tell
// nothing and nothing is adopted: only the process group is ended.
func becomeSubreaper() {}

func endDetached(mark string, sweep bool) bool { return false }

// groupCPU cannot be read without /proc: only output and the worktree
// count as progress.
func groupCPU(pgid int) time.Duration { return 0 }
