package proc

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/lazy"
)

// becomeSubreaper has this process adopt what its commands orphan
// (PR_SET_CHILD_SUBREAPER, Linux 3.4 and later; the setting is not
// inherited by the children). On an older kernel the orphans go to init
// and only the marks find them.
func becomeSubreaper() { subreaper.Do() }

var subreaper = &lazy.Func{Run: func() {
	const prSetChildSubreaper = 36
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}}

// endDetached kills the processes bearing mark, and when sweep is set and
// no command runs, the processes adopted here, looking again until those
// killed are gone (a killed process's children are reparented, and may be
// forking), at most reapWait. It reaps the adopted that ended on the way.
// It tells whether it killed anything.
func endDetached(mark string, sweep bool) bool {
	self, group := os.Getpid(), syscall.Getpgrp()
	killed := map[int]bool{}
	var since uint64 // a dead git-zerg's leftovers may be older than this one
	if sweep {
		since = ownStart.Get()
	}
	deadline := time.Now().Add(reapWait)
	for poll := time.Millisecond; endPass(mark, sweep, since, self, group, killed); poll = min(2*poll, 20*time.Millisecond) {
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(poll)
	}
	return len(killed) > 0
}

// endPass looks at every process started since then (in clock ticks since
// boot) once: an adopted zombie is reaped, a doomed process is sent SIGKILL
// and noted in killed. It tells whether another look is needed: a process
// killed is not a zombie yet.
func endPass(mark string, sweep bool, since uint64, self, group int, killed map[int]bool) (again bool) {
	procs, ok := processes()
	if !ok {
		return false
	}
	commands.mu.Lock()
	defer commands.mu.Unlock()
	whenIdle := sweep && idle()
	kill := func(pid int) {
		syscall.Kill(pid, syscall.SIGKILL)
		killed[pid], again = true, true
	}
	for _, p := range procs {
		if p.pid == self || commands.shells[p.pid] || p.start < since {
			continue
		}
		// Outside our group, reparented here: a command left it (or what
		// git-zerg's own git left). A child of ours in our group may be
		// os/exec's to wait for, and is never touched.
		adopted := p.ppid == self && p.pgrp != group
		switch {
		case p.zombie():
			if adopted {
				var ws syscall.WaitStatus
				syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil)
			}
			continue
		case killed[p.pid]:
			// Still exiting (its environment may be unreadable by now),
			// or it was handed the signal while it forked.
			kill(p.pid)
			continue
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/environ")
		switch {
		case err != nil:
			// Gone, another user's, or not dumpable (ssh-agent): an
			// adopted one is not git's own git's, which is readable.
			if whenIdle && adopted {
				kill(p.pid)
			}
		case doomed(marksOf(env), mark, whenIdle) || whenIdle && adopted && !ownGit(env):
			kill(p.pid)
		}
	}
	return again
}

// ownGit tells whether an environment is that of a process git-zerg's own
// git started (a detached `git gc --auto`), which is not a command's.
func ownGit(environ []byte) bool {
	for _, kv := range strings.Split(string(environ), "\x00") {
		if v, ok := strings.CutPrefix(kv, gitcmd.GuardEnv+"="); ok && v != "" {
			return true
		}
	}
	return false
}

// process is a line of /proc/<pid>/stat.
type process struct {
	pid, ppid, pgrp int
	state           string
	start           uint64 // clock ticks since boot
	// cpu is the processor time it used, and that of its children it
	// reaped, in clock ticks.
	cpu uint64
}

// ownStart is when this process started. What started before it cannot
// descend from its commands, and its environment need not be read: most
// of a machine's processes.
var ownStart = &lazy.Value[uint64]{Build: func() uint64 {
	p, _ := readStat(strconv.Itoa(os.Getpid()))
	return p.start
}}

func (p process) zombie() bool { return p.state == "Z" || p.state == "X" }

// processes lists every process; ok is false when /proc cannot be read.
func processes() (procs []process, ok bool) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, false
	}
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		if p, ok := readStat(n); ok {
			procs = append(procs, p)
		}
	}
	return procs, true
}

func readStat(pid string) (process, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return process{}, false // gone meanwhile
	}
	// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return process{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return process{}, false
	}
	p := process{state: f[0]}
	var e1, e2, e3, e4 error
	p.pid, e1 = strconv.Atoi(pid)
	p.ppid, e2 = strconv.Atoi(f[1])
	p.pgrp, e3 = strconv.Atoi(f[2])
	p.start, e4 = strconv.ParseUint(f[19], 10, 64)
	for _, i := range []int{11, 12, 13, 14} { // utime stime cutime cstime
		n, _ := strconv.ParseUint(f[i], 10, 64)
		p.cpu += n
	}
	return p, e1 == nil && e2 == nil && e3 == nil && e4 == nil
}
