package rush

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/agent"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/proc"
	"github.com/git-zerg/git-zerg/prompt"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/worktree"
)

// WorkerName is the name of the worker in slot, as its worktree and branch
// spell it.
func WorkerName(slot int) string { return fmt.Sprintf("worker-%d", slot) }

func attemptNote(n int) string {
	if n > 1 {
		return fmt.Sprintf(" (attempt %d)", n)
	}
	return ""
}

// heartbeat renews the worker's lease while its command runs, so a live
// worker never loses its claim and a dead rush's claims expire.
func (r *rush) heartbeat(s *gitstore.Store, worker string) func() {
	every := r.ttl / 3
	if every > time.Minute {
		every = time.Minute
	}
	if every < 50*time.Millisecond {
		every = 50 * time.Millisecond
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				r.with(s).RenewLease(worker, r.ttl)
			}
		}
	}()
	return func() { close(stop); wg.Wait() }
}

// workResult is how a worker's command ended.
type workResult struct {
	exit     int
	timedOut bool
	// stalled: stopped by workers.stall_timeout.
	stalled bool
	tail    string
	errTail string // stderr alone: where a worker that gives up says why
	log     string
	// interrupted: a person stopped the rush while the worker ran.
	interrupted bool
	// notFound: the shell could not find or run the command (126, 127).
	notFound bool
	// result is the agent's own account of its run, when it printed one.
	result *agent.Result
}

func (w workResult) usage() *state.Usage {
	if w.result == nil {
		return nil
	}
	return w.result.Usage
}

// why is what the worker said when it gave up: its last stderr lines, or
// its last output when it wrote nothing to stderr.
func (w workResult) why() string {
	if w.errTail != "" {
		return w.errTail
	}
	return w.tail
}

// work runs the worker command for the task, again after each checkpoint
// (exit 2), up to workers.max_checkpoints times.
func (r *rush) work(ctx context.Context, s *gitstore.Store, t *state.Task, w *worktree.Worker) (workResult, error) {
	dir := r.runDir(t)
	if err := privateRunDir(r.s, dir); err != nil {
		return workResult{}, err
	}
	env, promptFile, taskFile := r.workerEnv(t, w)
	// What the worker could print of secrets: those of the rush's
	// environment, which its own holds, and those added to it.
	secrets := append(os.Environ(), env...)
	text, err := r.tmpl.Render(prompt.Data{Feature: r.feature, Worker: w.Name, Level: t.Level, Attempt: t.AttemptNumber(),
		Mode: "worktree", Worktree: w.Dir, Branch: w.Branch, Task: t.Spec, Done: r.doneDeps(s, t), NoteFile: r.noteFile(t),
		NoCommit: r.agentNoCommit()})
	if err != nil {
		return workResult{}, fmt.Errorf("render prompt of %s: %w", t.ID(), err)
	}
	tj, _ := json.MarshalIndent(t.Spec, "", "  ")
	if err := gitstore.WritePrivate(promptFile, []byte(text)); err != nil {
		return workResult{}, err
	}
	if err := gitstore.WritePrivate(taskFile, tj); err != nil {
		return workResult{}, err
	}
	logPath := r.s.Layout().AttemptLog(r.feature, t.ID(), t.AttemptNumber())
	logf, err := createAttemptLog(logPath, secrets)
	if err != nil {
		return workResult{}, err
	}
	defer logf.Close()
	defer scrubNote(r.noteFile(t), secrets)
	command := r.cfg.WorkerCommand()
	if r.mode == "container" {
		command = containerCommand(r.cfg.Workers.Image, w.Dir, r.s.CommonDir, dir, env, r.cfg.Workers.PassEnv, command)
	}
	for checkpoint := 0; ; checkpoint++ {
		if r.stopping() {
			return workResult{interrupted: true, log: logPath}, nil
		}
		fmt.Fprintf(logf.Stdout, "== %s %s run %d\n", time.Now().UTC().Format(time.RFC3339), t.ID(), checkpoint+1)
		mark := proc.NewMark()
		res, err := r.runCommand(proc.Spec{Command: command, Dir: w.Dir, Env: env, Unset: engine.Withheld(r.cfg.Workers.PassEnv),
			Timeout: time.Duration(r.cfg.Workers.Timeout), Stdout: logf.Stdout, Stderr: logf.Stderr, SplitStderr: true,
			Stall: time.Duration(r.cfg.Workers.StallTimeout), Progress: worktree.Activity(r.s.CommonDir, w.Dir),
			Mark: mark, Started: func(pgid int) { recordGroup(r.s.Layout().ProcessGroup(r.feature, t.ID()), pgid, mark) }})
		if err != nil {
			return workResult{}, err
		}
		if err := logf.Flush(); err != nil {
			return workResult{}, err
		}
		wr := workResult{exit: res.ExitCode, timedOut: res.TimedOut, stalled: res.Stalled, tail: proc.LastLines(res.Tail, 3),
			errTail: proc.LastLines(res.StderrTail, 3), log: logPath, interrupted: res.Interrupted, notFound: res.NotFound()}
		if !wr.interrupted && res.ExitCode == 2 && !res.TimedOut && !res.Stalled {
			if line := shellError(res.StderrTail); line != "" {
				// dash exits 2 on its own errors (a script it cannot
				// open, a syntax error): restarting it changes nothing.
				wr.tail = "the worker's shell failed (exit 2 is not a checkpoint here): " + line
				return wr, nil
			}
			if checkpoint < r.cfg.Workers.MaxCheckpoints {
				r.g.Transition(t.ID(), fmt.Sprintf("checkpoint %d, starting %s again", checkpoint+1, w.Name))
				continue
			}
			wr.tail = fmt.Sprintf("checkpointed more than %d times", r.cfg.Workers.MaxCheckpoints)
		}
		// The agent's result object is in its output, which went to the
		// log: every run of the attempt, checkpoints included, adds up.
		if out, err := os.ReadFile(logPath); err == nil {
			wr.result = agent.Parse(out)
		}
		if wr.result != nil {
			for _, why := range wr.result.Refused {
				fmt.Fprintf(logf.Stdout, "== git-zerg: reported figures not recorded: %s\n", why)
				r.g.Transition(t.ID(), "reported figures not recorded: "+why)
			}
		}
		return wr, nil
	}
}

