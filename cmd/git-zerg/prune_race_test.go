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

// TestClaimsSurvivePruneNow: workers claim and finish tasks, each command
// a process of its own, while `git gc --prune=now` runs in a loop beside
// them. gc's prune deletes every loose object no ref reached when it
// listed the refs, whatever its age, so a transition written a moment
// before its ref moved lost its objects once acknowledged. Every claim
// and done that exited 0 must be in the history, and git fsck and git
// zerg fsck must be clean.
func TestClaimsSurvivePruneNow(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns many processes")
	}
	const workers, rounds = 2, 4
	dir := t.TempDir()
	env := gitEnv(dir)
	repo := filepath.Join(dir, "repo")
	run(t, dir, env, "git", "init", "-q", "-b", "main", repo)
	run(t, repo, env, "git", "commit", "-q", "--allow-empty", "-m", "initial")
	checkOnlyGraph(t, filepath.Join(dir, "graph.json"), "prune", workers*rounds)
	run(t, repo, env, "git", "zerg", "plan", "--graph", filepath.Join(dir, "graph.json"))

	// The loop ends once the gc under way is over, when the file "stop"
	// exists: a gc killed midway would leave its children writing.
	stopFile := filepath.Join(dir, "stop")
	gc := exec.Command("sh", "-c", `while [ ! -e "$STOP" ]; do git gc --quiet --prune=now; done`)
	gc.Dir, gc.Env = repo, append(append([]string(nil), env...), "STOP="+stopFile)
	if err := gc.Start(); err != nil {
		t.Fatal(err)
	}
	var stopOnce sync.Once
	stopGC := func() {
		stopOnce.Do(func() {
			os.WriteFile(stopFile, nil, 0o644)
			gc.Wait()
		})
	}
	t.Cleanup(stopGC)

	// A worker logs what exited 0; any other exit ends it with its error.
	worker := `
i=0
while [ $i -lt ` + fmt.Sprint(rounds) + ` ]; do
  i=$((i+1))
  id=$(git zerg claim --worker "$W") || exit 1
  echo "claim $id" >> "$LOG"
  git zerg done --worker "$W" "$id" >/dev/null || exit 1
  echo "done $id" >> "$LOG"
done`
	type proc struct {
		cmd *exec.Cmd
		log string
		out []byte
		err error
	}
	var procs []*proc
	for i := 0; i < workers; i++ {
		p := &proc{log: filepath.Join(dir, fmt.Sprintf("log-%d", i))}
		p.cmd = exec.Command("sh", "-c", worker)
		p.cmd.Dir = repo
		p.cmd.Env = append(append([]string(nil), env...), fmt.Sprintf("W=w%d", i), "LOG="+p.log)
		procs = append(procs, p)
	}
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func(p *proc) { defer wg.Done(); p.out, p.err = p.cmd.CombinedOutput() }(p)
	}
	wg.Wait()
	// The gc under way may still delete what the last transitions wrote:
	// the repository is looked at once it is over.
	stopGC()
	for i, p := range procs {
		if p.err != nil {
			t.Errorf("worker %d: %v\n%s", i, p.err, p.out)
		}
	}
	fsck := exec.Command("git", "fsck", "--no-progress", "--no-dangling")
	fsck.Dir, fsck.Env = repo, env
	if out, err := fsck.CombinedOutput(); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
	run(t, repo, env, "git", "zerg", "fsck")

	var exp struct {
		Tasks []struct {
			ID      string `json:"id"`
			History []struct{ Op, Worker string }
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(run(t, repo, env, "git", "zerg", "export")), &exp); err != nil {
		t.Fatal(err)
	}
	history := map[string]bool{} // "op task worker"
	for _, tk := range exp.Tasks {
		for _, h := range tk.History {
			history[h.Op+" "+tk.ID+" "+h.Worker] = true
		}
	}
	acked := 0
	for i, p := range procs {
		b, _ := os.ReadFile(p.log)
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if line == "" {
				continue
			}
			acked++
			if !history[fmt.Sprintf("%s w%d", line, i)] {
				t.Errorf("%s by w%d exited 0 but is not in the history", line, i)
			}
		}
	}
	t.Logf("%d acknowledged transitions beside git gc --prune=now", acked)
}
