package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The virtual clock of BenchmarkRushSchedule. Its stand-in workers wait on
// it (zergwait, a program of the test binary) instead of sleeping, and
// the rush tells it through rush.Options.Idle each time its scheduler is
// about to wait for an event. Virtual time is the wall time since the rush
// started plus the jumps the clock made; it jumps to the soonest wake-up
// only when nothing but waiting can happen: the scheduler said it is idle
// (no merge running, nothing more it could start) with n task runs going
// on, and n workers are waiting on the clock. So git-zerg's own work
// counts in full, and an agent's minutes cost no wall time.
//
// A jump is decided only while the scheduler's word is being handled: the
// rush waits for the clock's answer before it waits for its next event,
// so its state cannot have moved on meanwhile (a run that ended, a merge
// that started). A worker that begins waiting after the word and makes
// the count whole asks the scheduler to look again (its channel closes),
// and its fresh word decides.
//
// The protocol is lines on a unix socket, ZERG_TEST_IDLE:
//
//	worker:    wait SECONDS TASK   → done (when virtual time gets there)
//	scheduler: idle N | busy N     → ok; and, at any time, look

// vclock is the clock's state; its methods are the rules, without the
// socket, so that TestVirtualClock drives them with a wall of its own.
type vclock struct {
	mu      sync.Mutex
	wall    func() time.Duration  // since the rush started
	arm     func(d time.Duration) // calls expire in d (nil: the caller does)
	offset  time.Duration         // the jumps, summed
	jumps   int
	waits   []*vwait // pending
	idle    bool     // the scheduler's last word
	running int
	heard   bool          // the scheduler has said a word
	looked  bool          // asked the scheduler to look again since its word
	saidAt  time.Duration // wall time of its word
	movedAt time.Duration // wall time a wait last began or ended
	begun   int           // waits begun, all told
}

// vwait is one worker's wait: done closes at virtual time until.
type vwait struct {
	task  string
	until time.Duration
	done  chan struct{}
}

func (c *vclock) now() time.Duration { return c.wall() + c.offset }

// Now is the virtual time.
func (c *vclock) Now() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now()
}

// wait begins a worker's wait of d. look says to ask the scheduler to look
// again: its word was idle, and the count of waits is now whole.
func (c *vclock) wait(task string, d time.Duration) (w *vwait, look bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.begun++
	c.movedAt = c.wall()
	w = &vwait{task: task, until: c.now() + d, done: make(chan struct{})}
	c.waits = append(c.waits, w)
	c.release()
	if c.idle && !c.looked && c.running > 0 && len(c.waits) == c.running {
		c.looked, look = true, true
	}
	return w, look
}

// report is the scheduler's word: idle (nothing to do but wait) or busy
// (a merge runs), with running task runs. It is the only time the clock
// jumps.
func (c *vclock) report(idle bool, running int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.idle, c.running, c.looked, c.saidAt, c.heard = idle, running, false, c.wall(), true
	if !idle || running == 0 || len(c.waits) != running {
		return
	}
	soonest := c.waits[0].until
	for _, w := range c.waits {
		soonest = min(soonest, w.until)
	}
	if d := soonest - c.now(); d > 0 {
		c.offset += d
		c.jumps++
	}
	c.release()
}

// expire ends the waits whose time has come by the wall alone.
func (c *vclock) expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.release()
}

// release ends every wait that is due and arms the timer for the next.
func (c *vclock) release() {
	now := c.now()
	kept := c.waits[:0]
	for _, w := range c.waits {
		if w.until <= now {
			close(w.done)
			c.movedAt = c.wall()
		} else {
			kept = append(kept, w)
		}
	}
	clear(c.waits[len(kept):])
	c.waits = kept
	if c.arm != nil && len(c.waits) > 0 {
		soonest := c.waits[0].until
		for _, w := range c.waits {
			soonest = min(soonest, w.until)
		}
		c.arm(soonest - now)
	}
}

