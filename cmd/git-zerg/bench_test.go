package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Benchmarks time whole processes, as users and hooks pay for them: the
// test binary doubles as git-zerg on PATH (see TestMain). Run with
//
//	go test -run XXX -bench . ./cmd/git-zerg/
var benchSizes = []int{100, 1000, 10000}

type benchRepo struct {
	dir, repo, graph string
	bin              string // the git-zerg timed
	env              []string
}

func newBenchRepo(b testing.TB, tasks int) *benchRepo {
	b.Helper()
	dir := b.TempDir()
	bin := realBinary(b)
	r := &benchRepo{dir: dir, repo: filepath.Join(dir, "repo"), graph: filepath.Join(dir, "graph.json"), bin: filepath.Join(bin, "git-zerg"),
		env: append(gitEnv(dir), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))}
	run(b, dir, r.env, "git", "init", "-q", "-b", "main", r.repo)
	run(b, r.repo, r.env, "git", "commit", "-q", "--allow-empty", "-m", "initial")
	checkOnlyGraph(b, r.graph, "bench", tasks)
	return r
}

// realBinary builds git-zerg itself into a directory of the benchmark's
// own and returns it: the test binary, which stands in for git-zerg in the
// tests, also carries the tests and the testing package and starts
// slower, and benchmarks time what users run.
func realBinary(b testing.TB) string {
	b.Helper()
	dir := b.TempDir()
	// Built as README installs it: static, no dynamic loader at start.
	build := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", dir, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}

func (r *benchRepo) zerg(b *testing.B, args ...string) {
	cmd := exec.Command(r.bin, args...)
	cmd.Dir, cmd.Env = r.repo, r.env
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git zerg %v: %v\n%s", args, err, out)
	}
}

// BenchmarkPlan also plans 100,000 tasks with ZERG_BENCH_100K=1: too long
// for every run of -bench ., the size a plan is meant to scale to.
func BenchmarkPlan(b *testing.B) {
	sizes := benchSizes
	if os.Getenv("ZERG_BENCH_100K") == "1" {
		sizes = append(sizes[:len(sizes):len(sizes)], 100000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			r := newBenchRepo(b, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r.zerg(b, "plan", "--force", "--graph", r.graph)
			}
		})
	}
}

// BenchmarkClaim claims a named task (the cost of one transition); each
// iteration uses a fresh worker and task, replanning when all are taken.
func BenchmarkClaim(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			r := newBenchRepo(b, n)
			r.zerg(b, "plan", "--graph", r.graph)
			next := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if next == n || (next%10 == 9) {
					// every tenth task waits for its predecessor: skip it
					next++
				}
				if next >= n {
					b.StopTimer()
					r.zerg(b, "plan", "--force", "--graph", r.graph)
					next = 0
					b.StartTimer()
				}
				r.zerg(b, "claim", "--worker", fmt.Sprintf("w%d", i), fmt.Sprintf("T%04d", next))
				next++
			}
		})
	}
}

// BenchmarkClaimBest claims the best ready task, each iteration paired
// with one `git update-ref` in the same repository (the least a transition
// stored in git can cost): x-update-ref is their ratio, which holds while
// the machine's speed drifts.
func BenchmarkClaimBest(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			r := newBenchRepo(b, n)
			r.zerg(b, "plan", "--graph", r.graph)
			r.zerg(b, "status")
			head := r.head(b)
			left := n * 9 / 10
			var zerg, plain time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if left == 0 {
					b.StopTimer()
					r.zerg(b, "plan", "--force", "--graph", r.graph)
					left = n * 9 / 10
					b.StartTimer()
				}
				start := time.Now()
				r.zerg(b, "claim", "--worker", fmt.Sprintf("w%d", i))
				zerg += time.Since(start)
				left--
				start = time.Now()
				r.git(b, "update-ref", "refs/heads/bench", head)
				plain += time.Since(start)
			}
			b.ReportMetric(float64(zerg.Microseconds())/1000/float64(b.N), "ms-claim")
			b.ReportMetric(float64(plain.Microseconds())/1000/float64(b.N), "ms-update-ref")
			b.ReportMetric(zerg.Seconds()/plain.Seconds(), "x-update-ref")
		})
	}
}

// BenchmarkStatus is status for people, a summary past 50 tasks, paired
// with `git rev-parse HEAD`.
func BenchmarkStatus(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			r := newBenchRepo(b, n)
			r.zerg(b, "plan", "--graph", r.graph)
			r.zerg(b, "claim", "--worker", "w1")
			r.zerg(b, "status")
			r.pairedWithRevParse(b, "status")
		})
	}
}

