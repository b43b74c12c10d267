package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
)

// Benchmarks time whole processes, as users and hooks pay for them: the
// test binary doubles as git-zerg on PATH (see TestMain). Run with
//
//	go test -run XXX -bench . ./cmd/git-zerg/
var benchSizes = []int{100, 1000, 10000}

type benchRepo struct {
	dir, repo, graph string
	env              []string
}

func newBenchRepo(b *testing.B, tasks int) *benchRepo {
	b.Helper()
	dir := b.TempDir()
	r := &benchRepo{dir: dir, repo: filepath.Join(dir, "repo"), graph: filepath.Join(dir, "graph.json"), env: gitEnv(dir)}
	run(b, dir, r.env, "git", "init", "-q", "-b", "main", r.repo)
	run(b, r.repo, r.env, "git", "commit", "-q", "--allow-empty", "-m", "initial")
	checkOnlyGraph(b, r.graph, "bench", tasks)
	return r
}

func (r *benchRepo) zerg(b *testing.B, args ...string) {
	cmd := exec.Command("git-zerg", args...)
	cmd.Dir, cmd.Env = r.repo, r.env
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git zerg %v: %v\n%s", args, err, out)
	}
}

func BenchmarkPlan(b *testing.B) {
	for _, n := range benchSizes {
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

// BenchmarkClaimBest claims the best ready task: a full read of the state.
func BenchmarkClaimBest(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			r := newBenchRepo(b, n)
			r.zerg(b, "plan", "--graph", r.graph)
			r.zerg(b, "status")
			left := n * 9 / 10
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if left == 0 {
					b.StopTimer()
					r.zerg(b, "plan", "--force", "--graph", r.graph)
					left = n * 9 / 10
					b.StartTimer()
				}
				r.zerg(b, "claim", "--worker", fmt.Sprintf("w%d", i))
				left--
			}
		})
	}
}

func BenchmarkStatusJSON(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			r := newBenchRepo(b, n)
			r.zerg(b, "plan", "--graph", r.graph)
			r.zerg(b, "claim", "--worker", "w1")
			r.zerg(b, "status", "--json") // warm the cache, as any earlier command would
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r.zerg(b, "status", "--json")
			}
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
