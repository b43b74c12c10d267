package engine

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

func wantKind(t *testing.T, err error, kind Kind, what string) {
	t.Helper()
	var ee *Error
	if !errors.As(err, &ee) || ee.Kind != kind || !strings.Contains(ee.Error(), what) {
		t.Fatalf("got %v, want a kind %d error with %q", err, kind, what)
	}
}

func TestResolveFeature(t *testing.T) {
	g, _ := newEngine(t, twoTasks, nil)
	open := func() (*gitstore.Store, error) { return g.Store, nil }
	noStore := func() (*gitstore.Store, error) { return nil, errors.New("opened") }
	if f, err := ResolveFeature("other", noStore); err != nil || f != "other" {
		t.Fatalf("named: %q %v", f, err)
	}
	_, err := ResolveFeature("a b", noStore)
	wantKind(t, err, Usage, `bad feature name "a b"`)
	if f, err := ResolveFeature("", open); err != nil || f != "f" {
		t.Fatalf("the only feature: %q %v", f, err)
	}
	_, err = ResolveFeature("", noStore)
	if err == nil || err.Error() != "opened" {
		t.Fatalf("the store's error: %v", err)
	}
	// A second feature: which one is no longer plain, until one is used.
	g2 := &Engine{Ctx: g.Ctx, Store: g.Store, Config: g.Config, Feature: "g", Now: g.Now}
	p, problems := levels.Load([]byte(strings.Replace(twoTasks, `"feature": "f"`, `"feature": "g"`, 1)))
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if _, err := g2.Plan(p, false); err != nil {
		t.Fatal(err)
	}
	if err := g.Store.SetCurrentFeature(""); err != nil {
		t.Fatal(err)
	}
	_, err = ResolveFeature("", open)
	wantKind(t, err, Usage, "no feature chosen (f, g)")
	if err := UseFeature("f", open); err != nil {
		t.Fatal(err)
	}
	if f, err := ResolveFeature("", open); err != nil || f != "f" {
		t.Fatalf("the used feature: %q %v", f, err)
	}
	wantKind(t, UseFeature("h", open), Usage, `feature "h" is not planned`)
	wantKind(t, UseFeature("a b", noStore), Usage, `bad feature name "a b"`)

	fs, err := Features(g.Store)
	if err != nil || len(fs) != 2 {
		t.Fatalf("%v %v", fs, err)
	}
	if f := fs[0]; f.Name != "f" || !f.Current || f.Tasks != 2 || f.Done != 0 || f.Complete || f.Counts["pending"] != 2 {
		t.Fatalf("f: %+v", f)
	}
	if fs[1].Name != "g" || fs[1].Current {
		t.Fatalf("g: %+v", fs[1])
	}
}

func TestCheckWorkerAndPaths(t *testing.T) {
	wantKind(t, CheckWorker(""), Usage, "--worker is required")
	wantKind(t, CheckWorker("a/b"), Usage, `bad worker name "a/b"`)
	if err := CheckWorker("w-1"); err != nil {
		t.Fatal(err)
	}
	wantKind(t, CheckPaths([]string{"a", "../b"}), Usage, `bad path "../b"`)
	wantKind(t, CheckPaths([]string{"a/", "a/"}), Usage, `path "a/" given twice`)
	if err := CheckPaths([]string{"a/", "b.txt"}); err != nil {
		t.Fatal(err)
	}
}

func TestTasksFor(t *testing.T) {
	mk := func(id string, st state.Status) *state.Task {
		return &state.Task{Spec: &levels.Task{ID: id}, Status: st}
	}
	tasks := []*state.Task{mk("C", state.Claimed), mk("A", state.Pending), mk("B", state.Failed), mk("D", state.Blocked)}
	ids := func(ts []*state.Task) string {
		var out []string
		for _, t := range ts {
			out = append(out, t.ID())
		}
		return strings.Join(out, " ")
	}
	for cmd, want := range map[string]string{"done": "C", "retry": "B D", "claim": "A B", "logs": "A B C D"} {
		if got := ids(TasksFor(cmd, tasks)); got != want {
			t.Errorf("%s: %q, want %q", cmd, got, want)
		}
	}
}

