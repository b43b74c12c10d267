package proc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// needDetaching skips where setsid is missing.
func needDetaching(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
}

// daemons is a shell command that starts, outside its process group, a
// process of each way of leaving it: setsid, a double fork with setsid, and
// a double fork with setsid and a cleared environment (which leaves no
// mark). Each writes "<name> <pid>" to file once it has left, and the
// command returns only then. The test kills them all in the end.
func daemons(t *testing.T, file string, names ...string) string {
	t.Helper()
	t.Cleanup(func() { killListed(file) })
	ways := map[string]string{
		"setsid":  `setsid sh -c 'echo setsid $$ >> %[1]s; exec sleep 300' &`,
		"double":  `sh -c '(setsid sh -c "echo double \$\$ >> %[1]s; exec sleep 300" &) &'`,
		"cleared": `sh -c '(setsid env -i sh -c "echo cleared \$\$ >> %[1]s; exec sleep 300" &) &'`,
	}
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, ways[n]+"\n", file)
	}
	fmt.Fprintf(&b, `while [ "$(cat %s 2>/dev/null | wc -l)" -lt %d ]; do :; done`, file, len(names))
	return b.String()
}

// listed is the pids the daemons wrote to file, by name.
func listed(t *testing.T, file string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pids := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		name, pid, _ := strings.Cut(l, " ")
		n, err := strconv.Atoi(pid)
		if err != nil {
			t.Fatalf("bad line %q", l)
		}
		pids[name] = n
	}
	return pids
}

// killListed kills what a failing test leaves of the daemons: their pids
// are this process's children by then, or gone, so no pid can name
// another process.
func killListed(file string) {
	b, _ := os.ReadFile(file)
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestDetachedEnded: what a command started outside its group ends with
// it, whatever way it left, a cleared environment included. Ended
// processes are reaped: none stays a zombie child of this process.
func TestDetachedEnded(t *testing.T) {
	needDetaching(t)
	file := filepath.Join(t.TempDir(), "pids")
	res, err := Run(context.Background(), Spec{
		Command: daemons(t, file, "setsid", "double", "cleared") + "; echo done",
		Started: func(p int) { cleanupGroup(t, p) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !strings.Contains(res.Tail, "done") || !res.Detached {
		t.Fatalf("%+v, want exit 0 with detached processes ended", res)
	}
	for name, pid := range listed(t, file) {
		if alive(pid) {
			t.Errorf("%s %d still runs", name, pid)
		}
		if p, ok := readStat(strconv.Itoa(pid)); ok && p.ppid == os.Getpid() {
			t.Errorf("%s %d is an unreaped child (state %s)", name, pid, p.state)
		}
	}
}

// TestDetachedOfOthersKept: a command's end ends what it detached, not what
// a command still running detached, marked or not; that goes when its own
// command ends.
func TestDetachedOfOthersKept(t *testing.T) {
	needDetaching(t)
	dir := t.TempDir()
	longFile, shortFile := filepath.Join(dir, "long"), filepath.Join(dir, "short")
	out := newLines()
	long, err := Start(context.Background(), Spec{
		Command: daemons(t, longFile, "double", "cleared") + "; echo ready; exec sleep 300",
		Stdout:  out, Stderr: out, Grace: -1,
		Started: func(p int) { cleanupGroup(t, p) },
	})
	if err != nil {
		t.Fatal(err)
	}
	out.await(t, "ready")
	res, err := Run(context.Background(), Spec{Command: daemons(t, shortFile, "setsid"),
		Started: func(p int) { cleanupGroup(t, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Detached {
		t.Errorf("%+v, want its detached process ended", res)
	}
	gone(t, listed(t, shortFile)["setsid"])
	for name, pid := range listed(t, longFile) {
		if !alive(pid) {
			t.Errorf("%s %d of the running command was ended", name, pid)
		}
	}
	long.Stop()
	if res, _ := long.Wait(); !res.Detached {
		t.Errorf("%+v, want its detached processes ended", res)
	}
	for name, pid := range listed(t, longFile) {
		if alive(pid) {
			t.Errorf("%s %d outlived its command", name, pid)
		}
	}
}

// TestOwnProcessesKept: what this process started itself is never touched
// when a command ends: a child in its group, running or exited (its exit
// is os/exec's to collect), and what git-zerg's own git detached (a
// background `git gc --auto`), though it was adopted here.
func TestOwnProcessesKept(t *testing.T) {
	needDetaching(t)
	running := exec.Command("sleep", "300")
	if err := running.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { running.Process.Kill(); running.Wait() })
	exited := exec.Command("true")
	if err := exited.Start(); err != nil {
		t.Fatal(err)
	}
	waitZombie(t, exited.Process.Pid)
	git := exec.Command("sh", "-c", "setsid sleep 300 >/dev/null 2>&1 & echo $!")
	git.Env = append(os.Environ(), gitcmd.GuardEnv+"=1")
	b, err := git.Output()
	if err != nil {
		t.Fatal(err)
	}
	gcPid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(gcPid, syscall.SIGKILL)
		var ws syscall.WaitStatus
		syscall.Wait4(gcPid, &ws, 0, nil)
	})
	waitParent(t, gcPid, os.Getpid())

	file := filepath.Join(t.TempDir(), "pids")
	res, err := Run(context.Background(), Spec{Command: daemons(t, file, "cleared")})
	if err != nil || !res.Detached {
		t.Fatalf("%+v, %v: want the command's detached process ended", res, err)
	}
	gone(t, listed(t, file)["cleared"])
	if !alive(running.Process.Pid) {
		t.Error("a child of this process's own was ended")
	}
	if err := exited.Wait(); err != nil {
		t.Errorf("the exit of a child of this process's own was taken: %v", err)
	}
	if !alive(gcPid) {
		t.Error("what git-zerg's own git detached was ended")
	}
}

// waitZombie waits, bounded, until pid has exited and is not reaped.
func waitZombie(t *testing.T, pid int) {
	t.Helper()
	waitStat(t, pid, "to exit", func(p process) bool { return p.zombie() })
}

// waitParent waits, bounded, until pid's parent is ppid.
func waitParent(t *testing.T, pid, ppid int) {
	t.Helper()
	waitStat(t, pid, fmt.Sprintf("to be adopted by %d", ppid), func(p process) bool { return p.ppid == ppid })
}

func waitStat(t *testing.T, pid int, what string, done func(process) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if p, ok := readStat(strconv.Itoa(pid)); ok && done(p) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not come %s", pid, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestEndMarked ends the processes bearing a mark, whoever their parent,
// and only those: how a rush ends what one that died left running.
func TestEndMarked(t *testing.T) {
	needDetaching(t)
	start := func(marks string) *exec.Cmd {
		c := exec.Command("sleep", "300")
		c.Env = append(os.Environ(), MarkEnv+"="+marks)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return c
	}
	mark := NewMark()
	doomed, nested, other := start(mark), start("outer:"+mark+":inner"), start(NewMark())
	if EndMarked("") {
		t.Error("the empty mark ended something")
	}
	if !EndMarked(mark) {
		t.Error("EndMarked ended nothing")
	}
	for _, c := range []*exec.Cmd{doomed, nested} {
		if err := c.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
			t.Errorf("a process bearing the mark: %v, want killed", err)
		}
	}
	if !alive(other.Process.Pid) {
		t.Error("a process of another mark was ended")
	}
}
