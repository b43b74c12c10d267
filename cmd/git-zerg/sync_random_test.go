package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// zergIn runs git-zerg in-process in dir and returns its exit code and
// output; the randomized test runs thousands of commands.
func zergIn(dir string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(append([]string{"git-zerg", "-C", dir}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

type exportDoc struct {
	Tasks []exportTask `json:"tasks"`
}

type exportTask struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Worker  string `json:"worker"`
	Host    string `json:"host"`
	History []struct {
		Op     string `json:"op"`
		Worker string `json:"worker"`
	} `json:"history"`
}

// exported is the export of the feature in dir.
func exported(t *testing.T, dir string, env []string) exportDoc {
	t.Helper()
	var doc exportDoc
	if err := json.Unmarshal([]byte(run(t, dir, env, "git", "zerg", "export")), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// ops counts the task's history by op.
func (tk exportTask) ops() map[string]int {
	ops := map[string]int{}
	for _, h := range tk.History {
		ops[h.Op]++
	}
	return ops
}

// TestSyncRandomized interleaves transitions and syncs over three clones of
// one remote, 50 seeds. After each run, once every clone has synced: every
// clone exports the same bytes (conflicts resolved the same way
// everywhere), every transition that succeeded somewhere is either in the
// final history or recorded as lost, and fsck finds the history legal.
func TestSyncRandomized(t *testing.T) {
	if testing.Short() {
		t.Skip("runs thousands of git processes")
	}
	seeds, conflicts := 50, 0
	for seed := 1; seed <= seeds; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { conflicts += syncRandomRun(t, uint64(seed)) })
	}
	// The interleavings must exercise the hard case, not only the easy one.
	if conflicts == 0 {
		t.Error("no seed produced a conflicting transition")
	}
	t.Logf("%d conflicts resolved over %d seeds", conflicts, seeds)
}

func syncRandomRun(t *testing.T, seed uint64) (conflicts int) {
	rng := rand.New(rand.NewPCG(seed, 7))
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, kv := range gitEnv(dir)[len(os.Environ()):] {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	env := gitEnv(dir)
	remote := filepath.Join(dir, "remote.git")
	run(t, dir, env, "git", "init", "-q", "--bare", "-b", "main", remote)
	clones := []string{filepath.Join(dir, "c0"), filepath.Join(dir, "c1"), filepath.Join(dir, "c2")}
	run(t, dir, env, "git", "init", "-q", "-b", "main", clones[0])
	run(t, clones[0], env, "git", "commit", "-q", "--allow-empty", "-m", "initial")
	run(t, clones[0], env, "git", "remote", "add", "origin", remote)
	run(t, clones[0], env, "git", "push", "-q", "origin", "main")
	for _, c := range clones[1:] {
		run(t, dir, env, "git", "clone", "-q", remote, c)
	}
	graph := filepath.Join(dir, "graph.json")
	checkOnlyGraph(t, graph, "r", 6)
	if code, _, errs := zergIn(clones[0], "plan", "--graph", graph); code != 0 {
		t.Fatal(errs)
	}
	for _, c := range clones {
		if code, _, errs := zergIn(c, "sync"); code != 0 {
			t.Fatalf("sync: %s", errs)
		}
		zergIn(c, "plan", "--accept", "--yes", "r")
	}
	type op struct{ clone, worker, task, what string }
	var succeeded []op
	tasks := []string{"T0000", "T0001", "T0002", "T0003", "T0004", "T0005"}
	for step := 0; step < 14; step++ {
		ci := rng.IntN(len(clones))
		c := clones[ci]
		worker := fmt.Sprintf("w%d%d", ci, rng.IntN(2))
		task := tasks[rng.IntN(len(tasks))]
		var args []string
		switch k := rng.IntN(10); {
		case k < 3:
			args = []string{"claim", "--worker", worker, task}
		case k < 5:
			args = []string{"done", "--worker", worker, task}
		case k < 6:
			args = []string{"release", "--worker", worker, task}
		case k < 7:
			args = []string{"fail", "--worker", worker, "--reason", "random", task}
		default:
			args = []string{"sync"}
		}
		code, _, errs := zergIn(c, args...)
		if code == 1 && args[0] == "sync" {
			t.Fatalf("step %d: sync failed: %s", step, errs)
		}
		if code == 0 && args[0] != "sync" {
			succeeded = append(succeeded, op{c, worker, task, args[0]})
		}
	}
	// Converge: two rounds of syncs over every clone.
	for round := 0; round < 2; round++ {
		for _, c := range clones {
			if code, _, errs := zergIn(c, "sync"); code != 0 {
				t.Fatalf("final sync of %s: %s", c, errs)
			}
		}
	}
	var first string
	for i, c := range clones {
		code, out, errs := zergIn(c, "export")
		if code != 0 {
			t.Fatal(errs)
		}
		if i == 0 {
			first = out
		} else if out != first {
			t.Fatalf("clone %d exports differently from clone 0", i)
		}
		if fsck := commandExists("fsck"); fsck {
			if code, out, errs := zergIn(c, "fsck"); code != 0 {
				t.Fatalf("fsck of clone %d: %s%s", i, out, errs)
			}
		}
	}
	var doc exportDoc
	if err := json.Unmarshal([]byte(first), &doc); err != nil {
		t.Fatal(err)
	}
	history := map[string]map[string]bool{} // task -> "op/worker" seen (conflict records count as kept)
	for _, tk := range doc.Tasks {
		history[tk.ID] = map[string]bool{}
		for _, h := range tk.History {
			history[tk.ID][h.Op+"/"+h.Worker] = true
			if h.Op == "conflict" {
				history[tk.ID]["lost/"+h.Worker] = true
				conflicts++
			}
		}
	}
	for _, o := range succeeded {
		if o.what != "claim" {
			continue
		}
		if !history[o.task]["claim/"+o.worker] && !history[o.task]["lost/"+o.worker] {
			t.Errorf("the claim of %s by %s (in %s) is neither in the history nor recorded as lost", o.task, o.worker, filepath.Base(o.clone))
		}
	}
	return conflicts
}

// commandExists reports whether git-zerg has the command (fsck arrives in
// its own change).
func commandExists(name string) bool {
	for _, c := range commands(&env{}) {
		if c.Name == name {
			return true
		}
	}
	return false
}
