// Package gitcmd is the one way git-zerg runs the git binary.
//
// Objects are read and written in-process (gitstore, gitobj), but go-git
// cannot take part in git's own <ref>.lock protocol, has no linked
// worktrees and no 3-way merge. Everything that needs those goes through a Runner, so every git
// process is started the same way: with -C, with stderr kept for the error,
// and with the hook guard in its environment.
package gitcmd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// GuardEnv is set in the environment of every git process we start. Hooks
// installed by git-zerg see it and do not re-run git-zerg's checks for
// git commands that git-zerg itself issued (lefthook does the same), so a
// commit made by the tool on a worker's behalf cannot recurse into the hook.
const GuardEnv = "GIT_ZERG_INTERNAL"

// Error is a git process that exited non-zero.
type Error struct {
	Args   []string
	Code   int
	Stderr string
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", e.Code)
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

// Reason is what git said went wrong, for a person: its first message
// line without the "fatal: " or "error: " in front, or the exit status.
// Error also names the command, which a person did not type.
func (e *Error) Reason() string {
	for _, l := range strings.Split(e.Stderr, "\n") {
		l = strings.TrimSpace(l)
		for _, p := range []string{"fatal: ", "error: "} {
			l = strings.TrimPrefix(l, p)
		}
		if l != "" {
			return l
		}
	}
	return fmt.Sprintf("exit status %d", e.Code)
}

// ExitCode returns the exit code of a git failure, or -1 when err is not one.
func ExitCode(err error) int {
	var ge *Error
	if errors.As(err, &ge) {
		return ge.Code
	}
	return -1
}

// Runner runs git in one directory.
type Runner struct {
	Dir string
	// Env is added to the environment of every call (KEY=VALUE).
	Env []string
}

// Call describes one git invocation beyond its arguments.
type Call struct {
	Stdin io.Reader
	Env   []string
}

// Run runs git with args and returns its stdout.
func (r *Runner) Run(ctx context.Context, args ...string) ([]byte, error) {
	return r.RunWith(ctx, Call{}, args...)
}

// RunWith runs git with args, stdin and extra environment.
func (r *Runner) RunWith(ctx context.Context, c Call, args ...string) ([]byte, error) {
	full := append([]string{"-C", r.Dir}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Env = append(os.Environ(), GuardEnv+"=1")
	cmd.Env = append(cmd.Env, r.Env...)
	cmd.Env = append(cmd.Env, c.Env...)
	cmd.Stdin = c.Stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err != nil {
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else {
			return nil, fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return stdout.Bytes(), &Error{Args: args, Code: code, Stderr: stderr.String()}
	}
	return stdout.Bytes(), nil
}

// Line runs git and returns its stdout without the trailing newline.
func (r *Runner) Line(ctx context.Context, args ...string) (string, error) {
	out, err := r.Run(ctx, args...)
	return strings.TrimRight(string(out), "\n"), err
}

// Fields runs git and splits its stdout on NUL when the output is
// NUL-terminated (-z formats), else on newlines.
func (r *Runner) Fields(ctx context.Context, sep byte, args ...string) ([]string, error) {
	out, err := r.Run(ctx, args...)
	if err != nil {
		return nil, err
	}
	return Split(out, sep), nil
}

// Split splits b on sep, dropping one trailing empty field.
func Split(b []byte, sep byte) []string {
	if len(b) == 0 {
		return nil
	}
	if b[len(b)-1] == sep {
		b = b[:len(b)-1]
	}
	return strings.Split(string(b), string(sep))
}

// Internal reports whether this process was started by git-zerg itself
// (through a Runner), as a hook does when the tool commits for a worker.
func Internal() bool { return os.Getenv(GuardEnv) != "" }

// Pipe is a long-lived git process fed line by line, for commands that take
// many requests on stdin (`update-ref --stdin`): one process instead of one
// per request, for long-running callers such as a rush.
type Pipe struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *lockedBuffer
	args   []string
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// StartPipe starts git with args, its stdin and stdout connected to the Pipe.
func (r *Runner) StartPipe(args ...string) (*Pipe, error) {
	full := append([]string{"-C", r.Dir}, args...)
	cmd := exec.Command("git", full...)
	cmd.Env = append(os.Environ(), GuardEnv+"=1")
	cmd.Env = append(cmd.Env, r.Env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &Pipe{cmd: cmd, stdin: stdin, stdout: bufio.NewReader(stdout), stderr: &lockedBuffer{}, args: args}
	cmd.Stderr = p.stderr
	// Its stdin is a pipe and its stderr a buffer: it never reads the
	// terminal, and it outlives many requests, a Ctrl-C among them.
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return p, nil
}

// Send writes a request.
func (p *Pipe) Send(s string) error {
	_, err := io.WriteString(p.stdin, s)
	return err
}

// ReadLine reads one line of the answer, without its newline.
func (p *Pipe) ReadLine() (string, error) {
	line, err := p.stdout.ReadString('\n')
	return strings.TrimSuffix(line, "\n"), err
}

// Process is the running git, for tests that check it ended.
func (p *Pipe) Process() *exec.Cmd { return p.cmd }

// Close ends the process and returns its failure as an *Error, if any.
func (p *Pipe) Close() error {
	p.stdin.Close()
	err := p.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &Error{Args: p.args, Code: ee.ExitCode(), Stderr: p.stderr.String()}
	}
	return err
}
