package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/creack/pty"

	"github.com/git-zerg/git-zerg/demo"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/view"
)

// viewRepo is a repository with a planned feature, driven by the real CLI
// (the test binary is git-zerg on PATH, see TestMain).
type viewRepo struct {
	dir, repo string
	env       []string
}

func newViewRepo(t testing.TB, graph string) *viewRepo {
	t.Helper()
	dir := t.TempDir()
	r := &viewRepo{dir: dir, repo: filepath.Join(dir, "repo"), env: append(gitEnv(dir), "TERM=xterm")}
	run(t, dir, r.env, "git", "init", "-q", "-b", "main", r.repo)
	run(t, r.repo, r.env, "git", "commit", "-q", "--allow-empty", "-m", "initial")
	gp := filepath.Join(dir, "graph.json")
	if err := os.WriteFile(gp, []byte(graph), 0o644); err != nil {
		t.Fatal(err)
	}
	r.zerg(t, "plan", "--graph", gp)
	return r
}

func (r *viewRepo) zerg(t testing.TB, args ...string) string {
	t.Helper()
	return run(t, r.repo, r.env, "git-zerg", args...)
}

const viewGraph = `{"feature": "view", "tasks": [
  {"id": "T1", "title": "first", "verification": {"command": "true"}},
  {"id": "T2", "title": "second", "verification": {"command": "true"}},
  {"id": "T3", "title": "third", "dependencies": ["T1", "T2"], "verification": {"command": "true"}}
]}`

// screen reads a full-screen program's output through a pseudo-terminal
// and keeps its last complete frame: watch draws each frame from the home
// position to a clear-to-end.
type screen struct {
	mu    sync.Mutex
	buf   strings.Builder
	frame string
}

var escapes = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

