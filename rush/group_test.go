package rush

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/proc"
)

// TestKillRecordedGroup: a resumed rush kills the process group a dead
// rush recorded, and what bears the recorded mark outside the group, but
// not a process that got the same id since.
func TestKillRecordedGroup(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process start times come from /proc")
	}
	// Each process is waited for once, by its own goroutine; the test and
	// its cleanup read the channel that goroutine closes.
	type child struct {
		cmd  *exec.Cmd
		done chan struct{}
	}
	start := func(env ...string) child {
		cmd := exec.Command("sleep", "30")
		cmd.Env = append(os.Environ(), env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		p := child{cmd, make(chan struct{})}
		go func() { cmd.Wait(); close(p.done) }()
		t.Cleanup(func() { cmd.Process.Kill(); <-p.done })
		return p
	}
	exited := func(p child, within time.Duration) bool {
		select {
		case <-p.done:
			return true
		case <-time.After(within):
			return false
		}
	}
	path := filepath.Join(t.TempDir(), "pgid")

	// Another process has the recorded id now (its start time differs).
	other := start()
	os.WriteFile(path, []byte(fmt.Sprintf("%d 1\n", other.cmd.Process.Pid)), 0o644)
	killRecordedGroup(path)
	if exited(other, 300*time.Millisecond) {
		t.Fatal("killed a process that only shares the recorded id")
	}

	// The recorded group itself, and a process of the worker's that left
	// it (as setsid does).
	mark := proc.NewMark()
	ours, detached := start(), start(proc.MarkEnv+"=outer:"+mark)
	recordGroup(path, ours.cmd.Process.Pid, mark)
	killRecordedGroup(path)
	if !exited(ours, 10*time.Second) {
		t.Fatal("the recorded group still runs")
	}
	if !exited(detached, 10*time.Second) {
		t.Fatal("the process bearing the recorded mark still runs")
	}
}
