package proc

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/git-zerg/git-zerg/lazy"
)

// A process group does not hold what leaves it: setsid, a double fork with
// setsid, a daemon. So that those end with the command too, every process
// a command starts carries a mark in its environment (MarkEnv), which
// setsid and forks keep, and on Linux this process is a child subreaper:
// what a command orphans is reparented here, not to init, so that even a
// process that cleared its environment is known for one of the commands'.
// When a command ends, the processes bearing its mark are killed; once no
// command runs, every process adopted here is too, but those that git-zerg's
// own git processes left (gitcmd.GuardEnv in their environment, a detached
// `git gc --auto`). Elsewhere only the process group is ended.
//
// Every process git-zerg starts in a group of its own goes through Start:
// a process adopted here outside git-zerg's own group is taken for one a
// command left, and reaped.

// MarkEnv holds the marks of the commands a process descends from, joined
// by ':'; the newest is last.
const MarkEnv = "ZERG_RUN_ID"

// processToken tells this process's marks from another's: a nested
// git-zerg (a worker's `git zerg done`) marks its own commands.
var processToken = &lazy.Value[string]{Build: func() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}}

var markCount atomic.Int64

// NewMark is a mark no other command has, for Spec.Mark.
func NewMark() string {
	return processToken.Get() + "-" + strconv.FormatInt(markCount.Add(1), 10)
}

// ownMark tells whether m was made by this process.
func ownMark(m string) bool { return strings.HasPrefix(m, processToken.Get()+"-") }

// childEnv is env without the variables named in unset, marked with mark
// after the marks it holds.
func childEnv(env, unset []string, mark string) []string {
	out := make([]string, 0, len(env)+1)
	marks := ""
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case name == MarkEnv:
			marks = value // the last one wins, as in the shell
		case !contains(unset, name):
			out = append(out, kv)
		}
	}
	if marks != "" {
		mark = marks + ":" + mark
	}
	return append(out, MarkEnv+"="+mark)
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// marksOf is the marks an environment (NUL-separated, as /proc gives it)
// carries.
func marksOf(environ []byte) []string {
	prefix := MarkEnv + "="
	var marks []string
	for _, kv := range strings.Split(string(environ), "\x00") {
		if v, ok := strings.CutPrefix(kv, prefix); ok {
			marks = strings.Split(v, ":")
		}
	}
	return marks
}

// commands is what this process runs: the shells of the commands that are
// not yet reaped, which are its children but not adopted, and how many
// commands are not over. mu is held while a command starts and while the
// adopted are looked for, so that a shell just forked is never taken for
// an adopted process.
var commands struct {
	mu      sync.Mutex
	shells  map[int]bool
	running int
}

func started(pid int) {
	if commands.shells == nil {
		commands.shells = map[int]bool{}
	}
	commands.shells[pid] = true
	commands.running++
}

// reaped is called once the shell's exit was collected: its pid may be
// handed out again.
func reaped(pid int) {
	commands.mu.Lock()
	delete(commands.shells, pid)
	commands.mu.Unlock()
}

// over is called once a command's group is gone. It ends what bore the
// command's mark and, when no other command runs, what was adopted, and
// tells whether anything was ended.
func over(mark string) bool {
	commands.mu.Lock()
	commands.running--
	commands.mu.Unlock()
	return endDetached(mark, true)
}

// idle tells whether no command runs; commands.mu is held.
func idle() bool { return commands.running == 0 }

// doomed tells whether a process bearing marks is to be ended along with
// the command of mark: it descends from that command, or from one of this
// process's commands when none runs any more.
func doomed(marks []string, mark string, whenIdle bool) bool {
	for _, m := range marks {
		if m == mark || whenIdle && ownMark(m) {
			return true
		}
	}
	return false
}

// EndMarked ends every process bearing mark, for whoever takes over from
// a git-zerg that died: the processes its commands left that are not in
// their groups. It does nothing where processes cannot be told by their
// environment (outside Linux).
func EndMarked(mark string) bool {
	if mark == "" {
		return false
	}
	return endDetached(mark, false)
}
