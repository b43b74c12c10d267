package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestArbiterClaims races claimers in two clones whose configuration names
// the shared remote as arbiter: a claim holds only once the arbiter has it,
// so no task is ever claimed twice — not even as a conflict to resolve
// later.
func TestArbiterClaims(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns many processes")
	}
	const tasks, perClone = 24, 3
	dir := t.TempDir()
	env := gitEnv(dir)
	remote := filepath.Join(dir, "remote.git")
	run(t, dir, env, "git", "init", "-q", "--bare", "-b", "main", remote)
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	run(t, dir, env, "git", "init", "-q", "-b", "main", a)
	os.MkdirAll(filepath.Join(a, ".zerg"), 0o755)
	os.WriteFile(filepath.Join(a, ".zerg", "config.toml"), []byte("[sync]\narbiter = \"origin\"\n"), 0o644)
	run(t, a, env, "git", "add", ".zerg")
	run(t, a, env, "git", "commit", "-q", "-m", "config")
	run(t, a, env, "git", "remote", "add", "origin", remote)
	run(t, a, env, "git", "push", "-q", "origin", "main")
	run(t, dir, env, "git", "clone", "-q", remote, b)
	checkOnlyGraph(t, filepath.Join(dir, "graph.json"), "arb", tasks)
	run(t, a, env, "git", "zerg", "plan", "--graph", filepath.Join(dir, "graph.json"))
	run(t, a, env, "git", "zerg", "sync")
	run(t, b, env, "git", "zerg", "sync")
	run(t, b, env, "git", "zerg", "plan", "--accept", "--yes", "arb")

	// Each claimer takes tasks until none is left, and releases nothing:
	// a worker holds one task at a time, so each claims with a new name.
	script := `
n=0
while :; do
  n=$((n+1))
  id=$(git zerg claim --worker "$W-$n" 2>>"$LOG.err"); rc=$?
  [ $rc -eq 4 ] && exit 0
  [ $rc -eq 0 ] && echo "$id" >> "$LOG" && continue
  [ $rc -eq 3 ] && continue
  cat "$LOG.err" >&2; echo "claim exited $rc" >&2; exit $rc
done`
	var wg sync.WaitGroup
	var logs []string
	errs := make(chan error, 2*perClone)
	for _, clone := range []string{a, b} {
		for i := 0; i < perClone; i++ {
			log := filepath.Join(dir, fmt.Sprintf("claims-%s-%d", filepath.Base(clone), i))
			logs = append(logs, log)
			cmd := exec.Command("sh", "-c", script)
			cmd.Dir = clone
			cmd.Env = append(append([]string(nil), env...), fmt.Sprintf("W=%s%d", filepath.Base(clone), i), "LOG="+log)
			wg.Add(1)
			go func() {
				defer wg.Done()
				if out, err := cmd.CombinedOutput(); err != nil {
					errs <- fmt.Errorf("%v: %s", err, out)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		for _, id := range strings.Fields(string(b)) {
			seen[id]++
		}
	}
	for i := 0; i < tasks; i++ {
		id := fmt.Sprintf("T%04d", i)
		if i%10 == 9 {
			continue // waits for a task that never gets done
		}
		if seen[id] != 1 {
			t.Errorf("%s was claimed %d times", id, seen[id])
		}
	}
	// And the shared state agrees: one claim each, no conflict to resolve.
	run(t, a, env, "git", "zerg", "sync")
	run(t, b, env, "git", "zerg", "sync")
	out := run(t, a, env, "git", "zerg", "export")
	var doc exportDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, tk := range doc.Tasks {
		claims := 0
		for _, h := range tk.History {
			switch h.Op {
			case "claim":
				claims++
			case "conflict":
				t.Errorf("%s: a conflict was recorded: the arbiter let two claims through", tk.ID)
			}
		}
		if tk.Status == "claimed" && claims != 1 {
			t.Errorf("%s: %d claims", tk.ID, claims)
		}
	}
}
