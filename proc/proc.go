// Package proc runs the commands git-zerg does not trust: verification
// commands, quality gates and workers. Each runs under `sh -c` in its own
// process group, so a timeout or a stop ends everything it started, not
// just the shell, and a command is not over until its whole group is gone;
// on Linux what left the group (setsid, a daemon) is ended then too.
package proc

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// defaultGrace is how long a process group has between SIGTERM and SIGKILL
// when Spec.Grace is zero: long enough for an agent to flush its output and
// let go of its files, short enough that an interrupted rush exits promptly.
const defaultGrace = 2 * time.Second

// reapWait bounds the wait for a group to disappear after SIGKILL. SIGKILL
// cannot be ignored, but a process in uninterruptible sleep (a hung network
// file system) dies only when the kernel lets it.
const reapWait = 5 * time.Second

// drainWait bounds the wait for the output pipes to close once the group is
// gone. Only a process that left the group (setsid) can still hold them, and
// Run must not wait on it.
const drainWait = 500 * time.Millisecond

// tailMax is how much of the output a Result keeps.
const tailMax = 4096

// Spec is one command to run.
type Spec struct {
	Command string
	Dir     string
	Env     []string // added to the environment
	// Unset names variables of this process's environment the command
	// does not get: credentials it must not use.
	Unset   []string
	Timeout time.Duration
	Stdin   io.Reader
	// Stdout and Stderr, when set, receive the output as it comes, besides
	// the tail kept in the Result. A writer that fails is dropped; the
	// command is not blocked by it.
	Stdout, Stderr io.Writer
	// SplitStderr keeps a tail of stderr alone (Result.StderrTail). It
	// costs the order of the combined Tail: stdout and stderr then come
	// through two pipes.
	SplitStderr bool
	// Started, when set, is told the process group id as soon as the
	// command runs, so that whoever takes over after a crash can kill what
	// is left of it.
	Started func(pgid int)
	// Grace is how long the group has, once told to end with SIGTERM,
	// before SIGKILL. The group is told to end on a timeout, on Stop, when
	// ctx is cancelled, and when the main process exits leaving others of
	// its group behind. Zero means DefaultGrace; negative means SIGKILL at
	// once.
	Grace time.Duration
	// Mark is the mark (MarkEnv) of every process the command starts; ""
	// is a fresh one. Recorded with the group, it lets whoever takes over
	// after a crash end what left the group (EndMarked).
	Mark string
	// KeepSecrets leaves Result.Tail and StderrTail as written. By default
	// the values of secret-named environment variables are replaced in them
	// (see Scrub), since tails end up in state that sync pushes.
	KeepSecrets bool
	// Stall, when positive, ends the command as a timeout does once it has
	// shown no progress for that long: written no output and, when
	// Progress is set, changed nothing Progress sees. It catches a command
	// that hangs well before Timeout (an agent retrying a dead server
	// forever).
	Stall time.Duration
	// Progress is a fingerprint of what the command works on (its
	// worktree): a change in it is progress. It is called every
	// stallCheck(Stall), off the supervisor, so it must be cheap, not
	// instant.
	Progress func() string
}

// Result is what happened. It is judged on the main process (the shell
// running Command); what that process left behind is ended, not waited
// for.
type Result struct {
	// ExitCode is the main process's exit status, 128+n when it died of
	// signal n, 124 when it timed out or stalled yet exited 0, 130 when it was
	// interrupted yet exited 0.
	ExitCode int
	TimedOut bool
	// Stalled is set when the command was ended for making no progress
	// for Spec.Stall.
	Stalled bool
	// Interrupted is set when Stop, Kill or the cancel of ctx ended the
	// command before its main process exited by itself: the run says
	// nothing about the command.
	Interrupted bool
	// Leftovers is set when the main process exited while others of its
	// group still ran (a server started with &); they were ended.
	Leftovers bool
	// GroupAlive is set when members of the group were still there after
	// SIGKILL and reapWait (stuck in the kernel). KillGroup them later.
	GroupAlive bool
	// Detached is set when processes the command started outside its
	// group were ended (Linux).
	Detached bool
	Duration time.Duration
	// Tail is the last lines of stdout and stderr together; StderrTail
	// those of stderr alone, where a worker says why it gives up.
	Tail, StderrTail string
}

