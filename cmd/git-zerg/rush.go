package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/prompt"
	"github.com/git-zerg/git-zerg/state"
)

type rushOptions struct {
	workers int
	mode    string
	resume  bool
}

func rushCmd(e *env) *cli.Command {
	var o rushOptions
	return &cli.Command{
		Name:  "rush",
		Usage: "run the feature to the end with parallel workers",
		Description: "subprocess (default): each level's tasks run with up to N workers, each in its own\n" +
			"worktree on zerg/<feature>/worker-<n>; finished levels merge into zerg/<feature>/staging\n" +
			"and the quality gates run on the result. container: the same, each worker command in\n" +
			"`docker run` (image from workers.image). task: spawn nothing; print the ready batch\n" +
			"with rendered prompts as JSON for an agent that drives claim/done itself.\n" +
			"Exit 1 when the rush ends with blocked tasks, a merge conflict or a failed gate.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "workers", Aliases: []string{"n"}, Usage: "parallel workers (default workers.count)", Destination: &o.workers},
			&cli.StringFlag{Name: "mode", Value: "subprocess", Usage: "subprocess, container or task", Destination: &o.mode},
			&cli.BoolFlag{Name: "resume", Usage: "continue after a crash from the state in refs", Destination: &o.resume},
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			if c.IsSet("workers") && o.workers < 1 {
				return usageErr("rush: --workers must be at least 1")
			}
			return runRush(e, &o)
		},
	}
}

