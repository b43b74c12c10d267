package proc

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// testMark is in the environment of every process the tests start, so
// that TestMain can find any that outlived its test.
const testMark = "ZERG_PROC_TEST_RUN"

func TestMain(m *testing.M) {
	mark := strconv.Itoa(os.Getpid())
	os.Setenv(testMark, mark)
	code := m.Run()
	if left := marked(testMark + "=" + mark); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "processes outlived the tests: %v\n", left)
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		code = 1
	}
	os.Exit(code)
}

// marked lists the live processes, other than this one, whose environment
// holds entry.
func marked(entry string) []int {
	if runtime.GOOS != "linux" {
		return nil
	}
	names, _ := os.ReadDir("/proc")
	var pids []int
	for _, n := range names {
		pid, err := strconv.Atoi(n.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + n.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(b), "\x00") {
			if kv == entry && alive(pid) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// alive tells whether a process runs; a zombie does not, and stays one
// where pid 1 does not reap.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return false
	}
	if runtime.GOOS != "linux" {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// lines is a Stdout that lets a test wait for a line the command prints,
// instead of sleeping for it.
type lines struct {
	mu   sync.Mutex
	buf  strings.Builder
	poke chan struct{}
}

func newLines() *lines { return &lines{poke: make(chan struct{}, 1)} }

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.buf.Write(p)
	l.mu.Unlock()
	select {
	case l.poke <- struct{}{}:
	default:
	}
	return len(p), nil
}

// await returns the rest of the first whole line that starts with prefix,
// failing the test when none comes within 10 seconds.
func (l *lines) await(t *testing.T, prefix string) string {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		if v, ok := lineValue(l.String(), prefix); ok {
			return v
		}
		select {
		case <-l.poke:
		case <-deadline.C:
			t.Fatalf("no line %q in:\n%s", prefix, l.String())
		}
	}
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func lineValue(out, prefix string) (string, bool) {
	for _, line := range strings.SplitAfter(out, "\n") {
		if strings.HasPrefix(line, prefix) && strings.HasSuffix(line, "\n") {
			return strings.TrimSpace(line[len(prefix):]), true
		}
	}
	return "", false
}

// pidsIn returns the pids the command printed as "<prefix> <pid>" lines.
func pidsIn(t *testing.T, out, prefix string) []int {
	t.Helper()
	var pids []int
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, prefix+" "); ok {
			pid, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("bad pid line %q", line)
			}
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 {
		t.Fatalf("no %q line in:\n%s", prefix, out)
	}
	return pids
}

// gone fails the test for each pid still running, and kills it.
func gone(t *testing.T, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("process %d is still running", pid)
		}
	}
}

// cleanupGroup kills what a failing test may leave of a group.
func cleanupGroup(t *testing.T, pgid int) {
	t.Cleanup(func() { killGroup(pgid) })
}