// stuck says what the clock waits for when nothing has moved for d of
// wall time, "" otherwise.
func (c *vclock) stuck(d time.Duration) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	wall := c.wall()
	if wall-c.movedAt < d {
		return ""
	}
	var ws []string
	for _, w := range c.waits {
		ws = append(ws, fmt.Sprintf("%s for %.1fs more", w.task, (w.until-c.now()).Seconds()))
	}
	sort.Strings(ws)
	said := "has said nothing (is ZERG_TEST_IDLE reaching it?)"
	if c.heard {
		word := "busy"
		if c.idle {
			word = "idle"
		}
		said = fmt.Sprintf("last said %s with %d running, %.1fs ago", word, c.running, (wall - c.saidAt).Seconds())
	}
	return fmt.Sprintf("virtual clock stuck: no wait began or ended for %v; %d waiting (%s); the scheduler %s",
		d, len(c.waits), strings.Join(ws, ", "), said)
}

// clockServer serves a vclock on a unix socket.
type clockServer struct {
	*vclock
	ln     net.Listener
	start  time.Time // of virtual time, under vclock.mu
	timer  *time.Timer
	closed chan struct{}
	wg     sync.WaitGroup

	connMu sync.Mutex
	conns  map[net.Conn]bool
	sched  *lineConn // the scheduler's connection, where look goes
}

// lineConn is a connection written by more than one goroutine.
type lineConn struct {
	net.Conn
	mu sync.Mutex
}

func (l *lineConn) send(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.SetWriteDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintln(l, line)
}

// serveClock starts a clock at path whose virtual time begins now (or at
// reset). Close ends every wait still pending.
func serveClock(path string) (*clockServer, error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	s := &clockServer{ln: ln, start: time.Now(), closed: make(chan struct{}), conns: map[net.Conn]bool{}}
	s.vclock = &vclock{wall: func() time.Duration { return time.Since(s.start) }}
	s.timer = time.AfterFunc(time.Hour, s.expire)
	s.timer.Stop()
	s.arm = func(d time.Duration) { s.timer.Reset(d) }
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.connMu.Lock()
			s.conns[conn] = true
			s.connMu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.serve(&lineConn{Conn: conn})
			}()
		}
	}()
	return s, nil
}

func (s *clockServer) serve(conn *lineConn) {
	defer func() {
		s.connMu.Lock()
		delete(s.conns, conn.Conn)
		s.connMu.Unlock()
		conn.Close()
	}()
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 3 && f[0] == "wait":
			secs, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				conn.send("error: bad wait " + f[1])
				return
			}
			w, look := s.wait(f[2], time.Duration(secs*float64(time.Second)))
			if look {
				s.connMu.Lock()
				if s.sched != nil {
					s.sched.send("look")
				}
				s.connMu.Unlock()
			}
			select {
			case <-w.done:
				conn.send("done")
			case <-s.closed:
				return
			}
		case len(f) == 2 && (f[0] == "idle" || f[0] == "busy"):
			n, err := strconv.Atoi(f[1])
			if err != nil {
				conn.send("error: bad count " + f[1])
				return
			}
			s.connMu.Lock()
			s.sched = conn
			s.connMu.Unlock()
			s.report(f[0] == "idle", n)
			conn.send("ok")
		default:
			conn.send("error: unknown request")
			return
		}
	}
}

// reset makes virtual time begin now, before any wait.
func (s *clockServer) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.start = time.Now()
}

// Close stops the clock: every connection closes, every wait ends.
func (s *clockServer) Close() {
	close(s.closed)
	s.ln.Close()
	s.timer.Stop()
	s.connMu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.connMu.Unlock()
	s.wg.Wait()
}

// testIdle is rush.Options.Idle for the test binary when ZERG_TEST_IDLE
// names a virtual clock's socket, nil otherwise.
func testIdle() func(running int, merging bool) <-chan struct{} {
	path := os.Getenv("ZERG_TEST_IDLE")
	if path == "" {
		return nil
	}
	c := &idleClient{path: path}
	return c.report
}

// idleClient is the scheduler's side of the clock: one connection, dialled
// at the first word; a reader takes the clock's oks and looks.
type idleClient struct {
	path string

	mu     sync.Mutex // one word at a time
	conn   net.Conn
	acks   chan struct{}
	dead   chan struct{} // the connection is gone
	broken bool

	lookMu sync.Mutex
	look   chan struct{} // the last word's, closed by the clock's look
}