// NotFound tells whether the shell could not run the command's program:
// 127 is "not found", 126 "found but not executable". Retrying such a
// command cannot help.
func (r Result) NotFound() bool {
	return !r.TimedOut && !r.Stalled && !r.Interrupted && (r.ExitCode == 126 || r.ExitCode == 127)
}

// Run runs the command and waits until its process group is gone. An
// error means it could not be started; a non-zero exit is a Result.
// Cancelling ctx stops the command as Handle.Stop does.
func Run(ctx context.Context, s Spec) (Result, error) {
	h, err := Start(ctx, s)
	if err != nil {
		return Result{}, err
	}
	return h.Wait()
}

// Handle is a running command.
type Handle struct {
	pgid int

	mu    sync.Mutex
	stops int  // Stop calls so far
	kill  bool // Kill called
	wake  chan struct{}

	done chan struct{}
	res  Result
	err  error
}

// Pgid is the command's process group id (the shell's pid).
func (h *Handle) Pgid() int { return h.pgid }

// Stop asks the command to end: SIGTERM to its group, SIGKILL after the
// grace. A second Stop sends SIGKILL at once. Stop returns at once; Wait
// tells when the group is gone. Stopping a finished command does nothing.
func (h *Handle) Stop() {
	h.mu.Lock()
	h.stops++
	h.mu.Unlock()
	h.poke()
}

// Kill sends SIGKILL to the group at once.
func (h *Handle) Kill() {
	h.mu.Lock()
	h.kill = true
	h.mu.Unlock()
	h.poke()
}

func (h *Handle) poke() {
	select {
	case h.wake <- struct{}{}:
	default: // a wake-up is pending; it reads the counts then
	}
}

// Done is closed once the Result is ready: the main process has exited and
// the group is gone (or GroupAlive).
func (h *Handle) Done() <-chan struct{} { return h.done }

// Wait waits for the Result. It may be called any number of times.
func (h *Handle) Wait() (Result, error) {
	<-h.done
	return h.res, h.err
}

// Start starts the command in its own process group.
func Start(ctx context.Context, s Spec) (*Handle, error) {
	cmd := exec.Command("sh", "-c", s.Command)
	cmd.Dir = s.Dir
	// Secrets are scrubbed from the output by the whole environment: an
	// unset one may still be found (in a file) and printed.
	env := append(os.Environ(), s.Env...)
	mark := s.Mark
	if mark == "" {
		mark = NewMark()
	}
	cmd.Env = childEnv(env, s.Unset, mark)
	cmd.SysProcAttr = sysProcAttr()
	becomeSubreaper()

	st := &streams{tail: &tailBuffer{max: tailMax}, errTail: &tailBuffer{max: tailMax}}
	if err := st.connect(cmd, s); err != nil {
		st.close()
		return nil, err
	}

	start := time.Now()
	// Under commands.mu: until it is known, the new shell would look like
	// a process a command left.
	commands.mu.Lock()
	err := cmd.Start()
	if err == nil {
		started(cmd.Process.Pid)
	}
	commands.mu.Unlock()
	if err != nil {
		st.close()
		return nil, err
	}
	closeFiles(st.childEnds)
	for _, c := range st.copiers {
		go c.run()
	}
	if st.stdinW != nil {
		go func() {
			io.Copy(st.stdinW, s.Stdin)
			st.closeStdin() // EOF for the command
		}()
	}

	h := &Handle{pgid: cmd.Process.Pid, wake: make(chan struct{}, 1), done: make(chan struct{})}
	if s.Started != nil {
		s.Started(h.pgid)
	}
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		reaped(h.pgid)
		exited <- err
	}()
	var stalled <-chan struct{}
	if s.Stall > 0 {
		ch := make(chan struct{})
		stalled = ch
		go watch(s, h.pgid, &st.written, ch, h.done)
	}
	go func() {
		o := h.supervise(ctx, s, exited, stalled)
		// Before the drain: what left the group may hold the pipes.
		o.detached = over(mark)
		st.closeStdin()
		drain(st.copiers)
		closeFiles(st.ourEnds)
		h.res, h.err = o.result(cmd, time.Since(start))
		// Read only now that the copiers are done, so that nothing written
		// before the exit is missing.
		h.res.Tail, h.res.StderrTail = st.tail.String(), st.errTail.String()
		if !s.KeepSecrets {
			secs := secrets(env)
			h.res.Tail = scrub(h.res.Tail, secs, st.tail.cut())
			h.res.StderrTail = scrub(h.res.StderrTail, secs, st.errTail.cut())
		}
		close(h.done)
	}()
	return h, nil
}