func (s *screen) read(r io.Reader) {
	b := make([]byte, 64<<10)
	for {
		n, err := r.Read(b)
		if n > 0 {
			s.mu.Lock()
			s.buf.Write(b[:n])
			all := s.buf.String()
			if end := strings.LastIndex(all, "\x1b[J"); end >= 0 {
				if start := strings.LastIndex(all[:end], "\x1b[H"); start >= 0 {
					s.frame = escapes.ReplaceAllString(all[start:end], "")
				}
				s.buf.Reset()
				s.buf.WriteString(all[end+3:])
			}
			s.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

func (s *screen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frame
}

// waitFor waits (at most limit) for the screen to match re, and returns
// how long that took.
func (s *screen) waitFor(t *testing.T, re string, limit time.Duration) time.Duration {
	t.Helper()
	rx := regexp.MustCompile(re)
	start := time.Now()
	for time.Since(start) < limit {
		if rx.MatchString(s.text()) {
			return time.Since(start)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the screen did not show %q within %s; it shows:\n%s", re, limit, s.text())
	return 0
}

// startWatch runs `git zerg watch` on a pseudo-terminal; the process and
// the terminal end with the test.
func startWatch(t *testing.T, r *viewRepo, args ...string) (*screen, *os.File) {
	t.Helper()
	cmd := exec.Command("git-zerg", append([]string{"watch"}, args...)...)
	cmd.Dir, cmd.Env = r.repo, r.env
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("watch did not end after a kill")
		}
		tty.Close()
	})
	s := &screen{}
	go s.read(tty)
	t.Cleanup(func() {
		// q quits and gives the terminal back as it was; a view still
		// running then is a bug.
		select {
		case <-done:
		default:
			tty.Write([]byte("q"))
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Error("watch did not quit on q")
			}
		}
	})
	return s, tty
}

// TestWatchTerminal drives watch on a pseudo-terminal: the tasks appear,
// and each transition made by another process shows on the screen.
func TestWatchTerminal(t *testing.T) {
	r := newViewRepo(t, viewGraph)
	s, tty := startWatch(t, r)
	s.waitFor(t, `level 1`, 10*time.Second)
	s.waitFor(t, `T1\s+pending`, 5*time.Second)
	s.waitFor(t, `T3\s+pending`, time.Second)

	r.zerg(t, "claim", "--worker", "w1", "T1")
	d := s.waitFor(t, `T1\s+claimed\s+w1\s+\S+\s+#1`, 5*time.Second)
	t.Logf("claim on screen after %s", d)
	r.zerg(t, "done", "--worker", "w1", "T1")
	s.waitFor(t, `T1\s+done`, 5*time.Second)
	s.waitFor(t, `feature view: 1/3 done`, time.Second)

	// The selected task's history is shown under the list.
	tty.Write([]byte("g"))
	s.waitFor(t, `claim\s+pending → claimed w1`, 5*time.Second)

	// Its log opens in a pager, and q comes back to the list.
	run(t, r.repo, r.env, "sh", "-c", "mkdir -p .git/zerg/run/view/T1 && printf 'compiling\\nall good\\n' > .git/zerg/run/view/T1/attempt-1.log")
	tty.Write([]byte("\r"))
	s.waitFor(t, `attempt-1\.log[\s\S]*all good`, 5*time.Second)
	tty.Write([]byte("q"))
	s.waitFor(t, `level 2`, 5*time.Second)
}

func TestWatchOncePlain(t *testing.T) {
	r := newViewRepo(t, viewGraph)
	r.zerg(t, "claim", "--worker", "w1", "T2")
	out := r.zerg(t, "watch", "--once")
	for _, want := range []string{`feature view: 0/3 done`, `T2\s+claimed\s+w1`, `level 2\n\s+T3\s+pending`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("watch --once: no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("watch --once printed escapes:\n%q", out)
	}
}

// chromium finds the distribution's browser; the browser tests skip
// without it (CI installs it).
func chromium(t testing.TB) string {
	for _, p := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Skip("chromium is not installed (apt-get install chromium): the page is not tested in a browser")
	return ""
}

// newBrowser starts a headless Chromium of its own; it is ended, and its
// profile removed, with the test.
func newBrowser(t testing.TB, width, height int) context.Context {
	t.Helper()
	path := chromium(t)
	profile, tmp := t.TempDir(), t.TempDir()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(profile),
		// Its shared-memory files go to the temporary directory: this
		// test's, removed with it.
		chromedp.Env("TMPDIR="+tmp),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(width, height),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc() // waits for the browser's process to end
	})
	// The first action starts the browser, which lives as long as the
	// context of that action: it gets no timeout of its own (the
	// allocator bounds the start, 20 s to the browser's first answer).
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// startServe runs `git zerg serve` and returns its URL; the server ends
// with the test.
func startServe(t testing.TB, r *viewRepo, args ...string) string {
	t.Helper()
	cmd := exec.Command("git-zerg", append([]string{"serve"}, args...)...)
	cmd.Dir, cmd.Env = r.repo, r.env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := regexp.MustCompile(`http://\S+`).FindString(sc.Text()); m != "" {
				select {
				case urls <- m:
				default:
				}
			}
		}
	}()
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Error("serve did not stop on SIGTERM")
		}
	})
	select {
	case u := <-urls:
		return u
	case <-done:
		t.Fatal("serve exited before printing its URL")
	case <-time.After(20 * time.Second):
		t.Fatal("serve printed no URL within 20s")
	}
	return ""
}

// nodeFill is the JavaScript reading a task node's colour in the graph.
func nodeFill(id string) string {
	return fmt.Sprintf(`(() => { const n = document.querySelector('#graph [data-id=%q]');
		if (!n) return ''; const r = n.tagName === 'rect' ? n : n.querySelector('rect');
		return getComputedStyle(r).fill; })()`, id)
}

