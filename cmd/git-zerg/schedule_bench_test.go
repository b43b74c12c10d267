package main

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkRushSchedule runs the same graphs under both schedules in one
// run, whole processes (the real binary) with every overhead included: a
// stand-in worker that takes each task's duration and writes its file, a
// gate on every merge. It reports each schedule's wall time as a multiple
// of the bound no schedule can beat, max(critical path, total work /
// workers). Run with
//
//	go test -run '^$' -bench RushSchedule -benchtime 1x ./cmd/git-zerg/
//
// ZERG_BENCH_UNIT (a duration, default 1s) is what one unit of the graphs'
// durations takes.
func BenchmarkRushSchedule(b *testing.B) {
	unit := time.Second
	if u, err := time.ParseDuration(os.Getenv("ZERG_BENCH_UNIT")); err == nil && u > 0 {
		unit = u
	}
	bin := realBinary(b)
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
		b.Run(c.name, func(b *testing.B) {
			bound := scheduleBound(c.tasks, c.workers) * unit.Seconds()
			var flow, levels time.Duration
			for i := 0; i < b.N; i++ {
				flow += timeSchedule(b, bin, c.tasks, c.workers, "flow", unit)
				levels += timeSchedule(b, bin, c.tasks, c.workers, "levels", unit)
			}
			n := float64(b.N)
			b.ReportMetric(bound, "s-bound")
			b.ReportMetric(flow.Seconds()/n, "s-flow")
			b.ReportMetric(levels.Seconds()/n, "s-levels")
			b.ReportMetric(flow.Seconds()/n/bound, "x-bound-flow")
			b.ReportMetric(levels.Seconds()/n/bound, "x-bound-levels")
		})
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

// timeSchedule plans ts in a fresh repository and times one rush of it
// under schedule.
func timeSchedule(b *testing.B, bin string, ts []schedTask, workers int, schedule string, unit time.Duration) time.Duration {
	b.StopTimer()
	dir := b.TempDir()
	env := append(gitEnv(dir), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
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
		"worker.sh":         "sleep \"$(sed -n \"s/^$ZERG_TASK //p\" durations.txt)\"\nmkdir -p out && echo \"$ZERG_TASK\" > \"out/$ZERG_TASK.txt\"\n",
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
	cmd := exec.Command("git", "zerg", "rush")
	cmd.Dir, cmd.Env = repo, env
	b.StartTimer()
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	b.StopTimer()
	if err != nil {
		b.Fatalf("rush (%s): %v\n%s", schedule, err, out)
	}
	return took
}
