package main

import (
	"path/filepath"
	"strings"
	"testing"
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
	url := startGitDaemon(t, env, base, 0).url("remote.git")
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
	run(t, b, env, "git", "zerg", "plan", "--accept", "--yes", "net")
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