func (c *idleClient) report(running int, merging bool) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken {
		return nil
	}
	if c.conn == nil {
		conn, err := net.DialTimeout("unix", c.path, 10*time.Second)
		if err != nil {
			c.fail(err)
			return nil
		}
		c.conn, c.acks, c.dead = conn, make(chan struct{}, 1), make(chan struct{})
		go c.read()
	}
	look := make(chan struct{})
	c.lookMu.Lock()
	c.look = look
	c.lookMu.Unlock()
	word := "idle"
	if merging {
		word = "busy"
	}
	c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintf(c.conn, "%s %d\n", word, running); err != nil {
		c.fail(err)
		return nil
	}
	// Answered before the scheduler waits: a jump is decided on what it
	// said, never on what it has done since.
	select {
	case <-c.acks:
	case <-c.dead:
		c.fail(fmt.Errorf("the clock went away"))
		return nil
	case <-time.After(10 * time.Second):
		c.fail(fmt.Errorf("no answer from the clock in 10s"))
		return nil
	}
	return look
}

func (c *idleClient) read() {
	defer close(c.dead)
	sc := bufio.NewScanner(c.conn)
	for sc.Scan() {
		switch sc.Text() {
		case "ok":
			c.acks <- struct{}{}
		case "look":
			c.lookMu.Lock()
			if c.look != nil {
				close(c.look)
				c.look = nil
			}
			c.lookMu.Unlock()
		}
	}
}

// fail gives up on the clock, saying so once; the rush goes on by its
// timer, and the benchmark finds its clock stuck.
func (c *idleClient) fail(err error) {
	c.broken = true
	if c.conn != nil {
		c.conn.Close()
	}
	fmt.Fprintf(os.Stderr, "git-zerg (test build): ZERG_TEST_IDLE: %v\n", err)
}

// zergwaitMain is `zergwait SECONDS`: the stand-in worker's wait of
// SECONDS of the virtual clock at ZERG_TEST_IDLE, as task ZERG_TASK.
func zergwaitMain() int {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: zergwait SECONDS")
		return 2
	}
	if _, err := strconv.ParseFloat(os.Args[1], 64); err != nil {
		fmt.Fprintf(os.Stderr, "zergwait: bad SECONDS %q\n", os.Args[1])
		return 2
	}
	task := os.Getenv("ZERG_TASK")
	if task == "" || strings.ContainsAny(task, " \n") {
		task = "?"
	}
	conn, err := net.DialTimeout("unix", os.Getenv("ZERG_TEST_IDLE"), 10*time.Second)
	if err != nil {
		fmt.Fprintf(os.Stderr, "zergwait: %v\n", err)
		return 1
	}
	defer conn.Close()
	// However long the virtual wait, its wall time is bounded: the
	// benchmark fails a clock stuck for a minute long before this.
	conn.SetDeadline(time.Now().Add(10 * time.Minute))
	if _, err := fmt.Fprintf(conn, "wait %s %s\n", os.Args[1], task); err != nil {
		fmt.Fprintf(os.Stderr, "zergwait: %v\n", err)
		return 1
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if strings.TrimSpace(line) != "done" {
		fmt.Fprintf(os.Stderr, "zergwait: the clock said %q (%v)\n", strings.TrimSpace(line), err)
		return 1
	}
	return 0
}

