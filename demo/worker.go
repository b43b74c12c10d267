package demo

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"time"

	"github.com/git-zerg/git-zerg/engine"
)

// busy is how long the worker looks busy, as a real one would, so that
// the parallelism shows.
var busy = func() time.Duration { return time.Duration(150+rand.IntN(350)) * time.Millisecond }

// Work is the scripted worker, run by a rush in the task's worktree: it
// writes the files the task file ($ZERG_TASK_FILE) lists under "demo", and
// nothing else. A flaky task fails its first attempt, saying so on stderr.
func Work(stderr io.Writer) error {
	b, err := os.ReadFile(os.Getenv("ZERG_TASK_FILE"))
	if err != nil {
		return &engine.Error{Kind: engine.Usage, What: fmt.Sprintf("demo-worker runs under git zerg rush (ZERG_TASK_FILE: %v)", err)}
	}
	var t task
	if err := json.Unmarshal(b, &t); err != nil {
		return err
	}
	time.Sleep(busy())
	if t.FlakyOnce && os.Getenv("ZERG_ATTEMPT") == "1" {
		fmt.Fprintf(stderr, "%s: flaky on purpose: the first attempt fails\n", t.ID)
		return &engine.Error{Kind: engine.Failed, What: t.ID + ": simulated failure"}
	}
	for path, content := range t.Demo {
		if err := writeFile(path, content, 0o644); err != nil {
			return err
		}
	}
	// Half the tasks commit their own work; the other half leave it for the
	// tool to commit, as real agents sometimes do.
	if len(t.Demo) > 0 && len(t.ID)%2 == 0 {
		if err := exec.Command("git", "add", "-A").Run(); err != nil {
			return err
		}
		cmd := exec.Command("git", "commit", "-q", "-m", t.ID+": "+t.Title)
		cmd.Stdout, cmd.Stderr = stderr, stderr
		if err := cmd.Run(); err != nil {
			return err
		}
	}
	return nil
}