func TestManualLocks(t *testing.T) {
	cfg := config.Default()
	g, clock := newEngine(t, twoTasks, cfg)
	if ttl := g.lockTTL(0); ttl != time.Duration(cfg.Locks.TTL) || g.lockTTL(time.Minute) != time.Minute {
		t.Fatalf("ttl: %v", ttl)
	}
	owner, err := g.lockOwner("w1")
	if err != nil || owner != Owner(g.Store.Host(), "w1") {
		t.Fatalf("%q %v", owner, err)
	}
	if owner, err := g.lockOwner(""); err != nil || owner != g.UserIdentity() {
		t.Fatalf("the user: %q %v", owner, err)
	}
	_, err = g.lockOwner("a b")
	wantKind(t, err, Usage, "bad worker name")
	if _, err := g.Lock([]string{"docs/"}, owner, "why", time.Minute); err != nil {
		t.Fatal(err)
	}
	if locks, err := g.Locks(); err != nil || len(locks) != 1 || locks[0].Path != "docs/" {
		t.Fatalf("%v %v", locks, err)
	}
	clock.Add(2 * time.Minute)
	if locks, err := g.Locks(); err != nil || len(locks) != 0 {
		t.Fatalf("an expired lock is listed: %v %v", locks, err)
	}
	wantKind(t, CheckLock([]string{"a"}, -time.Second), Usage, "--ttl must be positive")
	wantKind(t, CheckLock([]string{"a", "a"}, 0), Usage, `path "a" given twice`)
	taken, err := g.LockAs("w2", []string{"src/"}, "", 0)
	if err != nil || len(taken) != 1 || taken[0].Owner != Owner(g.Store.Host(), "w2") || !taken[0].Expires.Equal(taken[0].Created.Add(time.Duration(cfg.Locks.TTL))) {
		t.Fatalf("LockAs: %v %v", taken, err)
	}
	_, err = g.UnlockAs("w1", []string{"src/"}, false)
	wantKind(t, err, Refused, "unlock src/ refused")
	if broken, err := g.UnlockAs("w1", []string{"src/"}, true); err != nil || len(broken) != 1 {
		t.Fatalf("UnlockAs --force: %v %v", broken, err)
	}
}

func TestOpenLog(t *testing.T) {
	g, _ := newEngine(t, twoTasks, nil)
	_, err := g.OpenLog("A", 0, false)
	wantKind(t, err, Usage, "A has no worker log")
	dir := RunDir(g.Store, "f", "A")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for n, text := range map[string]string{"1": "first\n", "2": "second\n"} {
		if err := os.WriteFile(filepath.Join(dir, "attempt-"+n+".log"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(g *Engine, attempt int, follow bool) string {
		t.Helper()
		r, err := g.OpenLog("A", attempt, follow)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := read(g, 0, false); got != "second\n" {
		t.Fatalf("latest: %q", got)
	}
	if got := read(g, 1, false); got != "first\n" {
		t.Fatalf("attempt 1: %q", got)
	}
	// A task that is not claimed: following ends with the file.
	if got := read(g, 0, true); got != "second\n" {
		t.Fatalf("followed, pending: %q", got)
	}
	// Claimed: the log is read on until the task is released.
	was := followPoll
	followPoll = time.Millisecond
	t.Cleanup(func() { followPoll = was })
	if _, _, err := g.Claim(ClaimRequest{Worker: "w1"}); err != nil {
		t.Fatal(err)
	}
	r, err := g.OpenLog("A", 2, true)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]byte, 64)
	if n, err := r.Read(buf); err != nil || string(buf[:n]) != "second\n" {
		t.Fatalf("%q %v", buf[:n], err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "attempt-2.log"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("more\n")
	f.Close()
	if n, err := r.Read(buf); err != nil || string(buf[:n]) != "more\n" {
		t.Fatalf("%q %v", buf[:n], err)
	}
	if _, err := g.Release("w1", "A"); err != nil {
		t.Fatal(err)
	}
	if rest, err := io.ReadAll(r); err != nil || len(rest) != 0 {
		t.Fatalf("after the release: %q %v", rest, err)
	}
	// A claimed task's log ends with the engine's context.
	if _, _, err := g.Claim(ClaimRequest{Worker: "w1"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stopped := *g
	stopped.Ctx = ctx
	if got := read(&stopped, 0, true); got != "second\nmore\n" {
		t.Fatalf("cancelled: %q", got)
	}
}

func TestLoadConfigAndView(t *testing.T) {
	g, _ := newEngine(t, twoTasks, nil)
	if cfg, err := LoadConfig(g.Store); err != nil || cfg.Locks.TTL != config.Default().Locks.TTL {
		t.Fatalf("no file: %v %v", cfg, err)
	}
	p := filepath.Join(g.Store.Top, ".zerg", "config.toml")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("[workers]\ncount = \"many\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(g.Store)
	wantKind(t, err, Usage, "bad configuration")
	if _, err := ViewFeature(g.Store, "f"); err != nil {
		t.Fatal(err)
	}
	_, err = ViewFeature(g.Store, "nope")
	wantKind(t, err, Usage, `feature "nope" is not planned`)
}