// agentNoCommit tells whether the workers' agent cannot commit, whatever
// command line starts it: it is the agent that cannot.
func (r *rush) agentNoCommit() bool {
	p, ok := agent.Lookup(r.cfg.Workers.Agent)
	return ok && p.NoCommit
}

// noteFile is where a task's worker may leave a note for the tasks that
// depend on it.
func (r *rush) noteFile(t *state.Task) string { return r.s.Layout().Note(r.feature, t.ID()) }

// Bounds of what a prompt says about the tasks before it: enough to go on,
// never enough to crowd out the task itself.
const (
	depSubjects = 10
	depFiles    = 40
	depNote     = 2000
)

// doneDeps tells a task what its finished dependencies did. A dependency
// whose facts cannot be read is told by its title alone: the prompt is
// help, not a gate.
func (r *rush) doneDeps(s *gitstore.Store, t *state.Task) []prompt.Dep {
	tx, err := s.View(r.feature)
	if err != nil {
		return nil
	}
	var out []prompt.Dep
	for _, id := range append(append([]string(nil), t.Spec.Dependencies...), t.Spec.SoftDependencies...) {
		d, err := tx.Task(id)
		if err != nil || d.Status != state.Done {
			continue
		}
		dep := prompt.Dep{ID: d.ID(), Title: d.Spec.Title}
		if d.Base != "" && d.Commit != "" && d.Base != d.Commit {
			if subjects, err := engine.Git(s).Fields(r.g.Context(), '\n', "log", "--format=%s", "-n", strconv.Itoa(depSubjects), d.Base+".."+d.Commit); err == nil {
				dep.Subjects = subjects
			}
			if files, err := s.ChangedPaths(plumbing.NewHash(d.Base), plumbing.NewHash(d.Commit)); err == nil {
				if len(files) > depFiles {
					files = append(files[:depFiles:depFiles], fmt.Sprintf("and %d more", len(files)-depFiles))
				}
				dep.Files = files
			}
		}
		if b, err := os.ReadFile(r.noteFile(d)); err == nil {
			note := strings.TrimSpace(proc.Scrub(string(b), os.Environ()))
			if len(note) > depNote {
				note = strings.ToValidUTF8(note[:depNote], "") + " …"
			}
			dep.Note = strings.Join(strings.Fields(note), " ")
		}
		out = append(out, dep)
	}
	return out
}

