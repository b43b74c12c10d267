package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// gitDaemon serves the bare repositories under base over git:// on a free
// port of 127.0.0.1 until the test ends (or stop is called), and returns
// the URL of base/name.
type gitDaemon struct {
	t    testing.TB
	cmd  *exec.Cmd
	env  []string
	base string
	port int
}

func startGitDaemon(t testing.TB, env []string, base string, port int) *gitDaemon {
	t.Helper()
	if port == 0 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	d := &gitDaemon{t: t, env: env, base: base, port: port}
	d.cmd = exec.Command("git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
		"--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), "--base-path="+base, base)
	d.cmd.Env = env
	// `git daemon` is the git wrapper and the daemon proper its child: in a
	// process group of their own, both go.
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.stop)
	if err := waitUntil(func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
		}
		return err == nil
	}); err != nil {
		t.Fatalf("git daemon did not start: %v", err)
	}
	return d
}

func (d *gitDaemon) url(name string) string {
	return fmt.Sprintf("git://127.0.0.1:%d/%s", d.port, name)
}

func (d *gitDaemon) stop() {
	if d.cmd == nil {
		return
	}
	syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
	d.cmd.Wait()
	d.cmd = nil
}

// levelGraph writes a graph of levels × width tasks: task L<l>-<i> writes
// out/L<l>-<i>.txt and depends on L<l-1>-<i>.
func levelGraph(t testing.TB, path, feature string, levels, width int) []string {
	t.Helper()
	var tasks []graphTask
	var ids []string
	for l := 1; l <= levels; l++ {
		for i := 1; i <= width; i++ {
			id := fmt.Sprintf("L%d-%02d", l, i)
			tk := graphTask{ID: id}
			if l > 1 {
				tk.Dependencies = []string{fmt.Sprintf("L%d-%02d", l-1, i)}
			}
			tasks = append(tasks, tk)
			ids = append(ids, id)
		}
	}
	writeGraph(t, path, feature, tasks)
	return ids
}

// graphTask is a task of a test's graph: it writes out/<ID>.txt, which
// its verification checks.
type graphTask struct {
	ID           string
	Dependencies []string
	Estimate     float64 // estimate_minutes, when not 0
}

