package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The flow schedule of a rush shared through a remote: two clones of a bare
// remote served by git daemon, each a host, with workers that block on
// files the test (or another worker) makes, never on time.

// flowRemoteSetup makes a bare remote served by git daemon and n clones
// of it with tasks planned (feature rr) and accepted, config as
// .zerg/config.toml and files beside it (worker.sh, gate.sh...).
func flowRemoteSetup(t testing.TB, n int, config string, files map[string]string, tasks []graphTask) (dir string, env []string, clones []string) {
	t.Helper()
	dir = t.TempDir()
	env = gitEnv(dir)
	base := filepath.Join(dir, "srv")
	run(t, dir, env, "git", "init", "-q", "--bare", "-b", "main", filepath.Join(base, "remote.git"))
	d := startGitDaemon(t, env, base, 0)
	url := d.url("remote.git")
	first := filepath.Join(dir, "h1")
	run(t, dir, env, "git", "init", "-q", "-b", "main", first)
	files[".zerg/config.toml"] = config
	for name, body := range files {
		p := filepath.Join(first, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeGraph(t, filepath.Join(first, "graph.json"), "rr", tasks)
	run(t, first, env, "git", "add", "-A")
	run(t, first, env, "git", "commit", "-q", "-m", "graph, worker and configuration")
	return dir, env, shareHosts(t, dir, env, url, first, n)
}

// ids is the tasks' ids.
func ids(tasks []graphTask) []string {
	out := make([]string, len(tasks))
	for i, tk := range tasks {
		out[i] = tk.ID
	}
	return out
}

// stagingMerges counts, by task, the merges of its work on the first
// parents of the clone's staging.
func stagingMerges(t *testing.T, clone string, env []string) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, s := range strings.Split(run(t, clone, env, "git", "log", "--first-parent", "--format=%s", "zerg/rr/staging"), "\n") {
		if id, ok := strings.CutSuffix(strings.TrimPrefix(s, "merge "), " into staging"); ok && strings.HasPrefix(s, "merge ") {
			n[id]++
		}
	}
	return n
}

// TestRushRemoteFlowStartsEarly: by dependencies, two hosts of one worker
// each run A1 → A2 beside a long B1, and A2 starts while B1 still runs:
// B1's worker waits until A2's worker has started (level by level, A2 would
// wait for B1, and B1's wait would run out).
func TestRushRemoteFlowStartsEarly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two rushes over git daemon")
	}
	worker := `case "$ZERG_TASK" in
A2) : > "$MARK/A2-started" ;;
B1) waitfor exists "$MARK/A2-started" && : > "$MARK/B1-saw-A2" ;;
esac
mkdir -p out && echo "$ZERG_TASK" > "out/$ZERG_TASK.txt"
`
	tasks := []graphTask{{ID: "A1", Estimate: 5}, {ID: "A2", Dependencies: []string{"A1"}, Estimate: 5}, {ID: "B1", Estimate: 20}}
	dir, env, clones := flowRemoteSetup(t, 2, "[workers]\ncount = 1\ncommand = \"sh worker.sh\"\n", map[string]string{"worker.sh": worker}, tasks)
	mark := filepath.Join(dir, "mark")
	os.Mkdir(mark, 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	e := []string{"MARK=" + mark}
	runs := runHosts(t, ctx, env, clones, [][]string{e, e}, [][]string{{"--workers", "1"}, {"--workers", "1"}})
	if _, err := os.Stat(filepath.Join(mark, "B1-saw-A2")); err != nil {
		t.Error("B1's worker ended without A2 started: A2 waited for B1's level")
	}
	checkRemoteRush(t, env, clones, ids(tasks), runs, nil)
}