func (r *rush) runDir(t *state.Task) string {
	return engine.RunDir(r.s, r.feature, t.ID())
}

// workerEnv is the environment of a task's worker command, and of its
// verification: a check that starts a server needs the worker's ports.
func (r *rush) workerEnv(t *state.Task, w *worktree.Worker) (env []string, promptFile, taskFile string) {
	l := r.s.Layout()
	promptFile = l.Prompt(r.feature, t.ID(), t.AttemptNumber())
	taskFile = l.TaskFile(r.feature, t.ID())
	return []string{
		"ZERG_FEATURE=" + r.feature,
		"ZERG_TASK=" + t.ID(),
		"ZERG_WORKER=" + w.Name,
		fmt.Sprintf("ZERG_LEVEL=%d", t.Level),
		fmt.Sprintf("ZERG_ATTEMPT=%d", t.AttemptNumber()),
		"ZERG_WORKTREE=" + w.Dir,
		"ZERG_BRANCH=" + w.Branch,
		"ZERG_PROMPT_FILE=" + promptFile,
		"ZERG_TASK_FILE=" + taskFile,
		"ZERG_NOTE_FILE=" + r.noteFile(t),
		fmt.Sprintf("ZERG_PORT_BASE=%d", worktree.PortBase(w.N)),
		fmt.Sprintf("ZERG_RUSH_PID=%d", os.Getpid()),
	}, promptFile, taskFile
}

// containerCommand wraps the worker command in `docker run`, the worktree
// mounted at the same path so that paths in the prompt stay true, the
// repository's git directory too (a linked worktree's .git file points
// there, and the worker commits), and the task's run directory
// (ZERG_PROMPT_FILE, ZERG_TASK_FILE) read-only. The container can write
// refs like any process of the user's; what it claims is checked all the
// same. It does not see git-zerg's own directory (an empty one is mounted
// over it): there, unlike on the host, a worker cannot read the
// repository's key and seal state of its own.
//
// The credentials passed through go by name alone (-e NAME): docker reads
// their values from its own environment, so they are not on its command
// line for any process to read.
func containerCommand(image, dir, gitDir, runDir string, env, pass []string, command string) string {
	// As the user, not root: what the worker writes in the worktree must
	// stay the user's to commit, change and delete.
	args := []string{"docker", "run", "--rm", "-i", "--user", fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()),
		"-v", dir + ":" + dir, "-v", gitDir + ":" + gitDir, "--tmpfs", gitstore.LayoutOf(gitDir).Dir(),
		"-v", runDir + ":" + runDir + ":ro", "-w", dir}
	for _, kv := range env {
		args = append(args, "-e", kv)
	}
	for _, name := range pass {
		args = append(args, "-e", name)
	}
	args = append(args, image, "sh", "-c", command)
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellError is the last line of a worker's stderr when it is an error
// of the shell that runs the worker command or its script (dash's "sh: 0:
// cannot open x.sh" and "x.sh: 3: Syntax error", bash's "x.sh: line 3:
// ..."), "" otherwise. dash exits 2 on such errors, the code ZERG's
// protocol gives a checkpoint, so a script that cannot run would be
// restarted as if it asked to be.
func shellError(stderrTail string) string {
	lines := strings.Split(strings.TrimRight(stderrTail, "\n"), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	name, rest, ok := strings.Cut(last, ": ")
	if !ok || name == "" || strings.ContainsAny(name, " \t") {
		return ""
	}
	if where, _, ok := strings.Cut(rest, ": "); ok && (isDigits(where) || strings.HasPrefix(where, "line ") && isDigits(where[5:])) {
		return last
	}
	return ""
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}