// writeGraph writes a task graph of tasks to path.
func writeGraph(t testing.TB, path, feature string, tasks []graphTask) {
	t.Helper()
	type files struct {
		Create []string `json:"create"`
	}
	type task struct {
		ID           string            `json:"id"`
		Title        string            `json:"title"`
		Files        files             `json:"files"`
		Dependencies []string          `json:"dependencies,omitempty"`
		Verification map[string]string `json:"verification"`
		Estimate     float64           `json:"estimate_minutes,omitempty"`
	}
	g := struct {
		Feature string `json:"feature"`
		Tasks   []task `json:"tasks"`
	}{Feature: feature}
	for _, gt := range tasks {
		g.Tasks = append(g.Tasks, task{ID: gt.ID, Title: "write " + gt.ID, Files: files{Create: []string{"out/" + gt.ID + ".txt"}},
			Dependencies: gt.Dependencies, Verification: map[string]string{"command": "test -s out/" + gt.ID + ".txt"}, Estimate: gt.Estimate})
	}
	b, err := json.MarshalIndent(g, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// remoteRushSetup makes a bare remote served by git daemon and n clones
// of it, each with the feature planned and its commands accepted.
func remoteRushSetup(t testing.TB, n int, config string) (dir string, env []string, d *gitDaemon, clones []string, ids []string) {
	return remoteRushSetupGraph(t, n, config, 4, 10)
}

// remoteRushSetupGraph is remoteRushSetup over a graph of the given levels
// and width.
func remoteRushSetupGraph(t testing.TB, n int, config string, levels, width int) (dir string, env []string, d *gitDaemon, clones []string, ids []string) {
	dir = t.TempDir()
	env = gitEnv(dir)
	base := filepath.Join(dir, "srv")
	run(t, dir, env, "git", "init", "-q", "--bare", "-b", "main", filepath.Join(base, "remote.git"))
	d = startGitDaemon(t, env, base, 0)
	url := d.url("remote.git")
	first := filepath.Join(dir, "h1")
	run(t, dir, env, "git", "init", "-q", "-b", "main", first)
	os.MkdirAll(filepath.Join(first, ".zerg"), 0o755)
	os.WriteFile(filepath.Join(first, ".zerg", "config.toml"), []byte(config), 0o644)
	os.WriteFile(filepath.Join(first, "worker.sh"), []byte(workerScript), 0o644)
	ids = levelGraph(t, filepath.Join(first, "graph.json"), "rr", levels, width)
	run(t, first, env, "git", "add", "-A")
	run(t, first, env, "git", "commit", "-q", "-m", "graph, worker and configuration")
	clones = shareHosts(t, dir, env, url, first, n)
	return dir, env, d, clones, ids
}

// shareHosts pushes first, whose graph of feature rr is committed, to the
// remote at url, plans it there, and makes the other n-1 hosts: clones in
// dir that accepted the plan. It returns every host's clone, first first.
func shareHosts(t testing.TB, dir string, env []string, url, first string, n int) []string {
	t.Helper()
	run(t, first, env, "git", "remote", "add", "origin", url)
	run(t, first, env, "git", "push", "-q", "origin", "main")
	run(t, first, env, "git", "zerg", "plan", "--graph", "graph.json")
	run(t, first, env, "git", "zerg", "sync")
	clones := []string{first}
	for i := 2; i <= n; i++ {
		c := filepath.Join(dir, fmt.Sprintf("h%d", i))
		run(t, dir, env, "git", "clone", "-q", url, c)
		run(t, c, env, "git", "zerg", "sync")
		run(t, c, env, "git", "zerg", "plan", "--accept", "--yes", "rr")
		clones = append(clones, c)
	}
	return clones
}

// workerScript writes the task's file, after TASK_SECONDS of work when
// set (the speed benchmark's tasks). With HANG set, the worker of a
// task of level 2 (on host HANG_HOST, when set) says it started (a file in
// $HANG) and waits for $HANG/go (at most a minute): a worker busy when its
// host dies, or when the remote goes away.
//
// With RUNS set, each run of a task appends a line to $RUNS/<task>: the
// worker's name and the git dir of the clone that ran it. With
// DROP_TASK set, that task's worker (once: it makes $DROP_ONCE) waits until
// the remote holds DROP_PINS pins, then runs DROP: the remote loses refs
// while the rush runs. With HOLD set, the workers of level 1 wait for
// $HOLD/go (at most a minute), holding their leases.
const workerScript = `[ -z "$TASK_SECONDS" ] || sleep "$TASK_SECONDS"
[ -z "$RUNS" ] || echo "$ZERG_WORKER $(git rev-parse --path-format=absolute --git-common-dir)" >> "$RUNS/$ZERG_TASK"
if [ -n "$DROP_TASK" ] && [ "$DROP_TASK" = "$ZERG_TASK" ] && mkdir "$DROP_ONCE" 2>/dev/null; then
  i=0
  while [ "$(git -C "$DROP_REMOTE" for-each-ref refs/zerg/work/ | wc -l)" -lt "${DROP_PINS:-0}" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
  sh -c "$DROP"
fi
case "$HOLD:$ZERG_TASK" in
?*:L1-*)
  i=0
  while [ ! -e "$HOLD/go" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done ;;
esac
mkdir -p out && echo "$ZERG_TASK" > "out/$ZERG_TASK.txt"
case "$HANG:$ZERG_TASK" in
?*:L2-*)
  if [ -z "$HANG_HOST" ] || [ "$HANG_HOST" = "$ZERG_HOST" ]; then
    : > "$HANG/started-$ZERG_TASK"
    i=0
    while [ ! -e "$HANG/go" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
  fi ;;
esac
`

// withoutEnv is env without the variable name.
func withoutEnv(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

type rushRun struct {
	out, errOut string
	err         error
}

// startRush runs `git zerg rush --remote origin` in clone as host name
// (ZERG_HOST), or as the clone's own host identity when name is "".
func startRush(ctx context.Context, env []string, clone, host string, extra ...string) (*exec.Cmd, *strings.Builder, *strings.Builder) {
	// git-zerg itself, not through git: kill -9 must reach the rush.
	cmd := exec.CommandContext(ctx, "git-zerg", append([]string{"rush", "--remote", "origin", "--workers", "2"}, extra...)...)
	cmd.Dir = clone
	cmd.Env = withoutEnv(env, "ZERG_HOST")
	if host != "" {
		cmd.Env = append(cmd.Env, "ZERG_HOST="+host)
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	return cmd, &stdout, &stderr
}

// TestRushRemote runs one rush on three hosts (clones of one remote served
// by git daemon, two workers each) over 40 tasks in 4 levels: every task
// is claimed, verified and merged exactly once, every host ends with the
// same state and the same staging holding every task's file, and prints
// the same summary.
func TestRushRemote(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three rushes over git daemon")
	}
	start := time.Now()
	_, env, _, clones, ids := remoteRushSetup(t, 3, "[workers]\ncount = 2\ncommand = \"sh worker.sh\"")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	runs := runHosts(t, ctx, env, clones, [][]string{nil, nil, nil}, [][]string{nil, nil, nil})
	t.Logf("three hosts ran the rush in %s", time.Since(start).Round(time.Millisecond))
	checkRemoteRush(t, env, clones, ids, runs, nil)
}

// checkRemoteRush checks what every host of a finished shared rush must
// agree on.
// retried names the tasks whose first claim's host died: their lease
// expired once and they were claimed again.
func checkRemoteRush(t *testing.T, env []string, clones, ids []string, runs []rushRun, retried map[string]bool) {
	t.Helper()
	summary := regexp.MustCompile(fmt.Sprintf(`(?m)^rush rr complete: %d tasks done, staging zerg/rr/staging at [0-9a-f]+$`, len(ids)))
	for i, r := range runs {
		if !summary.MatchString(r.out) || r.out != runs[0].out {
			t.Errorf("host%d printed %q, host1 %q", i+1, r.out, runs[0].out)
		}
	}
	var export, staging string
	for i, c := range clones {
		run(t, c, env, "git", "zerg", "fsck")
		e := run(t, c, env, "git", "zerg", "export")
		st := strings.TrimSpace(run(t, c, env, "git", "rev-parse", "zerg/rr/staging"))
		if i == 0 {
			export, staging = e, st
		} else {
			if e != export {
				t.Errorf("host%d exports another state than host1", i+1)
			}
			if st != staging {
				t.Errorf("host%d has staging %s, host1 %s", i+1, st, staging)
			}
		}
	}
	remote := strings.Fields(run(t, clones[0], env, "git", "ls-remote", "origin", "refs/heads/zerg/rr/staging"))
	if len(remote) == 0 || remote[0] != staging {
		t.Errorf("the remote's staging is %v, the hosts' %s", remote, staging)
	}
	files := strings.Fields(run(t, clones[0], env, "git", "ls-tree", "-r", "--name-only", staging, "out/"))
	want := make([]string, len(ids))
	for i, id := range ids {
		want[i] = "out/" + id + ".txt"
	}
	sort.Strings(files)
	if strings.Join(files, " ") != strings.Join(want, " ") {
		t.Errorf("staging holds %v, want every task's file", files)
	}
	var doc exportDoc
	if err := json.Unmarshal([]byte(export), &doc); err != nil {
		t.Fatal(err)
	}
	hosts := map[string]int{}
	for _, tk := range doc.Tasks {
		ops := tk.ops()
		claims, expiries := 1, 0
		if retried[tk.ID] {
			claims, expiries = 2, 1
		}
		if tk.Status != "done" || ops["done"] != 1 || ops["merge"] != 1 || ops["conflict"] != 0 ||
			ops["claim"] != claims || ops["expire"] != expiries {
			t.Errorf("%s: %s after %v", tk.ID, tk.Status, ops)
		}
		hosts[tk.Host]++
	}
	t.Logf("tasks per host: %v", hosts)
	// One `done` per task in the log of every host: a commit's own, or
	// one it made together with another host worker's.
	for i, c := range clones {
		done := map[string]int{}
		for _, l := range strings.Split(run(t, c, env, "git", "zerg", "log"), "\n") {
			// <commit> <time> done <task> (<worker>): verified <commit>[; then …]
			//     also done <task>: claimed -> verified (<worker>)
			f := strings.Fields(l)
			switch {
			case len(f) >= 4 && f[2] == "done":
				done[f[3]]++
			case len(f) >= 3 && f[0] == "also" && f[1] == "done":
				done[strings.TrimSuffix(f[2], ":")]++
			}
		}
		for _, id := range ids {
			if done[id] != 1 {
				t.Errorf("host%d: git zerg log has %d done for %s\n%s", i+1, done[id], id, run(t, c, env, "git", "zerg", "log"))
			}
		}
	}
}

// runHosts starts `rush --remote origin` in each clone, host<i+1> with
// envs[i] added, and waits for all of them.
func runHosts(t testing.TB, ctx context.Context, env []string, clones []string, envs [][]string, extra [][]string) []rushRun {
	t.Helper()
	return startHosts(t, ctx, env, clones, envs, extra)()
}

// startHosts is runHosts in two steps: start, then wait.
func startHosts(t testing.TB, ctx context.Context, env []string, clones []string, envs [][]string, extra [][]string) func() []rushRun {
	t.Helper()
	names := make([]string, len(clones))
	for i := range names {
		names[i] = fmt.Sprintf("host%d", i+1)
	}
	return startNamedHosts(t, ctx, env, clones, names, envs, extra)
}

// startNamedHosts is startHosts with each clone's ZERG_HOST given ("" for
// none: the clone's own identity).
func startNamedHosts(t testing.TB, ctx context.Context, env []string, clones, names []string, envs [][]string, extra [][]string) func() []rushRun {
	t.Helper()
	runs := make([]rushRun, len(clones))
	var wg sync.WaitGroup
	for i, c := range clones {
		cmd, stdout, stderr := startRush(ctx, append(append([]string(nil), env...), envs[i]...), c, names[i], extra[i]...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := cmd.Wait()
			runs[i] = rushRun{stdout.String(), stderr.String(), err}
		}()
	}
	return func() []rushRun {
		t.Helper()
		wg.Wait()
		for i, r := range runs {
			// ZERG_REMOTE_LOG=DIR keeps each host's progress in DIR (a
			// benchmark's log is cut short); any other value logs it.
			if dir := os.Getenv("ZERG_REMOTE_LOG"); dir != "" {
				if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
					os.WriteFile(filepath.Join(dir, fmt.Sprintf("host%d-of-%d.log", i+1, len(runs))), []byte(r.errOut), 0o644)
				} else {
					t.Logf("host%d:\n%s", i+1, r.errOut)
				}
			}
		}
		for i, r := range runs {
			if r.err != nil {
				t.Fatalf("host%d: rush: %v\n%s%s", i+1, r.err, r.out, r.errOut)
			}
		}
		return runs
	}
}

// waitStarted waits (at most a minute) until n workers wait in hang, and
// returns the tasks they hold; done reports a rush that ended.
func waitStarted(t *testing.T, hang string, n int, done <-chan struct{}) map[string]bool {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		names, _ := filepath.Glob(filepath.Join(hang, "started-*"))
		if len(names) >= n {
			out := map[string]bool{}
			for _, name := range names {
				out[strings.TrimPrefix(filepath.Base(name), "started-")] = true
			}
			return out
		}
		select {
		case <-done:
			t.Fatal("the rush ended before its workers got to level 2")
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %d workers started level 2 within a minute", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRushRemoteHostDies kills host1 with kill -9 while two of its workers
// are busy: an hour later (the test clock; leases last 30 minutes) the
// other hosts take its tasks, its work pushed before stays, and host1
// rejoins with rush --resume; every task is still done exactly once.
func TestRushRemoteHostDies(t *testing.T) {
	if testing.Short() || os.Getenv("ZERG_REMOTE_FULL") == "" {
		t.Skip("ZERG_REMOTE_FULL=1 runs the failure cases of rush --remote")
	}
	dir, env, _, clones, ids := remoteRushSetup(t, 3,
		"[workers]\ncount = 2\ncommand = \"sh worker.sh\"\n[locks]\nttl = \"30m\"\n[retry]\nbackoff = \"0s\"\n")
	hang := filepath.Join(dir, "hang")
	os.Mkdir(hang, 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cmd, _, _ := startRush(ctx, append(append([]string(nil), env...), "HANG="+hang, "HANG_HOST=host1"), clones[0], "host1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	busy := waitStarted(t, hang, 2, exited)
	cmd.Process.Kill()
	<-exited
	// The orphaned workers may end now: their host is gone.
	os.WriteFile(filepath.Join(hang, "go"), []byte("go\n"), 0o644)
	later := []string{"HANG=" + hang, "ZERG_CLOCK_OFFSET=1h"}
	runs := runHosts(t, ctx, env, clones, [][]string{later, later, later}, [][]string{{"--resume"}, nil, nil})
	// The tasks it held expired once and were claimed again.
	checkRemoteRush(t, env, clones, ids, runs, busy)
}

// TestRushRemoteOutage stops the remote for 5 seconds in the middle of a
// rush: the hosts wait for it, say so, and go on; nothing is lost and
// nothing done twice.
func TestRushRemoteOutage(t *testing.T) {
	if testing.Short() || os.Getenv("ZERG_REMOTE_FULL") == "" {
		t.Skip("ZERG_REMOTE_FULL=1 runs the failure cases of rush --remote")
	}
	dir, env, d, clones, ids := remoteRushSetup(t, 3, "[workers]\ncount = 2\ncommand = \"sh worker.sh\"\n")
	hang := filepath.Join(dir, "hang")
	os.Mkdir(hang, 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	h := []string{"HANG=" + hang}
	wait := startHosts(t, ctx, env, clones, [][]string{h, h, h}, [][]string{nil, nil, nil})
	waitStarted(t, hang, 2, nil)
	port := d.port
	d.stop()
	// host1's workers finish while the remote is away: their results wait
	// for it.
	os.WriteFile(filepath.Join(hang, "go"), []byte("go\n"), 0o644)
	// The outage the scenario is about: the remote away for five seconds of
	// real time, which the hosts' backoff spans.
	time.Sleep(5 * time.Second)
	startGitDaemon(t, env, filepath.Join(dir, "srv"), port)
	runs := wait()
	checkRemoteRush(t, env, clones, ids, runs, nil)
	said := false
	for _, r := range runs {
		said = said || strings.Contains(r.errOut, "does not answer")
	}
	if !said {
		t.Error("no host said that the remote did not answer")
	}
}

// runsPerTask reads the lines workers appended to runs/<task> (RUNS): one
// per run of the task, "<worker> <clone's git dir>".
func runsPerTask(t *testing.T, runs string, ids []string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, id := range ids {
		b, err := os.ReadFile(filepath.Join(runs, id))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		out[id] = strings.FieldsFunc(string(b), func(r rune) bool { return r == '\n' })
	}
	return out
}

// TestRushRemoteOneMachine runs one rush on three clones of one machine
// without ZERG_HOST: each clone is a host of its own (an identity made
// once per clone), so every task runs once, not once per clone.
func TestRushRemoteOneMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three rushes over git daemon")
	}
	dir, env, _, clones, ids := remoteRushSetupGraph(t, 3, "[workers]\ncount = 2\ncommand = \"sh worker.sh\"\n", 2, 4)
	runs := filepath.Join(dir, "runs")
	os.Mkdir(runs, 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	e := []string{"RUNS=" + runs}
	wait := startNamedHosts(t, ctx, env, clones, []string{"", "", ""}, [][]string{e, e, e}, [][]string{nil, nil, nil})
	results := wait()
	for id, by := range runsPerTask(t, runs, ids) {
		if len(by) != 1 {
			t.Errorf("%s ran %d times (by %v), want once", id, len(by), by)
		}
	}
	checkRemoteRush(t, env, clones, ids, results, nil)
	names := map[string]bool{}
	for _, c := range clones {
		b, err := os.ReadFile(filepath.Join(c, ".git", "zerg", "host-id"))
		if err != nil {
			t.Fatal(err)
		}
		names[strings.SplitN(string(b), "\n", 2)[0]] = true
	}
	if len(names) != len(clones) {
		t.Errorf("the clones' host identities are %v, want %d", names, len(clones))
	}
}

// TestRushRemoteCopiedClone copies a clone that has synced (its host
// identity made) with cp -r, and runs one rush of six tasks on the
// original, the copy and a third clone, two workers each, none with
// ZERG_HOST. Beside its original, the copy knows it is one and is refused
// (exit 3) before it claims anything. Elsewhere (the original moved away:
// a copy on another machine), the copy and the original present one
// identity on the remote: the workers hold their tasks until one of the
// two is refused, which is whichever claims while the other holds a lease
// (two tasks are left for it). Nothing runs in the refused clone, and the
// other two finish the rush with every task run once.
func TestRushRemoteCopiedClone(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three rushes over git daemon")
	}
	for _, c := range []struct {
		name  string
		apart bool
	}{{"beside", false}, {"apart", true}} {
		t.Run(c.name, func(t *testing.T) {
			dir, env, _, clones, ids := remoteRushSetupGraph(t, 2, "[workers]\ncount = 2\ncommand = \"sh worker.sh\"\n", 1, 6)
			copied := filepath.Join(dir, "h3")
			run(t, dir, env, "cp", "-r", clones[1], copied)
			if _, err := os.Stat(filepath.Join(copied, ".git", "zerg", "host-id")); err != nil {
				t.Fatalf("the copied clone has no host identity: %v", err)
			}
			original := filepath.Join(clones[1], ".git")
			if c.apart {
				moved := filepath.Join(dir, "h2-moved")
				if err := os.Rename(clones[1], moved); err != nil {
					t.Fatal(err)
				}
				clones[1] = moved
			}
			clones = append(clones, copied)
			runs := filepath.Join(dir, "runs")
			os.Mkdir(runs, 0o755)
			hold := filepath.Join(dir, "hold")
			os.Mkdir(hold, 0o755)
			e := append(append([]string(nil), env...), "RUNS="+runs)
			if c.apart {
				e = append(e, "HOLD="+hold)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			results := make([]rushRun, len(clones))
			ended := make(chan struct{}, len(clones))
			var wg sync.WaitGroup
			for i, c := range clones {
				cmd, stdout, stderr := startRush(ctx, e, c, "")
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					err := cmd.Wait()
					results[i] = rushRun{stdout.String(), stderr.String(), err}
					ended <- struct{}{}
				}()
			}
			if c.apart {
				select {
				case <-ended:
				case <-ctx.Done():
				}
				os.WriteFile(filepath.Join(hold, "go"), []byte("go\n"), 0o644)
			}
			wg.Wait()
			refused := -1
			why := `another clone presents this clone's host identity \S+: the lease of worker-\d\.\S+ on L1-\d+ was not made here`
			if !c.apart {
				why = `this clone is a copy of the clone in ` + regexp.QuoteMeta(original) + `: both present host identity \S+`
			}
			said := regexp.MustCompile(`(?m)^git-zerg: claim refused \(` + why + `\)\nhint: .*host-id.*ZERG_HOST`)
			for i, r := range results {
				if r.err == nil {
					continue
				}
				var ee *exec.ExitError
				if i == 0 || refused >= 0 || !c.apart && i != 2 || !errors.As(r.err, &ee) || ee.ExitCode() != 3 || !said.MatchString(r.errOut) {
					t.Fatalf("h%d: %v\n%s%s", i+1, r.err, r.out, r.errOut)
				}
				refused = i
			}
			if refused < 0 {
				t.Fatal("the copy and its original both ran the rush under one identity")
			}
			t.Logf("h%d was refused:\n%s", refused+1, results[refused].errOut)
			gitDir := filepath.Join(clones[refused], ".git")
			for id, by := range runsPerTask(t, runs, ids) {
				if len(by) != 1 {
					t.Errorf("%s ran %d times (by %v), want once", id, len(by), by)
				}
				for _, b := range by {
					if strings.HasSuffix(b, " "+gitDir) {
						t.Errorf("%s ran in the refused clone h%d", id, refused+1)
					}
				}
			}
			var rest []string
			var restRuns []rushRun
			for i := range clones {
				if i != refused {
					rest, restRuns = append(rest, clones[i]), append(restRuns, results[i])
				}
			}
			checkRemoteRush(t, env, rest, ids, restRuns, nil)
		})
	}
}

// TestRushRemoteLostRefs deletes zerg refs on the remote while a rush runs
// on two hosts (a worker does it, once the other tasks of its level have
// pushed their work): the first host to see a ref gone re-creates it from
// its own state and says so, pinned work the remote lost is pushed again by
// the host that made it, and the rush finishes at once with every task
// done once and every transition in both hosts' logs (those the two made
// apart meet in a sync merge).
func TestRushRemoteLostRefs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs rushes over git daemon")
	}
	for _, c := range []struct {
		name, drop, said string
		pins             int
	}{
		{"locks", "git -C $DROP_REMOTE update-ref -d refs/zerg/locks", "refs/zerg/locks", 0},
		{"feature", "git -C $DROP_REMOTE update-ref -d refs/zerg/features/rr", "refs/zerg/features/rr", 0},
		{"all", "git -C $DROP_REMOTE for-each-ref --format='delete %(refname)' refs/zerg/ | git -C $DROP_REMOTE update-ref --stdin", "refs/zerg/", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, env, _, clones, ids := remoteRushSetupGraph(t, 2, "[workers]\ncount = 2\ncommand = \"sh worker.sh\"\n", 2, 3)
			runs := filepath.Join(dir, "runs")
			os.Mkdir(runs, 0o755)
			// Bounded below the 90 s a lost ref used to cost (a rush of six
			// tasks takes some 10 s on an idle machine).
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			e := []string{"RUNS=" + runs, "DROP_TASK=L1-02", "DROP_ONCE=" + filepath.Join(dir, "dropped"),
				"DROP_REMOTE=" + filepath.Join(dir, "srv", "remote.git"), "DROP=" + c.drop, fmt.Sprintf("DROP_PINS=%d", c.pins)}
			start := time.Now()
			results := runHosts(t, ctx, env, clones, [][]string{e, e}, [][]string{nil, nil})
			t.Logf("the rush took %s", time.Since(start).Round(time.Millisecond))
			if _, err := os.Stat(filepath.Join(dir, "dropped")); err != nil {
				t.Fatal("no worker deleted the remote's refs")
			}
			for id, by := range runsPerTask(t, runs, ids) {
				if len(by) != 1 {
					t.Errorf("%s ran %d times (by %v), want once", id, len(by), by)
				}
			}
			checkRemoteRush(t, env, clones, ids, results, nil)
			// ZERG_KEEP=DIR keeps the hosts and the remote of a failed run
			// for a look at their refs: t.TempDir goes with the test.
			if t.Failed() && os.Getenv("ZERG_KEEP") != "" {
				exec.Command("cp", "-a", dir, os.Getenv("ZERG_KEEP")).Run()
			}
			// The host that re-creates a ref says so, unless it never knew
			// the remote had it (it had not fetched it yet): then the host
			// that knew says so when it catches up.
			said := regexp.MustCompile(`remote origin had lost ` + regexp.QuoteMeta(c.said) + `[^;]*; (re-created from this host's state|another host re-created it)`)
			if !said.MatchString(results[0].errOut + results[1].errOut) {
				t.Errorf("no host said it re-created %s:\n%s\n%s", c.said, results[0].errOut, results[1].errOut)
			}
		})
	}
}

// timeHosts times one rush on each of clones at once, run to its end.
func timeHosts(b *testing.B, env, clones []string) time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	none := make([][]string, len(clones))
	b.StartTimer()
	start := time.Now()
	runHosts(b, ctx, env, clones, none, none)
	return time.Since(start)
}

// BenchmarkRushRemote: 60 tasks of one second each (3 levels of 20), run
// by one host with two workers, then by three hosts with two workers each,
// on the same kind of remote (git daemon): x-one-host is how many times
// faster the three hosts finish. Run with
//
//	go test -run '^$' -bench RushRemote -benchtime 1x ./cmd/git-zerg/
func BenchmarkRushRemote(b *testing.B) {
	config := "[workers]\ncount = 2\ncommand = \"sh worker.sh\"\n"
	timed := func(hosts int) time.Duration {
		b.StopTimer()
		_, env, _, clones, _ := remoteRushSetupGraph(b, hosts, config, 3, 20)
		return timeHosts(b, append(env, "TASK_SECONDS=1"), clones)
	}
	var one, three time.Duration
	for i := 0; i < b.N; i++ {
		one += timed(1)
		three += timed(3)
	}
	b.ReportMetric(one.Seconds()/float64(b.N), "s-one-host")
	b.ReportMetric(three.Seconds()/float64(b.N), "s-three-hosts")
	b.ReportMetric(one.Seconds()/three.Seconds(), "x-one-host")
}