// TestVirtualClock drives the clock's rules with a wall of its own: it
// jumps only on the scheduler's idle word with every run waiting, to the
// soonest wake-up; a wait that makes the count whole after the word asks
// for a fresh one instead of jumping.
func TestVirtualClock(t *testing.T) {
	var wall time.Duration
	c := &vclock{wall: func() time.Duration { return wall }}
	check := func(what string, got []string, want ...string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Fatalf("%s: done %v, want %v", what, got, want)
		}
	}
	a, look := c.wait("A", 3*time.Second)
	if look {
		t.Fatal("look with no word from the scheduler")
	}
	c.report(true, 2) // B's run has not reached the clock yet
	check("idle 2 with one waiting", doneTasks(a))
	b, look := c.wait("B", time.Second)
	if !look {
		t.Fatal("the wait that makes the count whole must ask the scheduler to look again")
	}
	check("count whole after the word", doneTasks(a, b))
	if c.Now() != 0 {
		t.Fatalf("jumped on a wait: at %v", c.Now())
	}
	c.report(true, 2)
	check("idle 2, both waiting", doneTasks(a, b), "B")
	if c.Now() != time.Second || c.jumps != 1 {
		t.Fatalf("at %v after %d jumps, want 1s after 1", c.Now(), c.jumps)
	}

	// B's run is being verified: not waiting, the clock stays.
	c.report(true, 2)
	check("a run between its worker and its verification", doneTasks(a))
	// B's run ends, a merge starts and a new run (C) begins waiting before
	// the scheduler says so: the old word does not count.
	cw, look := c.wait("C", 5*time.Second)
	if !look {
		t.Fatal("no look for C")
	}
	if _, again := c.wait("D", time.Hour); again {
		t.Fatal("a second look for the same word")
	}
	c.report(false, 3) // busy: merging, with A, C and D waiting
	check("busy", doneTasks(a, cw))
	if _, look := c.wait("E", time.Hour); look {
		t.Fatal("look while busy")
	}
	c.report(true, 3) // four waiting, three runs: not for the clock to guess
	check("idle with more waiting than running", doneTasks(a, cw))

	// The wall alone ends a wait; time moves on with it.
	c.waits = c.waits[:2] // D and E gone: only A and C
	wall = 1500 * time.Millisecond
	c.expire()
	check("wall short of A", doneTasks(a, cw))
	wall = 2 * time.Second
	c.expire()
	check("wall reaches A", doneTasks(a, cw), "A")
	if c.Now() != 3*time.Second {
		t.Fatalf("at %v, want 3s", c.Now())
	}
	c.report(true, 1)
	check("idle 1, C waiting", doneTasks(cw), "C")
	if c.Now() != 6*time.Second || c.jumps != 2 {
		t.Fatalf("at %v after %d jumps, want 6s after 2", c.Now(), c.jumps)
	}
	// A wait already due when the word comes ends without a jump.
	f, _ := c.wait("F", 0)
	check("a wait of nothing", doneTasks(f), "F")

	if msg := c.stuck(time.Minute); msg != "" {
		t.Fatalf("stuck at once: %s", msg)
	}
	c.wait("G", time.Hour)
	wall += 2 * time.Minute
	if msg := c.stuck(time.Minute); !strings.Contains(msg, "G for") || !strings.Contains(msg, "idle with 1 running") {
		t.Fatalf("stuck: %q", msg)
	}
}

// TestVirtualClockSocket runs the clock's protocol end to end: two
// workers (zergwait's requests) and the scheduler's idle word over the
// socket, the jump answered before the word is.
func TestVirtualClockSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "zergclock")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "clock.sock")
	s, err := serveClock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	done := make(chan string, 2)
	for _, w := range []struct{ task, secs string }{{"A", "3600"}, {"B", "7200"}} {
		conn, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "wait %s %s\n", w.secs, w.task)
		go func() {
			line, _ := bufio.NewReader(conn).ReadString('\n')
			done <- w.task + " " + strings.TrimSpace(line)
		}()
	}
	t.Setenv("ZERG_TEST_IDLE", path)
	report := testIdle()
	// The word may come before either wait, between them or after both:
	// a wait that makes the count whole asks for the word again.
	for words := 1; ; words++ {
		if words > 3 {
			t.Fatal("no jump after three words")
		}
		look := report(2, false)
		select {
		case got := <-done:
			if got != "A done" {
				t.Fatalf("first to end: %q, want A", got)
			}
		case <-look:
			continue
		case <-time.After(waitBound):
			t.Fatalf("neither a jump nor a look in %v: %s", waitBound, s.stuck(0))
		}
		break
	}
	if now := s.Now(); now < time.Hour || now > time.Hour+time.Minute {
		t.Fatalf("virtual time %v, want an hour and a little", now)
	}
	select {
	case got := <-done:
		t.Fatalf("%s ended too", got)
	default:
	}
}

// doneTasks is the tasks of ws whose wait has ended, sorted.
func doneTasks(ws ...*vwait) []string {
	var out []string
	for _, w := range ws {
		select {
		case <-w.done:
			out = append(out, w.task)
		default:
		}
	}
	slices.Sort(out)
	return out
}