// BenchmarkVersion is the start of the program: `git zerg --version`
// through git, as users type it, paired with `git rev-parse HEAD`, with
// `git floor`: the smallest Go program (`func main() {}`), built as README
// installs git-zerg and run through git the same way, the floor of any git
// subcommand written in Go on the machine, and with `git deps`: a program
// that does nothing but link every package from outside this module that
// git-zerg imports, the floor of any program built on them. x-floor is
// git-zerg's start against the first, x-deps-floor what its dependencies
// cost by themselves (their package initialisation, their size) and x-deps
// what is left for git-zerg's own code; the ratios hold while the
// machine's speed drifts, as the four run in turn in every iteration.
func BenchmarkVersion(b *testing.B) {
	r := newBenchRepo(b, 1)
	bin := filepath.Dir(r.bin)
	buildProgram(b, filepath.Join(bin, "git-floor"), "package main\n\nfunc main() {}\n")
	buildProgram(b, filepath.Join(bin, "git-deps"), depsProgram(b))
	var zerg, plain, floor, deps time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r.git(b, "zerg", "--version")
		zerg += time.Since(start)
		start = time.Now()
		r.git(b, "rev-parse", "HEAD")
		plain += time.Since(start)
		start = time.Now()
		r.git(b, "floor")
		floor += time.Since(start)
		start = time.Now()
		r.git(b, "deps")
		deps += time.Since(start)
	}
	b.ReportMetric(float64(zerg.Microseconds())/1000/float64(b.N), "ms-zerg")
	b.ReportMetric(float64(plain.Microseconds())/1000/float64(b.N), "ms-rev-parse")
	b.ReportMetric(zerg.Seconds()/plain.Seconds(), "x-rev-parse")
	b.ReportMetric(float64(floor.Microseconds())/1000/float64(b.N), "ms-floor")
	b.ReportMetric(floor.Seconds()/plain.Seconds(), "x-rev-parse-floor")
	b.ReportMetric(zerg.Seconds()/floor.Seconds(), "x-floor")
	b.ReportMetric(float64(deps.Microseconds())/1000/float64(b.N), "ms-deps")
	b.ReportMetric(deps.Seconds()/floor.Seconds(), "x-deps-floor")
	b.ReportMetric(zerg.Seconds()/deps.Seconds(), "x-deps")
}

// depsProgram is the source of a program that links, and so initialises,
// every package from outside this module that git-zerg's packages import,
// as git-zerg's binary is built (README's build tags), and does nothing.
func depsProgram(b *testing.B) string {
	b.Helper()
	list := exec.Command("go", "list", "-tags", "urfave_cli_no_docs", "-deps",
		"-f", `{{if .Module}}{{if .Module.Main}}{{join .Imports "\n"}}{{end}}{{end}}`, ".")
	out, err := list.Output()
	if err != nil {
		b.Fatalf("go list: %v", err)
	}
	self := run(b, ".", os.Environ(), "go", "list", "-m")
	imports := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		if !strings.HasPrefix(p, strings.TrimSpace(self)+"/") {
			imports[p] = true
		}
	}
	src := "package main\n\nimport (\n"
	for _, p := range slices.Sorted(maps.Keys(imports)) {
		src += fmt.Sprintf("\t_ %q\n", p)
	}
	return src + ")\n\nfunc main() {}\n"
}

// buildProgram builds src, a main package, into out, as README builds
// git-zerg, in a module of its own that requires what this one does, so
// that its imports resolve to the versions git-zerg is built with.
func buildProgram(b *testing.B, out, src string) {
	b.Helper()
	dir := b.TempDir()
	gomod := run(b, ".", os.Environ(), "go", "env", "GOMOD")
	mod, err := os.ReadFile(strings.TrimSpace(gomod))
	if err != nil {
		b.Fatal(err)
	}
	sum, _ := os.ReadFile(filepath.Join(filepath.Dir(strings.TrimSpace(gomod)), "go.sum"))
	_, rest, _ := strings.Cut(string(mod), "\n")
	for name, body := range map[string]string{"go.mod": "module program\n" + rest, "go.sum": string(sum), "main.go": src} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	build := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", out, ".")
	build.Dir, build.Env = dir, append(os.Environ(), "CGO_ENABLED=0")
	if o, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, o)
	}
}

// pairedWithRevParse times `git zerg args...` against `git rev-parse HEAD`
// in the same iterations.
func (r *benchRepo) pairedWithRevParse(b *testing.B, args ...string) {
	var zerg, plain time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r.zerg(b, args...)
		zerg += time.Since(start)
		start = time.Now()
		r.git(b, "rev-parse", "HEAD")
		plain += time.Since(start)
	}
	b.ReportMetric(float64(zerg.Microseconds())/1000/float64(b.N), "ms-zerg")
	b.ReportMetric(float64(plain.Microseconds())/1000/float64(b.N), "ms-rev-parse")
	b.ReportMetric(zerg.Seconds()/plain.Seconds(), "x-rev-parse")
}

func (r *benchRepo) head(b *testing.B) string {
	head := run(b, r.repo, r.env, "git", "rev-parse", "HEAD")
	return head[:len(head)-1]
}

func (r *benchRepo) git(b *testing.B, args ...string) {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = r.repo, r.env
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// BenchmarkStatusJSON: every task as JSON, paired with `git rev-parse HEAD`.
func BenchmarkStatusJSON(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			r := newBenchRepo(b, n)
			r.zerg(b, "plan", "--graph", r.graph)
			r.zerg(b, "claim", "--worker", "w1")
			r.zerg(b, "status", "--json") // warm the cache, as any earlier command would
			r.pairedWithRevParse(b, "status", "--json")
		})
	}
}

