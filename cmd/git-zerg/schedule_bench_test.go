package main

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRushSchedule runs the same graphs under both schedules in one
// run, whole processes with every overhead of git-zerg included: a
// stand-in worker that takes each task's duration and writes its file, a
// gate on every merge. It reports each schedule's makespan as a multiple
// of the bound no schedule can beat, max(critical path, total work /
// workers). Run with
//
//	go test -run '^$' -bench RushSchedule -benchtime 1x ./cmd/git-zerg/
//
// The stand-in waits on a virtual clock (vclock_test.go), so that an
// agent's minutes cost no wall time while git-zerg's own work counts in
// full: the makespan (s-flow, s-levels) is virtual, the wall time the rush
// took is s-wall-*. Each graph runs with one unit of its durations as
// 60 s, as an agent's task takes, and as 1 s, where git-zerg's fixed cost
// of a task shows. That needs the switch of the test binary
// (ZERG_TEST_IDLE), which stands in for git-zerg here.
//
// ZERG_BENCH_UNIT (a duration) runs that unit alone. ZERG_BENCH_CLOCK=real
// makes the stand-in really sleep, with git-zerg built as README installs
// it, at 1 s a unit unless ZERG_BENCH_UNIT says otherwise.
func BenchmarkRushSchedule(b *testing.B) {
	realClock := os.Getenv("ZERG_BENCH_CLOCK") == "real"
	units := []time.Duration{time.Minute, time.Second}
	if realClock {
		units = units[1:]
	}
	if u, err := time.ParseDuration(os.Getenv("ZERG_BENCH_UNIT")); err == nil && u > 0 {
		units = []time.Duration{u}
	}
	bin := "" // the test binary, on PATH as git-zerg
	if realClock {
		bin = realBinary(b)
	}
	for _, c := range []struct {
		name    string
		tasks   []schedTask
		workers int
	}{
		// Three chains of two whose halves are long and short in turn: a
		// level waits for its slowest task.
		{"chains", chainsGraph(), 3},
		{"dag50", randomDAG(50, 1), 4},
		{"dag200", randomDAG(200, 2), 4},
	} {
		for _, unit := range units {
			b.Run(fmt.Sprintf("%s/unit=%gs", c.name, unit.Seconds()), func(b *testing.B) {
				bound := scheduleBound(c.tasks, c.workers) * unit.Seconds()
				var flow, levels, flowWall, levelsWall time.Duration
				for i := 0; i < b.N; i++ {
					span, wall := timeSchedule(b, bin, c.tasks, c.workers, "flow", unit)
					flow, flowWall = flow+span, flowWall+wall
					span, wall = timeSchedule(b, bin, c.tasks, c.workers, "levels", unit)
					levels, levelsWall = levels+span, levelsWall+wall
				}
				n := float64(b.N)
				b.ReportMetric(bound, "s-bound")
				b.ReportMetric(flow.Seconds()/n, "s-flow")
				b.ReportMetric(levels.Seconds()/n, "s-levels")
				b.ReportMetric(flow.Seconds()/n/bound, "x-bound-flow")
				b.ReportMetric(levels.Seconds()/n/bound, "x-bound-levels")
				b.ReportMetric(flowWall.Seconds()/n, "s-wall-flow")
				b.ReportMetric(levelsWall.Seconds()/n, "s-wall-levels")
			})
		}
	}
}

// TestRushVirtualClock runs the chains of BenchmarkRushSchedule with
// tasks of an hour under both schedules: the rush ends in seconds only if
// its scheduler's word lets the clock skip the agents' hours (else the
// clock is stuck and the test fails in a minute), and virtual time cannot
// beat the critical path.
func TestRushVirtualClock(t *testing.T) {
	if testing.Short() {
		t.Skip("two rushes")
	}
	ts := chainsGraph()
	bound := time.Duration(scheduleBound(ts, 3) * float64(time.Hour))
	for _, schedule := range []string{"flow", "levels"} {
		span, _ := timeSchedule(t, "", ts, 3, schedule, time.Hour)
		if span < bound {
			t.Errorf("%s: virtual makespan %v, under the bound %v", schedule, span, bound)
		}
	}
}

// schedTask is a task of a scheduling benchmark: its dependencies and how
// many units it takes; estimate is what its graph says (estimate_minutes).
type schedTask struct {
	id       string
	deps     []string
	units    float64
	estimate float64
}

func chainsGraph() []schedTask {
	var ts []schedTask
	for _, c := range []struct {
		name        string
		first, next float64
	}{{"A", 6, 1}, {"B", 1, 6}, {"C", 3, 3}} {
		ts = append(ts, schedTask{id: c.name + "1", units: c.first, estimate: c.first},
			schedTask{id: c.name + "2", deps: []string{c.name + "1"}, units: c.next, estimate: c.next})
	}
	return ts
}