// waitJS evaluates expr until it is true, at most limit, and returns how
// long that took.
func waitJS(t testing.TB, ctx context.Context, expr string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < limit {
		c, cancel := context.WithTimeout(ctx, limit)
		ok, err := chromedp.Run(c, chromedp.Evaluate[bool](expr))
		cancel()
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		if ok {
			return time.Since(start)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("not true within %s: %s", limit, expr)
	return 0
}

func evalJS[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

func navigate(t testing.TB, ctx context.Context, url string) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(c, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
}

// TestServeBrowser opens the page in a real browser: one node per task,
// and a transition made in the repository recolours its node within a
// second, on the same page (no reload).
func TestServeBrowser(t *testing.T) {
	r := newViewRepo(t, viewGraph)
	url := startServe(t, r)
	ctx := newBrowser(t, 1200, 800)
	navigate(t, ctx, url)
	waitJS(t, ctx, `window.zerg && window.zerg.nodes === 3`, 15*time.Second)
	if !evalJS[bool](t, ctx, `window.zerg.first === true`) {
		t.Error("the page did not draw the snapshot it came with")
	}
	if n := evalJS[int](t, ctx, `document.querySelectorAll('#graph svg .node').length`); n != 3 {
		t.Fatalf("graph has %d nodes, want 3", n)
	}
	if n := evalJS[int](t, ctx, `document.querySelectorAll('#graph svg path.edge').length`); n != 2 {
		t.Errorf("graph has %d edges, want 2", n)
	}
	// T3's two incoming edges meet it at points of their own.
	ends := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#graph svg path.edge[data-to="T3"]')].map(e => e.getAttribute('d').split(' ').slice(-2).join(' '))`)
	if len(ends) != 2 || ends[0] == ends[1] {
		t.Errorf("T3's incoming edges end at %q, want two points apart", ends)
	}
	before := evalJS[string](t, ctx, nodeFill("T1"))
	if before == "" {
		t.Fatal("no node for T1")
	}
	evalJS[bool](t, ctx, `(window.notReloaded = true)`)

	r.zerg(t, "claim", "--worker", "w1", "T1")
	d := waitJS(t, ctx, nodeFill("T1")+` !== `+fmt.Sprintf("%q", before), 5*time.Second)
	t.Logf("node recoloured %s after the claim", d)
	if d > time.Second {
		t.Errorf("the node changed colour %s after the claim, want within a second", d)
	}
	if !evalJS[bool](t, ctx, `window.notReloaded === true`) {
		t.Error("the page was reloaded")
	}
	claimed := evalJS[string](t, ctx, nodeFill("T1"))
	if claimed == evalJS[string](t, ctx, nodeFill("T2")) {
		t.Errorf("claimed T1 has pending T2's colour %s", claimed)
	}
	waitJS(t, ctx, `document.getElementById('running').textContent.includes('T1')`, 5*time.Second)

	r.zerg(t, "done", "--worker", "w1", "T1")
	waitJS(t, ctx, nodeFill("T1")+` !== `+fmt.Sprintf("%q", claimed), 5*time.Second)

	// The task's page: history, the diffs of log -p, and its output.
	run(t, r.repo, r.env, "sh", "-c", "mkdir -p .git/zerg/run/view/T1 && echo 'worker says hello' > .git/zerg/run/view/T1/attempt-1.log")
	evalJS[bool](t, ctx, `(document.querySelector('#graph [data-id="T1"]').dispatchEvent(new MouseEvent('click', {bubbles: true})), true)`)
	waitJS(t, ctx, `document.querySelectorAll('#t-history tbody tr').length === 3`, 5*time.Second)
	waitJS(t, ctx, `document.getElementById('t-changes').textContent.includes('+   "status": "done"')`, 5*time.Second)
	waitJS(t, ctx, `document.getElementById('t-output').textContent.includes('worker says hello')`, 5*time.Second)
	if !evalJS[bool](t, ctx, `window.notReloaded === true`) {
		t.Error("the task page reloaded the page")
	}
}

// TestServeTimeline: the page draws a row per worker and a bar per run,
// coloured by how the run ended (a running one as claimed), a tick per
// merge and a bar per gate run (passed or failed), kept current as runs
// start and end.
func TestServeTimeline(t *testing.T) {
	r := newViewRepo(t, viewGraph)
	r.zerg(t, "claim", "--worker", "w1", "T1")
	r.zerg(t, "fail", "--worker", "w1", "T1", "--reason", "tests failed")
	r.zerg(t, "claim", "--worker", "w2", "T2")
	r.zerg(t, "done", "--worker", "w2", "T2")
	// The gates run on staging twice, as task mode's hook runs them: they
	// pass on the first tree and fail on the second.
	gates := func(commit string, want int) {
		t.Helper()
		run(t, r.repo, r.env, "sh", "-c", commit)
		cmd := exec.Command("git-zerg", "hook", "claude-gates")
		cmd.Dir, cmd.Env = r.repo, r.env
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != want {
			t.Fatalf("hook claude-gates exited %d (%v), want %d:\n%s", code, err, want, out)
		}
	}
	gates(`mkdir -p .zerg && printf '[[gates]]\nname = "check"\ncommand = "test ! -f FAIL"\n' > .zerg/config.toml && git add .zerg && git commit -q -m gates`, 0)
	gates(`echo x > FAIL && git add FAIL && git commit -q -m fail`, 1)
	url := startServe(t, r)
	ctx := newBrowser(t, 1200, 800)
	navigate(t, ctx, url)
	waitJS(t, ctx, `!!(window.zerg && window.zerg.timeline && window.zerg.timeline.runs === 2)`, 15*time.Second)
	if n := evalJS[int](t, ctx, `window.zerg.timeline.gates`); n != 2 {
		t.Errorf("timeline has %d gate runs, want 2", n)
	}
	for _, g := range []string{"passed", "failed"} {
		if n := evalJS[int](t, ctx, `document.querySelectorAll('#timeline rect.gate.g-`+g+`').length`); n != 1 {
			t.Errorf("%d %s gate bars, want 1", n, g)
		}
	}
	if p, f := evalJS[string](t, ctx, `getComputedStyle(document.querySelector('#timeline rect.g-passed')).fill`),
		evalJS[string](t, ctx, `getComputedStyle(document.querySelector('#timeline rect.g-failed')).fill`); p == f {
		t.Errorf("a gate run that passed and one that failed are both %s", p)
	}
	if title := evalJS[string](t, ctx, `document.querySelector('#timeline rect.g-failed title').textContent`); !strings.Contains(title, "failed: check") {
		t.Errorf("the failed gate run's title is %q, want it to name the gate", title)
	}
	if rows := evalJS[int](t, ctx, `window.zerg.timeline.rows`); rows != 2 {
		t.Errorf("timeline has %d rows, want one per worker (2)", rows)
	}
	bar := func(task, outcome string) string {
		return fmt.Sprintf(`document.querySelectorAll('#timeline rect.run.o-%s[data-task=%q]').length`, outcome, task)
	}
	if n := evalJS[int](t, ctx, bar("T1", "failed")); n != 1 {
		t.Errorf("%d failed bars for T1, want 1", n)
	}
	if n := evalJS[int](t, ctx, bar("T2", "done")); n != 1 {
		t.Errorf("%d done bars for T2, want 1", n)
	}
	if n := evalJS[int](t, ctx, `document.querySelectorAll('#timeline line.merge').length`); n != 1 {
		t.Errorf("%d merge ticks, want 1 (T2's)", n)
	}
	failed := evalJS[string](t, ctx, `getComputedStyle(document.querySelector('#timeline rect.o-failed')).fill`)
	done := evalJS[string](t, ctx, `getComputedStyle(document.querySelector('#timeline rect.o-done')).fill`)
	if failed == done {
		t.Errorf("a failed run and a done one are both %s", failed)
	}
	// A gate run recorded while the state stays put reaches the page on its
	// own (a patch that changes no task).
	patches := evalJS[int](t, ctx, `window.zerg.patches`)
	gates(`git rm -q FAIL && echo y > y.txt && git add y.txt && git commit -q -m y`, 0)
	waitJS(t, ctx, `window.zerg.timeline.gates === 3`, 5*time.Second)
	if n := evalJS[int](t, ctx, `document.querySelectorAll('#timeline rect.gate.g-passed').length`); n != 2 {
		t.Errorf("%d passed gate bars, want 2", n)
	}
	if n := evalJS[int](t, ctx, `window.zerg.patches`); n <= patches {
		t.Errorf("the gate run came in no patch (%d patches before, %d after)", patches, n)
	}
	// A run that starts shows as running, on a row of its own worker.
	r.zerg(t, "retry", "T1")
	r.zerg(t, "claim", "--worker", "w3", "T1")
	waitJS(t, ctx, `window.zerg.timeline.runs === 3 && window.zerg.timeline.rows === 3`, 5*time.Second)
	if n := evalJS[int](t, ctx, bar("T1", "running")); n != 1 {
		t.Errorf("%d running bars for T1, want 1", n)
	}
	if n := evalJS[int](t, ctx, `window.zerg.timeline.gates`); n != 3 {
		t.Errorf("timeline has %d gate runs after the claim, want 3", n)
	}
}

// TestServeToken: serve prints a URL with a secret made for the run, and
// answers nothing without it; the page opened from that URL works, and its
// address no longer shows the secret.
func TestServeToken(t *testing.T) {
	r := newViewRepo(t, viewGraph)
	printed := startServe(t, r)
	u, err := url.Parse(printed)
	if err != nil || u.Path != "/" || len(u.Query().Get("token")) < 32 {
		t.Fatalf("printed URL %q: want http://HOST:PORT/?token=SECRET", printed)
	}
	noRedirect := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	base := "http://" + u.Host
	for _, path := range []string{"/", "/app.js", "/api/features", "/api/events?feature=view", "/api/task?feature=view&id=T1", "/api/output?feature=view&id=T1&attempt=1", "/?token=wrong"} {
		resp, err := noRedirect.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || strings.Count(string(body), "\n") != 1 {
			t.Errorf("%s without the token: %d %q", path, resp.StatusCode, body)
		}
	}
	// A second serve has a secret of its own.
	if other := startServe(t, r); other == printed || strings.Contains(other, u.Query().Get("token")) {
		t.Errorf("two runs, one secret: %s and %s", printed, other)
	}

	ctx := newBrowser(t, 1000, 700)
	navigate(t, ctx, printed)
	waitJS(t, ctx, `window.zerg && window.zerg.nodes === 3`, 15*time.Second)
	if loc := evalJS[string](t, ctx, `location.href`); strings.Contains(loc, "token") {
		t.Errorf("the address bar shows the secret: %s", loc)
	}
	if c := evalJS[string](t, ctx, `document.cookie`); c != "" {
		t.Errorf("the page's script can read the cookie: %q", c)
	}
}

// forgeStatus moves feature view's state ref, as a plain git fetch of
// refs/zerg/* would, to a commit whose task id has the status given.
func forgeStatus(t testing.TB, r *viewRepo, id, status string) {
	t.Helper()
	script := `set -e
ref=refs/zerg/features/view
path=$(git ls-tree -r --name-only $ref tasks | grep "/$1\$")
git cat-file blob "$ref:$path" | sed "s|\"status\": *\"[a-z]*\"|\"status\": \"$2\"|" > forged.json
export GIT_INDEX_FILE=$PWD/forge.idx
git read-tree $ref
git update-index --cacheinfo "100644,$(git hash-object -w forged.json),$path"
tree=$(git write-tree)
rm -f forge.idx forged.json
git update-ref -m "fetch origin: forced-update" $ref "$(git commit-tree "$tree" -p $ref -m "mark $1")"
`
	run(t, r.repo, r.env, "sh", "-c", script, "forge", id, status)
}

// TestServeRefusesForgedState: state changed outside git-zerg into
// something illegal, here a status carrying markup, is not drawn: the open
// page drops the graph and says why, as status refuses it.
func TestServeRefusesForgedState(t *testing.T) {
	r := newViewRepo(t, viewGraph)
	printed := startServe(t, r)
	ctx := newBrowser(t, 1000, 700)
	navigate(t, ctx, printed)
	waitJS(t, ctx, `window.zerg && window.zerg.nodes === 3`, 15*time.Second)

	forgeStatus(t, r, "T1", `x\"><a id=\"injected\" href=\"//evil.example/\">pwned</a><b class=\"`)
	waitJS(t, ctx, `window.zerg.refused >= 1`, 10*time.Second)
	if n := evalJS[int](t, ctx, `document.querySelectorAll('#graph *').length`); n != 0 {
		t.Errorf("the graph still shows %d elements of the refused state", n)
	}
	problem := evalJS[string](t, ctx, `document.getElementById('problem').textContent`)
	if !strings.HasPrefix(problem, "refused: the state of view was changed outside git-zerg") {
		t.Errorf("the page says %q", problem)
	}
	if evalJS[bool](t, ctx, `!!document.getElementById('injected') || !!document.querySelector('a[href*="evil"]')`) {
		t.Error("the forged markup is in the page")
	}
	cmd := exec.Command("git-zerg", "status")
	cmd.Dir, cmd.Env = r.repo, r.env
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "changed outside git-zerg") {
		t.Errorf("status took the state the page refused: %v\n%s", err, out)
	}
}

// TestServePageEscapes feeds the page, through the server's own files and
// token, a snapshot whose values carry markup (as a state that passed no
// check would): every one is shown as text, none becomes an element.
func TestServePageEscapes(t *testing.T) {
	r := newViewRepo(t, viewGraph)
	s, err := gitstore.Open(context.Background(), r.repo)
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sv := view.NewServer(sctx, view.NewSource(sctx, s, time.Now), "view")
	const markup = `x"><a id="injected" href="//evil.example/">pwned</a><b class="`
	snap := map[string]any{"feature": "view", "tip": "t", "now": time.Now().UTC(), "levels": [][]string{{"T1"}}, "workers": []any{},
		"counts": map[string]int{"pending": 1}, "done": 0, "total": 1,
		"tasks": []map[string]any{{"id": "T1", "title": markup, "level": 1, "status": markup, "worker": markup, "attempts": 1, "reason": markup}}}
	data, _ := json.Marshal(snap)
	mux := http.NewServeMux()
	mux.Handle("/", sv.Handler())
	mux.HandleFunc("GET /api/events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: snapshot\ndata: %s\n\n", data)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-sctx.Done():
		}
	})
	hs := httptest.NewServer(mux)
	defer hs.Close()
	defer cancel() // the stream ends before the server waits for it

	ctx := newBrowser(t, 1000, 700)
	navigate(t, ctx, sv.URL(strings.TrimPrefix(hs.URL, "http://")))
	waitJS(t, ctx, `window.zerg && window.zerg.nodes === 1`, 15*time.Second)
	if evalJS[bool](t, ctx, `!!document.getElementById('injected') || !!document.querySelector('a[href*="evil"]')`) {
		t.Error("markup in a task's values became an element of the page")
	}
	if cls := evalJS[string](t, ctx, `document.querySelector('#graph .node').getAttribute('class')`); cls != "node s-unknown" {
		t.Errorf("an unknown status made the node's class %q", cls)
	}
	if !evalJS[bool](t, ctx, `document.querySelector('#graph .node title').textContent.includes('pwned</a>')`) {
		t.Error("the values are not shown as text")
	}
}

