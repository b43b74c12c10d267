package engine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestKillRecordedGroup: a resumed rush kills the process group a dead
// rush recorded, but not a process that got the same id since.
func TestKillRecordedGroup(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process start times come from /proc")
	}
	start := func() *exec.Cmd {
		cmd := exec.Command("sleep", "30")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	exited := func(cmd *exec.Cmd, within time.Duration) bool {
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
			return true
		case <-time.After(within):
			return false
		}
	}
	path := filepath.Join(t.TempDir(), "pgid")

	// Another process has the recorded id now (its start time differs).
	other := start()
	os.WriteFile(path, []byte(fmt.Sprintf("%d 1\n", other.Process.Pid)), 0o644)
	killRecordedGroup(path)
	if exited(other, 300*time.Millisecond) {
		t.Fatal("killed a process that only shares the recorded id")
	}

	// The recorded group itself.
	ours := start()
	recordGroup(path, ours.Process.Pid)
	killRecordedGroup(path)
	if !exited(ours, 10*time.Second) {
		t.Fatal("the recorded group still runs")
	}
}