// streams are a command's pipes. They are ours, not os/exec's: cmd.Wait
// then returns when the main process exits, which is when its leftovers
// are told to end, instead of when the last holder of the pipe lets go of
// it. (exec.Cmd.WaitDelay bounds that wait, but hides the exit itself.)
type streams struct {
	// childEnds are closed here once the child has them; ourEnds once the
	// command and what it left are done.
	childEnds, ourEnds []*os.File
	stdinW             *os.File // nil unless stdin is copied in
	stdinDone          sync.Once
	tail, errTail      *tailBuffer
	copiers            []*copier
	written            atomic.Int64 // output read so far, for the watchdog
}

// close closes every end, for a command that did not start.
func (st *streams) close() {
	closeFiles(st.childEnds)
	closeFiles(st.ourEnds)
}

func (st *streams) closeStdin() {
	if st.stdinW != nil {
		st.stdinDone.Do(func() { st.stdinW.Close() })
	}
}

// connect gives cmd its stdin and its output, as s asks: a file as it is,
// anything else through a pipe of ours.
func (st *streams) connect(cmd *exec.Cmd, s Spec) error {
	switch in := s.Stdin.(type) {
	case nil:
	case *os.File:
		cmd.Stdin = in
	default:
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		st.childEnds, st.ourEnds = append(st.childEnds, r), append(st.ourEnds, w)
		cmd.Stdin, st.stdinW = r, w
	}
	out, err := st.pipe(s.Stdout, st.tail)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = out, out
	if s.Stdout != s.Stderr || s.SplitStderr {
		tails := []*tailBuffer{st.tail}
		if s.SplitStderr {
			tails = append(tails, st.errTail)
		}
		if cmd.Stderr, err = st.pipe(s.Stderr, tails...); err != nil {
			return err
		}
	}
	return nil
}

// pipe is an output pipe whose reading end a copier empties into w and
// the tails.
func (st *streams) pipe(w io.Writer, tails ...*tailBuffer) (*os.File, error) {
	r, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	st.childEnds, st.ourEnds = append(st.childEnds, pw), append(st.ourEnds, r)
	st.copiers = append(st.copiers, &copier{r: r, w: w, tails: tails, written: &st.written, done: make(chan struct{})})
	return pw, nil
}

// outcome is what the supervisor saw.
type outcome struct {
	waitErr     error
	exited      bool
	timedOut    bool
	stalled     bool
	interrupted bool
	leftovers   bool
	groupAlive  bool
	detached    bool
}