func runRush(e *env, o *rushOptions) error {
	switch o.mode {
	case "subprocess", "container", "task":
	default:
		return usageErr("rush: unknown mode %q (subprocess, container or task)", o.mode)
	}
	s, tx, feature, err := e.view()
	if err != nil {
		return err
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	if o.workers == 0 {
		o.workers = cfg.Workers.Count
	}
	tasks, err := tx.Tasks()
	if err != nil {
		return err
	}
	for _, t := range tasks {
		if !trustedTask(s, feature, t) {
			return &cliError{code: exitRefused, what: "rush refused",
				why:  fmt.Sprintf("the verification command of %s was not planned or accepted on this machine", t.ID()),
				hint: "review the graph, then git zerg plan --accept " + feature}
		}
	}
	tmpl, err := prompt.Load(filepath.Join(s.Top, ".zerg", "prompt.tmpl"))
	if err != nil {
		return usageErr("bad prompt template (%v)", err)
	}
	if o.mode == "task" {
		return runTaskMode(e, s, feature, cfg, tmpl, o.workers)
	}
	if o.mode == "container" && cfg.Workers.Image == "" {
		return usageErr("rush --mode container needs workers.image in .zerg/config.toml")
	}
	marker, err := acquireRush(s, feature)
	if err != nil {
		return err
	}
	defer marker.release()
	r := &rush{e: e, s: s, feature: feature, cfg: cfg, tmpl: tmpl, n: o.workers, mode: o.mode,
		policy: policyOf(cfg), ttl: time.Duration(cfg.Locks.TTL), marker: marker}
	if marker.previous != nil {
		if !o.resume {
			fmt.Fprintf(e.stderr, "an earlier rush (pid %d) died; continuing from the state in refs\n", marker.previous.PID)
		}
		if err := r.takeBack(marker.previous); err != nil {
			return err
		}
	}
	return r.run()
}

// rushMarker says which process runs a feature's rush on this host, so a
// second rush is refused and --resume can tell a dead rush from a live one.
type rushMarker struct {
	path     string
	self     rushHolder
	previous *rushHolder // a dead rush found at start, whose claims we take back
}

type rushHolder struct {
	PID     int    `json:"pid"`
	Started string `json:"started"` // process start time, against pid reuse
	Host    string `json:"host"`
}

// processStart returns an identifier of when pid started (its start time in
// clock ticks since boot on Linux), "" when unknown.
func processStart(pid int) string {
	if f := procStat(pid); len(f) >= 20 {
		return f[19]
	}
	return ""
}

// procStat returns the fields of /proc/<pid>/stat after the command name
// (f[0] is the state), nil when unknown.
func procStat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// alive reports whether the holder's process still runs (same pid, same
// start time).
func (h rushHolder) alive() bool {
	if h.Host != gitstore.Hostname() || h.PID <= 0 {
		return false
	}
	if err := syscall.Kill(h.PID, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	// A killed rush stays a zombie until its parent (often init, or a
	// container's PID 1 that never reaps) waits for it: dead all the same.
	if f := procStat(h.PID); len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
		return false
	}
	if h.Started != "" {
		if st := processStart(h.PID); st != "" && st != h.Started {
			return false
		}
	}
	return true
}

func acquireRush(s *gitstore.Store, feature string) (*rushMarker, error) {
	path := filepath.Join(s.ZergDir(), "rush", feature+".json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	self := rushHolder{PID: os.Getpid(), Started: processStart(os.Getpid()), Host: gitstore.Hostname()}
	data, _ := json.Marshal(self)
	m := &rushMarker{path: path, self: self}
	for attempt := 0; attempt < 3; attempt++ {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, werr := f.Write(data)
			f.Close()
			return m, werr
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		var prev rushHolder
		b, _ := os.ReadFile(path)
		if json.Unmarshal(b, &prev) == nil && prev.alive() {
			return nil, &cliError{code: exitRefused, what: "rush refused",
				why:  fmt.Sprintf("a rush of %s is already running (pid %d)", feature, prev.PID),
				hint: "wait for it, or stop it; git zerg rush --resume takes over once it is gone"}
		}
		if json.Unmarshal(b, &prev) == nil {
			m.previous = &prev
		}
		// A dead holder: remove its marker and try again (another resumer
		// may win the O_EXCL race, and then we are refused above).
		os.Remove(path)
	}
	return nil, refused("rush refused", "could not take the rush marker")
}

func (m *rushMarker) release() {
	b, err := os.ReadFile(m.path)
	if err != nil {
		return
	}
	var h rushHolder
	if json.Unmarshal(b, &h) == nil && h.PID == m.self.PID {
		os.Remove(m.path)
	}
}

// taskModeJSON is what `rush --mode task` prints: the batch to launch now.
type taskModeJSON struct {
	Feature  string         `json:"feature"`
	Complete bool           `json:"complete"`
	Level    int            `json:"level"`
	Workers  int            `json:"workers"`
	Counts   map[string]int `json:"counts"`
	Batch    []batchTask    `json:"batch"`
	// Waiting explains an empty batch: claimed tasks still running,
	// backoffs, or blocked dependencies.
	Waiting string `json:"waiting,omitempty"`
}

type batchTask struct {
	taskJSON
	SuggestedWorker string `json:"suggested_worker"`
	Prompt          string `json:"prompt"`
}

// runTaskMode prints the ready batch of the lowest unfinished level with
// rendered prompts. It claims nothing: the driving agent claims each task
// with the suggested worker name, runs it, then calls done or fail.
func runTaskMode(e *env, s *gitstore.Store, feature string, cfg *config.Config, tmpl *prompt.Template, n int) error {
	tx, err := s.View(feature)
	if err != nil {
		return err
	}
	tasks, err := tx.Tasks()
	if err != nil {
		return err
	}
	policy := policyOf(cfg)
	now := e.now()
	counts := countStatuses(tasks)
	out := taskModeJSON{Feature: feature, Workers: n, Counts: counts, Batch: []batchTask{}}
	out.Complete = counts[string(state.Done)] == len(tasks)
	level := 0
	for _, t := range tasks {
		if t.Status != state.Done && t.Status != state.Blocked && (level == 0 || t.Level < level) {
			level = t.Level
		}
	}
	out.Level = level
	busy := map[string]bool{}
	for _, t := range tasks {
		if t.Status == state.Claimed {
			busy[t.Worker] = true
		}
	}
	for _, t := range policy.ReadyOrder(tasks, now) {
		if t.Level != level || len(out.Batch) >= n {
			continue
		}
		worker := ""
		for i := 1; worker == ""; i++ {
			if w := fmt.Sprintf("w%d", i); !busy[w] {
				worker = w
				busy[w] = true
			}
		}
		text, err := tmpl.Render(prompt.Data{Feature: feature, Worker: worker, Level: t.Level, Attempt: t.Attempts + 1,
			Mode: "shared", Task: t.Spec})
		if err != nil {
			return fmt.Errorf("render prompt of %s: %w", t.ID(), err)
		}
		out.Batch = append(out.Batch, batchTask{taskOut(t, false), worker, text})
	}
	if len(out.Batch) == 0 && !out.Complete {
		out.Waiting = waitingFor(tasks, policy, now)
		if c := counts[string(state.Claimed)]; c > 0 {
			out.Waiting = strconv.Itoa(c) + " claimed task(s) still running; " + out.Waiting
		}
	}
	// Task mode is for programs: its output is always the JSON document.
	return writeJSON(e.stdout, out)
}