// TestViewLoad10k measures both views on a 10,000-task feature: the time
// to the first full screen or page, and from a transition to the screen or
// the page showing it. The bounds only catch a view that stops being
// usable; the log lines are the measurements.
func TestViewLoad10k(t *testing.T) {
	if testing.Short() {
		t.Skip("plans 10,000 tasks")
	}
	const n = 10000
	dir := t.TempDir()
	gp := filepath.Join(dir, "graph.json")
	checkOnlyGraph(t, gp, "big", n)
	b, err := os.ReadFile(gp)
	if err != nil {
		t.Fatal(err)
	}
	r := newViewRepo(t, string(b))

	t.Run("watch", func(t *testing.T) {
		start := time.Now()
		s, _ := startWatch(t, r)
		s.waitFor(t, `T0000\s+pending`, 30*time.Second)
		t.Logf("watch, %d tasks: first screen %s after start", n, time.Since(start).Round(time.Millisecond))
		for i, id := range []string{"T0001", "T0002", "T0003"} {
			r.zerg(t, "claim", "--worker", fmt.Sprintf("ww%d", i), id)
			d := s.waitFor(t, id+`\s+claimed`, 10*time.Second)
			t.Logf("watch, %d tasks: claim of %s on screen %s after the claim returned", n, id, d.Round(time.Millisecond))
			if d > 3*time.Second {
				t.Errorf("watch took %s to show a claim", d)
			}
		}
	})

	t.Run("serve", func(t *testing.T) {
		url := startServe(t, r)
		ctx := newBrowser(t, 1400, 900)
		start := time.Now()
		navigate(t, ctx, url)
		waitJS(t, ctx, fmt.Sprintf(`window.zerg && window.zerg.nodes === %d`, n), 60*time.Second)
		wall := time.Since(start)
		paint := evalJS[float64](t, ctx, `window.zerg.paintMs`)
		draw := evalJS[float64](t, ctx, `window.zerg.lastDrawMs`)
		t.Logf("serve, %d tasks: graph drawn %s after navigation began (%.0f ms by the page's clock; drawing alone %.0f ms)",
			n, wall.Round(time.Millisecond), paint, draw)
		if wall > 20*time.Second {
			t.Errorf("first paint took %s", wall)
		}
		for i, id := range []string{"T0004", "T0005", "T0006"} {
			before := evalJS[string](t, ctx, nodeFill(id))
			r.zerg(t, "claim", "--worker", fmt.Sprintf("ws%d", i), id)
			d := waitJS(t, ctx, nodeFill(id)+` !== `+fmt.Sprintf("%q", before), 10*time.Second)
			t.Logf("serve, %d tasks: claim of %s recoloured its node %s after the claim returned", n, id, d.Round(time.Millisecond))
			if d > 3*time.Second {
				t.Errorf("the page took %s to show a claim", d)
			}
		}
	})
}