// supervise waits for the main process, then for the group to be gone,
// ending the group when the command times out, is stopped, or its main
// process leaves others behind. Every wait in it is bounded once the group
// has been told to end.
func (h *Handle) supervise(ctx context.Context, s Spec, exited <-chan error, stalled <-chan struct{}) outcome {
	var o outcome
	grace := s.Grace
	if grace == 0 {
		grace = defaultGrace
	}
	var timeout <-chan time.Time
	if s.Timeout > 0 {
		t := time.NewTimer(s.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	var (
		termSent, killSent bool
		killAt, giveUp     <-chan time.Time
		handledStops       int
		poll               = time.Millisecond
		// resend repeats SIGTERM to what is left of the group once the
		// main process is gone, at growing intervals: a child forked
		// while the first signals were on their way can lose them (the
		// shell's trap handler, still installed between fork and exec,
		// takes the signal and the child then resets it). Without this,
		// such a child would live until the grace ran out.
		resend      <-chan time.Time
		resendEvery = 50 * time.Millisecond
	)
	kill := func() {
		if !killSent {
			killSent, killAt = true, nil
			signalGroup(h.pgid, syscall.SIGKILL)
			giveUp = time.After(reapWait)
		}
	}
	term := func() {
		switch {
		case termSent || killSent:
		case grace < 0:
			kill()
		default:
			termSent = true
			signalGroup(h.pgid, syscall.SIGTERM)
			killAt = time.After(grace)
		}
	}
	// ended marks a request to end the command; it is an interruption only
	// while the main process has not yet exited by itself.
	ended := func(timedOut bool) {
		if !o.exited && !o.timedOut && !o.stalled && !o.interrupted {
			o.timedOut, o.interrupted = timedOut, !timedOut
		}
	}
	ctxDone := ctx.Done()
	for {
		var tick <-chan time.Time
		if o.exited {
			// Nothing tells when the last member of a group is gone, so
			// this one wait polls, backing off, and is bounded by the
			// grace and reapWait.
			if groupGone(h.pgid) {
				return o
			}
			if !o.leftovers {
				o.leftovers = true
				if termSent && !killSent {
					// Again: a process forked while the shell handled
					// the first SIGTERM (in its trap, say) did not get it.
					signalGroup(h.pgid, syscall.SIGTERM)
				}
				term()
				if termSent && !killSent {
					resend = time.After(resendEvery)
				}
			}
			tick = time.After(poll)
			poll = min(2*poll, 20*time.Millisecond)
		}
		select {
		case o.waitErr = <-exited:
			o.exited, exited = true, nil
		case <-timeout:
			timeout = nil
			ended(true)
			term()
		case <-stalled:
			stalled = nil
			if !o.exited && !o.timedOut && !o.interrupted {
				o.stalled = true
			}
			term()
		case <-ctxDone:
			ctxDone = nil
			ended(errors.Is(ctx.Err(), context.DeadlineExceeded))
			term()
		case <-h.wake:
			h.mu.Lock()
			stops, killed := h.stops, h.kill
			h.mu.Unlock()
			if stops > handledStops || killed {
				ended(false)
			}
			switch {
			case killed || stops >= 2 || (stops > handledStops && termSent):
				kill()
			case stops > handledStops:
				term()
			}
			handledStops = stops
		case <-resend:
			resend = nil
			if !killSent {
				signalGroup(h.pgid, syscall.SIGTERM)
				resendEvery = min(2*resendEvery, time.Second)
				resend = time.After(resendEvery)
			}
		case <-killAt:
			kill()
		case <-giveUp:
			o.groupAlive = true
			return o
		case <-tick:
		}
	}
}

func (o outcome) result(cmd *exec.Cmd, d time.Duration) (Result, error) {
	res := Result{Duration: d, TimedOut: o.timedOut, Stalled: o.stalled, Interrupted: o.interrupted,
		Leftovers: o.leftovers, GroupAlive: o.groupAlive, Detached: o.detached}
	var ee *exec.ExitError
	switch {
	case !o.exited:
		// Given up on: the main process outlived SIGKILL.
		res.ExitCode = 128 + int(syscall.SIGKILL)
	case o.waitErr == nil || errors.As(o.waitErr, &ee):
		res.ExitCode = cmd.ProcessState.ExitCode()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.ExitCode = 128 + int(ws.Signal())
		}
	default:
		return res, o.waitErr
	}
	if res.ExitCode == 0 {
		switch {
		case res.TimedOut, res.Stalled:
			res.ExitCode = 124
		case res.Interrupted:
			res.ExitCode = 130
		}
	}
	return res, nil
}

func signalGroup(pgid int, sig syscall.Signal) {
	if pgid > 1 {
		// The negative pid is the whole group: the shell and every child.
		syscall.Kill(-pgid, sig)
	}
}

func closeFiles(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// copier moves one output pipe into the tails and the caller's writer.
type copier struct {
	r     *os.File
	w     io.Writer
	tails []*tailBuffer
	// written counts what was read, for the watchdog; shared by the
	// copiers of one command.
	written *atomic.Int64
	done    chan struct{}
}

func (c *copier) run() {
	defer close(c.done)
	buf := make([]byte, 32*1024)
	for {
		n, err := c.r.Read(buf)
		if n > 0 {
			c.written.Add(int64(n))
			for _, t := range c.tails {
				t.Write(buf[:n])
			}
			if c.w != nil {
				if _, werr := c.w.Write(buf[:n]); werr != nil {
					// Keep reading: a full disk under the log must not
					// block the command on a full pipe.
					c.w = nil
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// drain waits for the copiers to reach the end of their pipes. Once the
// group is gone that is at once, unless a process that left the group
// holds a pipe; then reading stops after drainWait. What was written
// before then has been read already: the copiers read all along.
func drain(cs []*copier) {
	deadline := time.NewTimer(drainWait)
	defer deadline.Stop()
	for _, c := range cs {
		select {
		case <-c.done:
			continue
		case <-deadline.C:
		}
		for _, c := range cs {
			c.r.SetReadDeadline(time.Now())
		}
		break
	}
	// Bounded too: a pipe the poller does not know takes no deadline, and
	// then its copier is left behind rather than Run held.
	last := time.NewTimer(drainWait)
	defer last.Stop()
	for _, c := range cs {
		select {
		case <-c.done:
		case <-last.C:
			return
		}
	}
}

// tailBuffer keeps the end of an output. stdout and stderr write to it
// from two goroutines when they come through two pipes.
type tailBuffer struct {
	mu      sync.Mutex
	buf     []byte
	max     int
	dropped bool // output before the tail was thrown away
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0:0], t.buf[len(t.buf)-t.max:]...)
		t.dropped = true
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > t.max {
		b = b[len(b)-t.max:]
	}
	return string(b)
}

// cut tells whether String starts in the middle of the output.
func (t *tailBuffer) cut() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dropped || len(t.buf) > t.max
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

// killGroup kills what is left of a process group started by Run.
func killGroup(pgid int) {
	signalGroup(pgid, syscall.SIGKILL)
}

// EndGroup ends what is left of a process group, as Stop does: SIGTERM,
// SIGKILL after grace (at once when grace is negative), then waits for the
// group to be gone. It reports whether it is gone. For the groups of a
// rush that died: the caller makes sure pgid still names that group.
func EndGroup(pgid int, grace time.Duration) bool {
	if pgid <= 1 {
		return true
	}
	if grace == 0 {
		grace = defaultGrace
	}
	if grace > 0 {
		signalGroup(pgid, syscall.SIGTERM)
		if waitGone(pgid, grace) {
			return true
		}
	}
	signalGroup(pgid, syscall.SIGKILL)
	return waitGone(pgid, reapWait)
}

// groupLives tells whether a process group has a member that is not a
// zombie.
func groupLives(pgid int) bool { return pgid > 1 && !groupGone(pgid) }

func waitGone(pgid int, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for poll := time.Millisecond; ; poll = min(2*poll, 20*time.Millisecond) {
		if groupGone(pgid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(poll)
	}
}

// groupGone tells whether no process of the group is left but zombies.
// Zombies count as gone: they hold nothing and run nothing, and where
// pid 1 is not an init that reaps (a container), they stay.
func groupGone(pgid int) bool {
	switch err := syscall.Kill(-pgid, 0); err {
	case syscall.ESRCH:
		return true
	case nil, syscall.EPERM:
		return !hasLiveMember(pgid)
	default:
		return false
	}
}