// TestRushRemoteFlowHostDies kills host1 (kill -9 of its rush and of its
// workers' process groups) once its task X is verified, merged on its
// staging and gated, just before the push that would record it done; its
// other worker still holds W. host2, running all along, merges X (its host
// shows no sign of life), takes W back once its lease runs out and runs it,
// then Z (after X) and finishes the feature: every task done and merged
// once, X not run again, fsck clean.
func TestRushRemoteFlowHostDies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two rushes over git daemon")
	}
	worker := `echo "$ZERG_HOST" >> "$MARK/runs-$ZERG_TASK"
case "$ZERG_TASK:$ZERG_HOST" in
X:*) : > "$MARK/X-started"; waitfor exists "$MARK/Y-started" ;;
W:host1) : > "$MARK/W-started"; waitfor hang ;;
Y:*) : > "$MARK/Y-started"; waitfor exists "$MARK/killed" ;;
esac
mkdir -p out && echo "$ZERG_TASK" > "out/$ZERG_TASK.txt"
`
	tasks := []graphTask{{ID: "X", Estimate: 30}, {ID: "W", Estimate: 20}, {ID: "Y", Estimate: 10},
		{ID: "Z", Dependencies: []string{"X"}, Estimate: 1}}
	config := "[workers]\ncount = 2\ncommand = \"sh worker.sh\"\n[locks]\nttl = \"9s\"\n[retry]\nbackoff = \"0s\"\n"
	dir, env, clones := flowRemoteSetup(t, 2, config, map[string]string{"worker.sh": worker}, tasks)
	mark := filepath.Join(dir, "mark")
	os.Mkdir(mark, 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	hook := `echo "$ZERG_TEST_TASKS" > "$MARK/merging.tmp" && mv "$MARK/merging.tmp" "$MARK/merging"; waitfor hang`
	h1, _, h1err := startRush(ctx, append(append([]string(nil), env...), "MARK="+mark, "ZERG_TEST_BEFORE_DONE="+hook), clones[0], "host1")
	h1.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the rush and what it runs in its own group
	if err := h1.Start(); err != nil {
		t.Fatal(err)
	}
	h1done := make(chan struct{})
	go func() { h1.Wait(); close(h1done) }()
	killed := false
	kill := func() {
		if killed {
			return
		}
		killed = true
		syscall.Kill(-h1.Process.Pid, syscall.SIGKILL)
		groups, _ := filepath.Glob(filepath.Join(clones[0], ".git", "zerg", "run", "rr", "*", "pgid"))
		groups = append(groups, filepath.Join(clones[0], ".git", "zerg", "run", "rr", "gates.pgid"))
		for _, g := range groups {
			if b, err := os.ReadFile(g); err == nil {
				if f := strings.Fields(string(b)); len(f) > 0 {
					if pgid, err := strconv.Atoi(f[0]); err == nil && pgid > 1 {
						syscall.Kill(-pgid, syscall.SIGKILL)
					}
				}
			}
		}
		<-h1done
	}
	defer kill()
	waitFiles(t, h1done, filepath.Join(mark, "X-started"), filepath.Join(mark, "W-started"))
	wait := startNamedHosts(t, ctx, env, clones[1:], []string{"host2"}, [][]string{{"MARK=" + mark}}, [][]string{{"--workers", "1"}})
	waitFiles(t, h1done, filepath.Join(mark, "merging"))
	if b, _ := os.ReadFile(filepath.Join(mark, "merging")); strings.TrimSpace(string(b)) != "X" {
		t.Fatalf("host1 stopped before recording %q done, want X", b)
	}
	kill()
	os.WriteFile(filepath.Join(mark, "killed"), nil, 0o644)
	runs := wait()
	if t.Failed() {
		t.Logf("host1:\n%s", h1err)
	}
	if !regexp.MustCompile(`(?m)^rush rr complete: 4 tasks done`).MatchString(runs[0].out) {
		t.Errorf("host2 printed %q", runs[0].out)
	}
	for id, want := range map[string]string{"X": "host1", "W": "host1 host2", "Y": "host2", "Z": "host2"} {
		b, _ := os.ReadFile(filepath.Join(mark, "runs-"+id))
		if got := strings.Join(strings.Fields(string(b)), " "); got != want {
			t.Errorf("%s ran on %q, want %q", id, got, want)
		}
	}
	run(t, clones[1], env, "git", "zerg", "fsck")
	for _, tk := range exported(t, clones[1], env).Tasks {
		ops := tk.ops()
		claims, expiries := 1, 0
		if tk.ID == "W" {
			claims, expiries = 2, 1 // its lease ran out with host1
		}
		if tk.Status != "done" || ops["done"] != 1 || ops["merge"] != 1 || ops["claim"] != claims || ops["expire"] != expiries {
			t.Errorf("%s: %s after %v", tk.ID, tk.Status, ops)
		}
	}
	merges := stagingMerges(t, clones[1], env)
	for _, id := range ids(tasks) {
		if merges[id] != 1 {
			t.Errorf("staging merges %s %d times, want once: %v", id, merges[id], merges)
		}
	}
	remote := strings.Fields(run(t, clones[1], env, "git", "ls-remote", "origin", "refs/heads/zerg/rr/staging"))
	if local := strings.TrimSpace(run(t, clones[1], env, "git", "rev-parse", "zerg/rr/staging")); len(remote) == 0 || remote[0] != local {
		t.Errorf("the remote's staging is %v, host2's %s", remote, local)
	}
}

