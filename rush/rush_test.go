package rush

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/engine/enginetest"
)

// A whole rush driven in-process: real worker processes, the engine's
// events instead of printing, a fake clock for every state change.
func TestRushInProcess(t *testing.T) {
	cfg := config.Default()
	cfg.Workers.Command = `echo "$ZERG_TASK" > "$(echo "$ZERG_TASK" | tr AB ab).txt"`
	g, clock := enginetest.New(t, enginetest.TwoTasks, cfg)
	var mu sync.Mutex
	var events []engine.Event
	g.Events = func(ev engine.Event) { mu.Lock(); events = append(events, ev); mu.Unlock() }
	res, err := Run(g, Options{Workers: 2, Mode: ModeSubprocess})
	if err != nil {
		t.Fatalf("rush: %v", err)
	}
	if !res.Complete || res.Counts["done"] != 2 {
		t.Fatalf("result: %+v", res)
	}
	var merged, ended int
	for _, ev := range events {
		if !ev.At.Equal(clock.Now()) {
			t.Fatalf("event %s at %s, not on the engine's clock %s", ev.Type, ev.At, clock.Now())
		}
		switch ev.Type {
		case engine.EvLevelMerged:
			merged++
		case engine.EvRushEnd:
			ended++
		}
	}
	if merged != 2 || ended != 1 {
		t.Fatalf("%d level merges and %d ends reported", merged, ended)
	}
	b, err := g.Task("B")
	if err != nil {
		t.Fatal(err)
	}
	if last := b.History[len(b.History)-1]; !last.At.Equal(clock.Now()) || last.Op != "merge" {
		t.Fatalf("B's last event: %+v", last)
	}
	out := enginetest.Run(t, g.Store.Top, "git", "show", "zerg/f/staging:b.txt")
	if out != "B" {
		t.Fatalf("staging b.txt = %q", out)
	}
	if _, err := os.Stat(filepath.Join(g.Store.Top, "b.txt")); err == nil {
		t.Fatal("the rush wrote into the user's work tree")
	}
}
