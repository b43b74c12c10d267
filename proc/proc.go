// Package proc runs the commands git-zerg does not trust: verification
// commands, quality gates and workers. Each runs under `sh -c` in its own
// process group, so a timeout or a cancel kills everything it started, not
// just the shell.
package proc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Spec is one command to run.
type Spec struct {
	Command string
	Dir     string
	Env     []string // added to the environment
	Timeout time.Duration
	Stdin   io.Reader
	// Stdout and Stderr, when set, receive the output as it comes, besides
	// the tail kept in the Result.
	Stdout, Stderr io.Writer
	// SplitStderr keeps a tail of stderr alone (Result.StderrTail). It
	// costs the order of the combined Tail: stdout and stderr then come
	// through two pipes.
	SplitStderr bool
	// Started, when set, is told the process group id as soon as the
	// command runs, so that whoever takes over after a crash can kill what
	// is left of it.
	Started func(pgid int)
}

// Result is what happened.
type Result struct {
	ExitCode int
	TimedOut bool
	Duration time.Duration
	// Tail is the last lines of stdout and stderr together; StderrTail
	// those of stderr alone, where a worker says why it gives up.
	Tail, StderrTail string
}

// Run runs the command and waits for it. An error means it could not be
// started; a non-zero exit is a Result.
func Run(ctx context.Context, s Spec) (Result, error) {
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.Timeout)
		defer cancel()
	}
	cmd := exec.Command("sh", "-c", s.Command)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), s.Env...)
	cmd.Stdin = s.Stdin
	cmd.SysProcAttr = sysProcAttr()
	tail, errTail := &tailBuffer{max: 4096}, &tailBuffer{max: 4096}
	cmd.Stdout = tee(tail, s.Stdout)
	cmd.Stderr = tee(tail, s.Stderr)
	if s.Stdout == s.Stderr {
		cmd.Stderr = cmd.Stdout // the same writer: one pipe, the output in order
	}
	if s.SplitStderr {
		cmd.Stderr = io.MultiWriter(errTail, cmd.Stderr)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, err
	}
	if s.Started != nil {
		s.Started(cmd.Process.Pid)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	timedOut := false
	select {
	case err = <-done:
	case <-ctx.Done():
		timedOut = errors.Is(ctx.Err(), context.DeadlineExceeded)
		// The negative pid is the whole group: the shell and every child.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = <-done
	}
	res := Result{Duration: time.Since(start), TimedOut: timedOut, Tail: tail.String(), StderrTail: errTail.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
		if res.ExitCode < 0 {
			res.ExitCode = 128 + int(syscall.SIGKILL)
		}
	default:
		return res, err
	}
	if timedOut && res.ExitCode == 0 {
		res.ExitCode = 124
	}
	return res, nil
}

func tee(a *tailBuffer, b io.Writer) io.Writer {
	if b == nil {
		return a
	}
	return io.MultiWriter(a, b)
}

// tailBuffer keeps the last max bytes written to it.
// tailBuffer keeps the end of an output. stdout and stderr write to it
// from two goroutines when they come through two pipes.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if t.buf.Len() > 2*t.max {
		b := t.buf.Bytes()
		keep := append([]byte(nil), b[len(b)-t.max:]...)
		t.buf.Reset()
		t.buf.Write(keep)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf.Bytes()
	if len(b) > t.max {
		b = b[len(b)-t.max:]
	}
	return string(b)
}

// LastLines returns up to n last non-empty lines of s, joined by " | ",
// for one-line reasons.
func LastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// KillGroup kills what is left of a process group started by Run.
func KillGroup(pgid int) {
	if pgid > 1 {
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
}