// TestRushRemoteFlowMergesRace: one host merges for all, and a host
// that looks gone is merged for: host1 merges and gates X, then pauses
// just before its push, making no other transition (Z, after X, cannot
// start), so host2, which sees it do nothing, merges X itself and pushes.
// Only then does host1's push go: it loses its lease on the staging,
// takes host2's and finds X in it. X is merged once and recorded done
// once, Z is run once, and the final staging passed the gates on both
// hosts.
func TestRushRemoteFlowMergesRace(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two rushes over git daemon")
	}
	worker := `echo "$ZERG_HOST" >> "$MARK/runs-$ZERG_TASK"
mkdir -p out && echo "$ZERG_TASK" > "out/$ZERG_TASK.txt"
`
	tasks := []graphTask{{ID: "X"}, {ID: "Z", Dependencies: []string{"X"}}}
	config := "[workers]\ncount = 1\ncommand = \"sh worker.sh\"\n\n[[gates]]\nname = \"check\"\ncommand = \"test -f out/X.txt\"\n"
	dir, env, clones := flowRemoteSetup(t, 2, config, map[string]string{"worker.sh": worker}, tasks)
	mark := filepath.Join(dir, "mark")
	os.Mkdir(mark, 0o755)
	remote := filepath.Join(dir, "srv", "remote.git")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	hook := `: > "$MARK/merging"; waitfor ok git --git-dir="$REMOTE" cat-file -e refs/heads/zerg/rr/staging:out/X.txt`
	e := []string{"MARK=" + mark, "REMOTE=" + remote}
	first := startNamedHosts(t, ctx, env, clones[:1], []string{"host1"}, [][]string{append(e, "ZERG_TEST_BEFORE_DONE="+hook)}, [][]string{nil})
	waitFiles(t, nil, filepath.Join(mark, "merging"))
	second := startNamedHosts(t, ctx, env, clones[1:], []string{"host2"}, [][]string{e}, [][]string{nil})
	runs := append(first(), second()...)
	checkRemoteRush(t, env, clones, ids(tasks), runs, nil)
	if !strings.Contains(runs[0].errOut, "moved while this host merged") {
		t.Errorf("host1 did not lose its push to host2's merge:\n%s", runs[0].errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(mark, "runs-X")); strings.TrimSpace(string(b)) != "host1" {
		t.Errorf("X ran on %q, want host1 alone", b)
	}
	if b, _ := os.ReadFile(filepath.Join(mark, "runs-Z")); len(strings.Fields(string(b))) != 1 {
		t.Errorf("Z ran on %q, want one host", b)
	}
	for i, c := range clones {
		merges := stagingMerges(t, c, env)
		for _, id := range ids(tasks) {
			if merges[id] != 1 {
				t.Errorf("host%d: staging merges %s %d times, want once: %v", i+1, id, merges[id], merges)
			}
		}
		tree := strings.TrimSpace(run(t, c, env, "git", "rev-parse", "zerg/rr/staging^{tree}"))
		if err := exec.Command("git", "-C", c, "rev-parse", "-q", "--verify", "refs/zerg/gates/"+tree).Run(); err != nil {
			t.Errorf("host%d: the final staging's tree %s has no gate pass here", i+1, tree)
		}
	}
	for _, tk := range exported(t, clones[1], env).Tasks {
		ops := tk.ops()
		if tk.Status != "done" || ops["merge"] != 1 {
			t.Errorf("%s: %s after %v", tk.ID, tk.Status, ops)
		}
	}
}

// waitFiles waits (at most waitBound) until every file exists; ended
// reports a process that ended meanwhile.
func waitFiles(t *testing.T, ended <-chan struct{}, files ...string) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for {
		missing := ""
		for _, f := range files {
			if _, err := os.Stat(f); err != nil {
				missing = f
				break
			}
		}
		if missing == "" {
			return
		}
		select {
		case <-ended:
			t.Fatalf("the rush ended before %s was made", filepath.Base(missing))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not made within %s", filepath.Base(missing), waitBound)
		}
	}
}

// BenchmarkRushRemoteSchedule runs one graph on two hosts of two workers
// each, by dependencies and then level by level: three chains of two tasks
// whose halves take 6+1, 1+6 and 3+3 seconds, a gate on every merge. By
// dependencies the rush can end after 7 s (the longest chain), level by
// level after 12 (each level waits for its 6 s task). Run with
//
//	go test -run '^$' -bench RushRemoteSchedule -benchtime 1x ./cmd/git-zerg/
func BenchmarkRushRemoteSchedule(b *testing.B) {
	var tasks []graphTask
	var durations strings.Builder
	for _, c := range []struct {
		name        string
		first, next float64
	}{{"A", 6, 1}, {"B", 1, 6}, {"C", 3, 3}} {
		tasks = append(tasks, graphTask{ID: c.name + "1", Estimate: c.first}, graphTask{ID: c.name + "2", Dependencies: []string{c.name + "1"}, Estimate: c.next})
		fmt.Fprintf(&durations, "%s1 %g\n%s2 %g\n", c.name, c.first, c.name, c.next)
	}
	worker := "sleep \"$(sed -n \"s/^$ZERG_TASK //p\" durations.txt)\"\nmkdir -p out && echo \"$ZERG_TASK\" > \"out/$ZERG_TASK.txt\"\n"
	timed := func(schedule string) time.Duration {
		b.StopTimer()
		config := fmt.Sprintf("[workers]\ncount = 2\ncommand = \"sh worker.sh\"\n\n[rush]\nschedule = %q\n\n[[gates]]\nname = \"check\"\ncommand = \"true\"\n", schedule)
		_, env, clones := flowRemoteSetup(b, 2, config, map[string]string{"worker.sh": worker, "durations.txt": durations.String()}, tasks)
		return timeHosts(b, env, clones)
	}
	var flow, levels time.Duration
	for i := 0; i < b.N; i++ {
		flow += timed("flow")
		levels += timed("levels")
	}
	n := float64(b.N)
	b.ReportMetric(flow.Seconds()/n, "s-flow")
	b.ReportMetric(levels.Seconds()/n, "s-levels")
}