// randomDAG is n tasks, each depending on up to three of the fifteen
// before it, whose durations are log-normal (mean one unit, σ 0.8) and
// whose estimates are off by a log-normal factor (σ 0.5), as a person's
// are.
func randomDAG(n int, seed int64) []schedTask {
	rng := rand.New(rand.NewSource(seed))
	const sigma = 0.8
	mu := -sigma * sigma / 2 // mean exp(mu + σ²/2) = 1
	ts := make([]schedTask, n)
	for i := range ts {
		t := &ts[i]
		t.id = fmt.Sprintf("T%03d", i+1)
		t.units = math.Exp(mu + sigma*rng.NormFloat64())
		t.estimate = t.units * math.Exp(0.5*rng.NormFloat64())
		if i == 0 {
			continue
		}
		seen := map[int]bool{}
		for k := rng.Intn(4); k > 0; k-- {
			d := max(0, i-15) + rng.Intn(min(i, 15))
			if !seen[d] {
				seen[d] = true
				t.deps = append(t.deps, ts[d].id)
			}
		}
	}
	return ts
}

// scheduleBound is max(critical path, total work / workers), in units.
func scheduleBound(ts []schedTask, workers int) float64 {
	finish := map[string]float64{}
	total, critical := 0.0, 0.0
	for _, t := range ts { // dependencies come first
		start := 0.0
		for _, d := range t.deps {
			start = max(start, finish[d])
		}
		finish[t.id] = start + t.units
		critical = max(critical, finish[t.id])
		total += t.units
	}
	return max(critical, total/float64(workers))
}

// timeSchedule plans ts in a fresh repository and runs one rush of it
// under schedule, with git-zerg from bin ("": the test binary, and the
// virtual clock). It returns the rush's makespan and the wall time it
// took (the same with a real clock).
func timeSchedule(b testing.TB, bin string, ts []schedTask, workers int, schedule string, unit time.Duration) (span, wall time.Duration) {
	timer(b, false)
	dir := b.TempDir()
	env := gitEnv(dir)
	wait := "zergwait"
	if bin != "" {
		env = append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		wait = "sleep"
	}
	repo := filepath.Join(dir, "repo")
	run(b, dir, env, "git", "init", "-q", "-b", "main", repo)
	var tasks []graphTask
	var durations strings.Builder
	for _, t := range ts {
		tasks = append(tasks, graphTask{ID: t.id, Dependencies: t.deps, Estimate: t.estimate})
		fmt.Fprintf(&durations, "%s %.3f\n", t.id, t.units*unit.Seconds())
	}
	writeGraph(b, filepath.Join(repo, "graph.json"), "sched", tasks)
	config := fmt.Sprintf("[workers]\ncount = %d\ncommand = \"sh worker.sh\"\n\n[rush]\nschedule = %q\n\n[[gates]]\nname = \"check\"\ncommand = \"true\"\n", workers, schedule)
	for name, body := range map[string]string{
		".zerg/config.toml": config,
		"durations.txt":     durations.String(),
		"worker.sh":         wait + " \"$(sed -n \"s/^$ZERG_TASK //p\" durations.txt)\"\nmkdir -p out && echo \"$ZERG_TASK\" > \"out/$ZERG_TASK.txt\"\n",
	} {
		p := filepath.Join(repo, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	run(b, repo, env, "git", "add", "-A")
	run(b, repo, env, "git", "commit", "-q", "-m", "graph, worker and configuration")
	run(b, repo, env, "git", "zerg", "plan", "--graph", "graph.json")

	var clock *clockServer
	if bin == "" {
		// A socket's path has room for about a hundred bytes.
		sockDir, err := os.MkdirTemp("", "zergclock")
		if err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(sockDir)
		sock := filepath.Join(sockDir, "clock.sock")
		env = append(env, "ZERG_TEST_IDLE="+sock)
		if clock, err = serveClock(sock); err != nil {
			b.Fatal(err)
		}
		defer clock.Close()
	}
	cmd := exec.Command("git", "zerg", "rush")
	cmd.Dir, cmd.Env = repo, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // to end what it leaves when it fails
	out, err := os.Create(filepath.Join(dir, "rush.out"))
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	timer(b, true)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	if clock != nil {
		clock.reset() // virtual time begins with the rush
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Every wait bounded: a clock with nothing moving for a minute, or a
	// real rush past five times its bound and two minutes, is stuck.
	limit := time.Duration(5*scheduleBound(ts, workers)*float64(unit)) + 2*time.Minute
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var runErr error
wait:
	for {
		select {
		case runErr = <-done:
			break wait
		case <-tick.C:
		}
		why := ""
		if clock != nil {
			why = clock.stuck(time.Minute)
		} else if time.Since(start) > limit {
			why = fmt.Sprintf("rush still running after %v", limit)
		}
		if why != "" {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			b.Fatalf("rush (%s): %s\n%s", schedule, why, readFile(b, out.Name()))
		}
	}
	wall = time.Since(start)
	timer(b, false)
	if runErr != nil {
		b.Fatalf("rush (%s): %v\n%s", schedule, runErr, readFile(b, out.Name()))
	}
	if clock == nil {
		return wall, wall
	}
	return clock.Now(), wall
}

// timer starts or stops a benchmark's timer; a test has none.
func timer(tb testing.TB, on bool) {
	if b, ok := tb.(*testing.B); ok {
		if on {
			b.StartTimer()
		} else {
			b.StopTimer()
		}
	}
}

func readFile(b testing.TB, path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return string(data)
}
