package main

import (
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSyncOverGitDaemon shares state between two clones through a real
// network protocol: git daemon on 127.0.0.1 as the remote.
func TestSyncOverGitDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a git daemon")
	}
	dir := t.TempDir()
	env := gitEnv(dir)
	base := filepath.Join(dir, "srv")
	run(t, dir, env, "git", "init", "-q", "--bare", "-b", "main", filepath.Join(base, "remote.git"))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	daemon := exec.Command("git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
		"--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), "--base-path="+base, base)
	daemon.Env = env
	// `git daemon` is the git wrapper; the daemon proper is its child
	// (git-daemon), which killing the wrapper leaves running. In a process
	// group of their own both go.
	daemon.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-daemon.Process.Pid, syscall.SIGKILL)
		daemon.Wait()
	})
	url := fmt.Sprintf("git://127.0.0.1:%d/remote.git", port)
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			break
		}
		if i > 100 {
			t.Fatal("git daemon did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	run(t, dir, env, "git", "init", "-q", "-b", "main", a)
	run(t, a, env, "git", "commit", "-q", "--allow-empty", "-m", "initial")
	run(t, a, env, "git", "remote", "add", "origin", url)
	run(t, a, env, "git", "push", "-q", "origin", "main")
	run(t, dir, env, "git", "clone", "-q", url, b)
	checkOnlyGraph(t, filepath.Join(dir, "graph.json"), "net", 20)
	run(t, a, env, "git", "zerg", "plan", "--graph", filepath.Join(dir, "graph.json"))
	run(t, a, env, "git", "zerg", "claim", "--worker", "wa", "T0001")
	run(t, a, env, "git", "zerg", "sync")
	run(t, b, env, "git", "zerg", "sync")
	run(t, b, env, "git", "zerg", "claim", "--worker", "wb", "T0002")
	run(t, b, env, "git", "zerg", "sync")
	run(t, a, env, "git", "zerg", "sync")
	ea := run(t, a, env, "git", "zerg", "export")
	eb := run(t, b, env, "git", "zerg", "export")
	if ea != eb {
		t.Fatal("the clones export different state after syncing over git://")
	}
	for _, want := range []string{`"worker": "wa"`, `"worker": "wb"`} {
		if !strings.Contains(ea, want) {
			t.Errorf("export lacks %s", want)
		}
	}
}