// BenchmarkUpdateRef is the yardstick: one `git update-ref`, the least a
// state transition stored in git can cost.
func BenchmarkUpdateRef(b *testing.B) {
	r := newBenchRepo(b, 1)
	head := run(b, r.repo, r.env, "git", "rev-parse", "HEAD")
	head = head[:len(head)-1]
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command("git", "update-ref", "refs/heads/bench", head)
		cmd.Dir, cmd.Env = r.repo, r.env
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRush: a rush of 100 tasks in 5 levels with 4 workers that only
// write their file, next to testdata/bench/plain_rush.sh doing the same git
// work (worktree add, commit, merge-tree, update-ref) without any state.
// Each iteration runs both, one after the other, so that the ratio
// (reported as x-plain) holds even while the machine's speed drifts.
func BenchmarkRush(b *testing.B) {
	const tasks, levelsN, workers = 100, 5, 4
	graph := func(path string) {
		type task struct {
			ID           string              `json:"id"`
			Title        string              `json:"title"`
			Files        map[string][]string `json:"files"`
			Dependencies []string            `json:"dependencies"`
			Verification map[string]string   `json:"verification"`
		}
		var ts []task
		per := tasks / levelsN
		for l := 1; l <= levelsN; l++ {
			for i := 1; i <= per; i++ {
				id := fmt.Sprintf("L%dT%d", l, i)
				tk := task{ID: id, Title: id, Files: map[string][]string{"create": {id + ".txt"}},
					Verification: map[string]string{"command": "test -f " + id + ".txt"}}
				if l > 1 {
					tk.Dependencies = []string{fmt.Sprintf("L%dT%d", l-1, i)}
				}
				ts = append(ts, tk)
			}
		}
		data, _ := json.Marshal(map[string]any{"feature": "bench", "tasks": ts})
		if err := os.WriteFile(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	script, _ := filepath.Abs("../../testdata/bench/plain_rush.sh")
	var zerg, plain time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		r := newBenchRepo(b, 1)
		graph(r.graph)
		os.MkdirAll(filepath.Join(r.repo, ".zerg"), 0o755)
		os.WriteFile(filepath.Join(r.repo, ".zerg", "config.toml"),
			[]byte("[workers]\ncommand = \"echo $ZERG_TASK > $ZERG_TASK.txt\"\n"), 0o644)
		r.zerg(b, "plan", "--graph", r.graph)
		p := newBenchRepo(b, 1)
		b.StartTimer()
		start := time.Now()
		r.zerg(b, "rush", "--workers", fmt.Sprint(workers))
		zerg += time.Since(start)
		b.StopTimer()
		start = time.Now()
		run(b, p.repo, p.env, "sh", script, p.repo, fmt.Sprint(tasks), fmt.Sprint(levelsN), fmt.Sprint(workers))
		plain += time.Since(start)
		b.StartTimer()
	}
	b.ReportMetric(plain.Seconds()/float64(b.N), "plain-s/op")
	b.ReportMetric(zerg.Seconds()/plain.Seconds(), "x-plain")
}

// BenchmarkSync merges a 1,000-task feature after 100 new transitions on
// each of two machines: the timed sync fetches the other side's 100,
// merges, and pushes the result.
func BenchmarkSync(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := b.TempDir()
		env := gitEnv(dir)
		remote := filepath.Join(dir, "remote.git")
		run(b, dir, env, "git", "init", "-q", "--bare", "-b", "main", remote)
		x, y := filepath.Join(dir, "x"), filepath.Join(dir, "y")
		run(b, dir, env, "git", "init", "-q", "-b", "main", x)
		run(b, x, env, "git", "commit", "-q", "--allow-empty", "-m", "initial")
		run(b, x, env, "git", "remote", "add", "origin", remote)
		run(b, x, env, "git", "push", "-q", "origin", "main")
		run(b, dir, env, "git", "clone", "-q", remote, y)
		graph := filepath.Join(dir, "graph.json")
		checkOnlyGraph(b, graph, "big", 1000)
		bin := realBinary(b)
		env = append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		r := &benchRepo{dir: dir, repo: x, env: env, bin: filepath.Join(bin, "git-zerg")}
		r.zerg(b, "plan", "--graph", graph)
		r.zerg(b, "sync")
		ry := &benchRepo{dir: dir, repo: y, env: env, bin: r.bin}
		ry.zerg(b, "sync")
		for k := 0; k < 100; k++ {
			// Tasks whose index ends in 9 wait for a dependency: skip them.
			r.zerg(b, "claim", "--worker", fmt.Sprintf("x%d", k), fmt.Sprintf("T%04d", k/4*10+k%4))
			ry.zerg(b, "claim", "--worker", fmt.Sprintf("y%d", k), fmt.Sprintf("T%04d", k/4*10+4+k%4))
		}
		r.zerg(b, "sync")
		b.StartTimer()
		ry.zerg(b, "sync")
	}
}