// TestServeScreenshot saves a picture of the page on the demo's graph in
// the middle of a rush, for the README:
//
//	ZERG_SCREENSHOT=$PWD/docs/serve.png go test -run TestServeScreenshot ./cmd/git-zerg/
func TestServeScreenshot(t *testing.T) {
	out := os.Getenv("ZERG_SCREENSHOT")
	if out == "" {
		t.Skip("set ZERG_SCREENSHOT=FILE.png to take the README's screenshot")
	}
	g, err := json.Marshal(demo.Graph())
	if err != nil {
		t.Fatal(err)
	}
	r := newViewRepo(t, string(g))
	// Two tasks done, two at work with some output, one failed once.
	finish := func(worker, id, path, content string) {
		r.zerg(t, "claim", "--worker", worker, id)
		p := filepath.Join(r.repo, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		run(t, r.repo, r.env, "git", "add", "-A")
		run(t, r.repo, r.env, "git", "commit", "-q", "-m", id)
		r.zerg(t, "done", "--worker", worker, id)
	}
	finish("w1", "GREET-1", "lib/greet.sh", "greet() { echo \"Hello, $1!\"; }\n")
	finish("w2", "GREET-2", "lib/farewell.sh", "farewell() { echo \"Goodbye, $1.\"; }\n")
	r.zerg(t, "claim", "--worker", "w2", "CLI-2")
	r.zerg(t, "fail", "--worker", "w2", "CLI-2", "--reason", "verification failed: bin/bye printed nothing")
	r.zerg(t, "claim", "--worker", "w1", "CLI-1")
	r.zerg(t, "claim", "--worker", "w3", "DOCS-1")
	run(t, r.repo, r.env, "sh", "-c", `for id in CLI-1 DOCS-1; do mkdir -p .git/zerg/run/greeter/$id; printf '== run 1\nreading the task\nwriting files\n' > .git/zerg/run/greeter/$id/attempt-1.log; done`)

	url := startServe(t, r)
	ctx := newBrowser(t, 1280, 360)
	navigate(t, ctx, url)
	waitJS(t, ctx, `window.zerg && window.zerg.nodes === 7`, 15*time.Second)
	waitJS(t, ctx, `document.getElementById('conn').textContent === 'live'`, 5*time.Second)
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(c, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", out, len(png))

}

// TestWatchRush watches a real rush whose scripted workers wait for the
// test's word: the tasks of level 1 show as claimed with their output,
// then done as each worker finishes, then level 2 runs.
func TestWatchRush(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a rush")
	}
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	if err := os.Mkdir(gate, 0o755); err != nil {
		t.Fatal(err)
	}
	r := &viewRepo{dir: dir, repo: filepath.Join(dir, "repo"), env: append(gitEnv(dir), "TERM=xterm", "GATE="+gate)}
	run(t, dir, r.env, "git", "init", "-q", "-b", "main", r.repo)
	files := map[string]string{
		".zerg/config.toml": "[workers]\ncommand = \"sh worker.sh\"\ntimeout = \"1m\"\n",
		// Bounded: a worker left waiting ends by itself.
		"worker.sh": "echo \"working on $ZERG_TASK\"\ni=0\nwhile [ ! -f \"$GATE/$ZERG_TASK\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\necho finished\n",
	}
	for name, content := range files {
		p := filepath.Join(r.repo, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, r.repo, r.env, "git", "add", "-A")
	run(t, r.repo, r.env, "git", "commit", "-q", "-m", "setup")
	gp := filepath.Join(dir, "graph.json")
	os.WriteFile(gp, []byte(viewGraph), 0o644)
	r.zerg(t, "plan", "--graph", gp)

	s, _ := startWatch(t, r)
	s.waitFor(t, `T1\s+pending`, 10*time.Second)

	release := func(ids ...string) {
		for _, id := range ids {
			os.WriteFile(filepath.Join(gate, id), nil, 0o644)
		}
	}
	rush := exec.Command("git-zerg", "rush", "--workers", "2")
	rush.Dir, rush.Env = r.repo, r.env
	var out strings.Builder
	rush.Stdout, rush.Stderr = &out, &out
	// Its workers run in process groups of their own and may hold the
	// output pipe after it ends.
	rush.WaitDelay = 5 * time.Second
	if err := rush.Start(); err != nil {
		t.Fatal(err)
	}
	finished := make(chan struct{})
	var rushErr error
	go func() { rushErr = rush.Wait(); close(finished) }()
	t.Cleanup(func() {
		release("T1", "T2", "T3")
		select {
		case <-finished:
		case <-time.After(30 * time.Second):
			rush.Process.Kill()
			<-finished
			t.Error("the rush did not end")
		}
	})

	s.waitFor(t, `T1\s+claimed\s+worker-\S+\s+\S+\s+#1`, 20*time.Second)
	s.waitFor(t, `T2\s+claimed\s+worker-`, 10*time.Second)
	s.waitFor(t, `output \(attempt-1\.log\):\s+== .*\s+working on T[12]`, 10*time.Second)
	release("T1")
	s.waitFor(t, `T1\s+(verified|done)`, 20*time.Second)
	s.waitFor(t, `T2\s+claimed`, time.Second)
	release("T2")
	s.waitFor(t, `T3\s+claimed\s+worker-`, 30*time.Second)
	release("T3")
	s.waitFor(t, `feature view: 3/3 done`, 30*time.Second)
	select {
	case <-finished:
		if rushErr != nil {
			t.Fatalf("rush: %v\n%s", rushErr, out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the rush did not end after its last task")
	}
}

// TestLogPaged: on a terminal, log goes through the pager git would use,
// as git log does; into a pipe it does not.
func TestLogPaged(t *testing.T) {
	r := newViewRepo(t, viewGraph)
	r.zerg(t, "claim", "--worker", "w1", "T1")
	cmd := exec.Command("git-zerg", "log", "-p")
	cmd.Dir = r.repo
	cmd.Env = append(r.env, "GIT_PAGER=sed s/^/PAGED:/")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	read := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(tty) // to the terminal's end: EIO once the process is gone
		read <- string(b)
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("log -p on a terminal: %v", err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("log -p did not end with its pager")
	}
	select {
	case out := <-read:
		if !regexp.MustCompile(`PAGED:.*claim T1`).MatchString(out) {
			t.Errorf("log -p on a terminal did not go through the pager:\n%s", out)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal did not end")
	}
	piped := exec.Command("git-zerg", "log", "-p")
	piped.Dir, piped.Env = r.repo, append(r.env, "GIT_PAGER=sed s/^/PAGED:/")
	out, err := piped.Output()
	if err != nil || strings.Contains(string(out), "PAGED:") || !strings.Contains(string(out), "claim T1") {
		t.Errorf("log -p into a pipe: %v\n%s", err, out)
	}
}
