package view

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/gitstore/storetest"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

func newStore(t *testing.T) *gitstore.Store { return storetest.New(t) }

// planThree plans T1 and T2, then T3 after both; the title of T2 tries
// to retitle the terminal.
func planThree(t *testing.T, s *gitstore.Store) {
	t.Helper()
	task := func(id, title string, level int, deps ...string) *state.Task {
		return &state.Task{Spec: &levels.Task{ID: id, Title: title, Dependencies: deps, Verification: levels.Verification{Command: "true"}},
			Level: level, Status: state.Pending, History: []state.Event{{Clock: 1, At: time.Now(), Op: "plan", To: state.Pending}}}
	}
	ts := []*state.Task{task("T1", "first", 1), task("T2", "second \x1b]0;owned\x07", 1), task("T3", "third", 2, "T1", "T2")}
	err := s.Create(context.Background(), "f", false, time.Now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		return &gitstore.Message{Subject: "plan f", Op: "plan"}, tx.Init(&state.Feature{Name: "f", Levels: [][]string{{"T1", "T2"}, {"T3"}}}, ts)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func claim(t *testing.T, s *gitstore.Store, id, worker, host string) {
	t.Helper()
	err := s.Update(context.Background(), "f", time.Now, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		tk, err := tx.Task(id)
		if err != nil {
			return nil, err
		}
		c := tk.Clone()
		c.Worker, c.Owner, c.Attempts = worker, worker+"@"+host, c.Attempts+1
		c.Record(state.Event{Clock: tx.Clock() + 1, At: time.Now(), Op: "claim", To: state.Claimed, Worker: worker})
		if err := tx.PutWorker(&state.Worker{Name: worker, Owner: c.Owner, Task: id, Host: host, Since: time.Now(), Expires: time.Now().Add(time.Hour)}); err != nil {
			return nil, err
		}
		return &gitstore.Message{Subject: "claim " + id, Op: "claim", Task: id, Worker: worker}, tx.Put(c)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSnapshotChangedDetail(t *testing.T) {
	s := newStore(t)
	planThree(t, s)
	a, err := loadSnapshot(s, "f", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if a.Total != 3 || a.Counts["pending"] != 3 || len(a.Levels) != 2 {
		t.Fatalf("snapshot: %+v", a)
	}
	if got := a.Task("T3").Deps; !reflect.DeepEqual(got, []string{"T1", "T2"}) {
		t.Errorf("T3 deps %v", got)
	}
	claim(t, s, "T1", "w1", "hostA")
	b, err := loadSnapshot(s, "f", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	changed, all := changedTasks(a, b)
	if all || len(changed) != 1 || changed[0].ID != "T1" {
		t.Fatalf("Changed: %v %v", all, changed)
	}
	t1 := changed[0]
	if t1.Status != state.Claimed || t1.Worker != "w1" || t1.Host != "hostA" || t1.Attempts != 1 || t1.Since.IsZero() || !t1.Until.IsZero() {
		t.Errorf("T1 as shown: %+v", t1)
	}
	if _, all := changedTasks(nil, b); !all {
		t.Error("a first snapshot is not all new")
	}

	d, err := loadDetail(s, "f", "T1")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Changes) != 2 || !strings.HasPrefix(d.Changes[0].Subject, "claim T1") || !strings.HasPrefix(d.Changes[1].Subject, "plan") {
		t.Fatalf("changes: %+v", d.Changes)
	}
	if !strings.Contains(d.Changes[0].Diff, `+   "status": "claimed",`) {
		t.Errorf("claim diff:\n%s", d.Changes[0].Diff)
	}
	if len(d.Attempts) != 0 {
		t.Errorf("attempts %v without logs", d.Attempts)
	}
	if _, err := readOutput(s, "f", "T1", 0, 100); err != errNoOutput {
		t.Errorf("output without a log: %v", err)
	}
	if _, ok := logFile(s, "f", "../x", 1); ok {
		t.Error("a log path from a bad task id")
	}
}

func TestParseKeys(t *testing.T) {
	got := parseKeys([]byte("\x1b[A\x1b[Bjq\t\r\x1b[5~\x1b[Z\x03\x1bOA\x1b[1;5A\x1b"))
	want := []Key{KeyUp, KeyDown, "j", "q", KeyTab, KeyEnter, KeyPageUp, KeyBackTab, KeyCtrlC, KeyUp, KeyEsc}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseKeys = %q, want %q", got, want)
	}
}

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                    "plain",
		"\x1b[31mred\x1b[0m":       "red",
		"title\x1b]0;owned\x07end": "titleend",
		"a\tb":                     "a       b",
		"cr\rlf\n":                 "cr lf ",
		"bell\x07 c1\u009b":        "bell  c1 ",
		"bad \xff byte":            "bad   byte",
	} {
		if got := cleanText(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWatchFrame(t *testing.T) {
	s := newStore(t)
	planThree(t, s)
	claim(t, s, "T2", "w2", "hostB")
	src := NewSource(context.Background(), s, time.Now)
	w := newWatch(src, "f")
	w.SetSnapshot(src.Snapshot("f"))
	now := time.Now()
	screen := strings.Join(w.Frame(100, 30, now), "\n")
	plain := escapesRe.ReplaceAllString(screen, "")
	for _, want := range []string{"feature f: 0/3 done", "level 1", "T1  pending", "T2  claimed  w2  hostB  #1", "level 2", "claim    pending → claimed w2", "no output on this machine"} {
		if !strings.Contains(plain, want) {
			t.Errorf("no %q on the screen:\n%s", want, plain)
		}
	}
	if strings.Contains(screen, "\x1b]") || strings.Contains(screen, "\x07") {
		t.Errorf("a title's escape reached the screen: %q", screen)
	}
	// The selection starts on the task at work.
	if w.selected().ID != "T2" {
		t.Errorf("selected %s", w.selected().ID)
	}
	w.Key(KeyUp)
	if w.selected().ID != "T1" {
		t.Errorf("after up: %s", w.selected().ID)
	}
	w.Key(KeyEnd)
	if w.selected().ID != "T3" {
		t.Errorf("after end: %s", w.selected().ID)
	}
	// The selection stays on its task across a new read.
	claim(t, s, "T1", "w1", "hostA")
	w.SetSnapshot(src.Snapshot("f"))
	if w.selected().ID != "T3" {
		t.Errorf("after a change: %s", w.selected().ID)
	}
	w.Key(KeyEnter)
	if !w.logMode || !strings.Contains(strings.Join(w.Frame(80, 10, now), "\n"), "no output of T3") {
		t.Errorf("log view: %q", w.Frame(80, 10, now))
	}
	if w.Key("q") || w.logMode {
		t.Error("q in the log view should go back, not quit")
	}
	if !w.Key("q") {
		t.Error("q does not quit")
	}
	// Any size, however small, gives lines no wider than the screen.
	for _, size := range [][2]int{{20, 5}, {40, 8}, {80, 12}, {200, 60}} {
		lines := w.Frame(size[0], size[1], now)
		if len(lines) > size[1] {
			t.Errorf("%v: %d lines", size, len(lines))
		}
		for _, l := range lines {
			if n := utf8.RuneCountInString(escapesRe.ReplaceAllString(l, "")); n > size[0] {
				t.Errorf("%v: line of %d columns: %q", size, n, l)
			}
		}
	}
}

func TestWriteText(t *testing.T) {
	s := newStore(t)
	planThree(t, s)
	claim(t, s, "T1", "w1", "hostA")
	sn, err := loadSnapshot(s, "f", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteText(&b, sn, time.Now()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("escapes in plain text: %q", out)
	}
	for _, want := range []string{"level 1\n  T1  claimed  w1  hostA  #1", "  T2  pending", "level 2\n  T3  pending", "w1 T1 on hostA"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

func TestCostFields(t *testing.T) {
	task := &state.Task{History: []state.Event{
		{Op: "claim"},
		{Op: "fail", Usage: &state.Usage{CostUSD: 0.25, InputTokens: 1000, OutputTokens: 200}},
		{Op: "done", Usage: &state.Usage{CostUSD: 1.25, InputTokens: 40000, OutputTokens: 800}},
	}}
	if usd, tok, ok := costOf(task); !ok || usd != 1.5 || tok != 42000 {
		t.Errorf("costOf = %v %v %v", usd, tok, ok)
	}
	if _, _, ok := costOf(&state.Task{History: []state.Event{{Op: "claim"}}}); ok {
		t.Error("a task without reported usage has a cost")
	}
	tk := &Task{HasCost: true, CostUSD: 1.5, Tokens: 42000}
	if got := tk.Cost(); got != "$1.50 42k tok" {
		t.Errorf("Cost() = %q", got)
	}
}

func TestLoopbackHost(t *testing.T) {
	for h, want := range map[string]bool{
		"127.0.0.1:80": true, "localhost:1": true, "[::1]:8080": true, "127.1.2.3": true, "LOCALHOST": true,
		"0.0.0.0:80": false, "example.com:80": false, "10.0.0.1": false, "": false, "localhost.example.com": false,
	} {
		if got := loopbackHost(h); got != want {
			t.Errorf("LoopbackHost(%q) = %v", h, got)
		}
	}
}

// TestServer checks the page's API and its stream: a whole snapshot
// first, then a patch naming only the task that moved.
func TestServer(t *testing.T) {
	s := newStore(t)
	planThree(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	sv := NewServer(ctx, NewSource(context.Background(), s, time.Now), "f")
	sv.Poll = 20 * time.Millisecond
	hs := httptest.NewServer(sv.Handler())
	// Streams end with the server's context, before the test server
	// waits for its connections.
	t.Cleanup(hs.Close)
	t.Cleanup(cancel)

	get := authorizedGet(t, hs, sv)
	if r := get("/", ""); r.StatusCode != 200 || !strings.Contains(r.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Errorf("/: %d %v", r.StatusCode, r.Header)
	}
	for _, p := range []string{"/app.js", "/app.css"} {
		if r := get(p, ""); r.StatusCode != 200 {
			t.Errorf("%s: %d", p, r.StatusCode)
		}
	}
	if r := get("/api/features", "attacker.example"); r.StatusCode != http.StatusForbidden {
		t.Errorf("another host name: %d", r.StatusCode)
	}
	if r := get("/api/task?feature=f&id=..%2Fx", ""); r.StatusCode != http.StatusBadRequest {
		t.Errorf("bad id: %d", r.StatusCode)
	}
	if r := get("/api/task?feature=f&id=T9", ""); r.StatusCode != http.StatusNotFound {
		t.Errorf("unknown task: %d", r.StatusCode)
	}
	if r := get("/api/output?feature=f&id=T1", ""); r.StatusCode != http.StatusNotFound {
		t.Errorf("no output: %d", r.StatusCode)
	}
	var feats struct{ Features []string }
	json.NewDecoder(get("/api/features", "").Body).Decode(&feats)
	if !reflect.DeepEqual(feats.Features, []string{"f"}) {
		t.Errorf("features %v", feats)
	}

	resp := get("/api/events?feature=f", "")
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("events: %s", ct)
	}
	events := make(chan [2]string, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		ev := ""
		for sc.Scan() {
			l := sc.Text()
			if e, ok := strings.CutPrefix(l, "event: "); ok {
				ev = e
			}
			if d, ok := strings.CutPrefix(l, "data: "); ok {
				events <- [2]string{ev, d}
			}
		}
		close(events)
	}()
	next := func() (string, string) {
		t.Helper()
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatal("stream ended")
			}
			return e[0], e[1]
		case <-time.After(5 * time.Second):
			t.Fatal("no event within 5s")
		}
		return "", ""
	}
	if ev, data := next(); ev != "snapshot" || !strings.Contains(data, `"id":"T3"`) {
		t.Fatalf("first event %s %s", ev, data)
	}
	claim(t, s, "T2", "w2", "hostB")
	ev, data := next()
	var p patchEvent
	if err := json.Unmarshal([]byte(data), &p); ev != "patch" || err != nil {
		t.Fatalf("second event %s %s %v", ev, data, err)
	}
	if len(p.Tasks) != 1 || p.Tasks[0].ID != "T2" || p.Tasks[0].Status != state.Claimed || p.Counts["claimed"] != 1 {
		t.Errorf("patch %+v", p)
	}

	var task taskJSON
	json.NewDecoder(get("/api/task?feature=f&id=T2", "").Body).Decode(&task)
	if task.Task == nil || task.Task.Status != state.Claimed || len(task.Changes) != 2 {
		t.Errorf("task: %+v", task)
	}
}

// authorizedGet opens the server's URL as a browser would (the token in
// its query, then the cookie it sets) and returns a GET of path with that
// cookie, for the Host given ("": the server's own).
func authorizedGet(t *testing.T, hs *httptest.Server, sv *Server) func(path, host string) *http.Response {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := hs.Client()
	c.Jar = jar
	u := sv.URL(strings.TrimPrefix(hs.URL, "http://"))
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Request.URL.RawQuery != "" {
		t.Fatalf("open %s: %d at %s (want the page, the token dropped from its address)", u, resp.StatusCode, resp.Request.URL)
	}
	return func(path, host string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", hs.URL+path, nil)
		if host != "" {
			req.Host = host
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
}

// TestServerToken: without the run's token nothing is answered, the page
// and its files included; the token in the query sets an HttpOnly,
// SameSite=Strict cookie that the page's own requests carry.
func TestServerToken(t *testing.T) {
	s := newStore(t)
	planThree(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	sv := NewServer(ctx, NewSource(ctx, s, time.Now), "f")
	hs := httptest.NewServer(sv.Handler())
	t.Cleanup(hs.Close)
	t.Cleanup(cancel)
	if other := NewServer(ctx, NewSource(ctx, s, time.Now), "f"); other.token == sv.token || len(sv.token) < 32 {
		t.Fatalf("tokens %q and %q: one per run, and long", sv.token, other.token)
	}
	// A token one character off (never the token itself, whatever its last).
	wrong := sv.token[:len(sv.token)-1] + map[bool]string{true: "y", false: "x"}[strings.HasSuffix(sv.token, "x")]
	noRedirect := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"/", "/app.js", "/app.css", "/api/features", "/api/events?feature=f", "/api/task?feature=f&id=T1",
		"/api/output?feature=f&id=T1", "/?token=", "/?token=" + wrong, "/api/features?token=guess"} {
		resp, err := noRedirect.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || strings.Count(string(body), "\n") != 1 || !strings.Contains(string(body), "token") {
			t.Errorf("%s without the token: %d %q", path, resp.StatusCode, body)
		}
		if len(resp.Cookies()) != 0 {
			t.Errorf("%s without the token set a cookie", path)
		}
	}
	resp, err := noRedirect.Get(sv.URL(strings.TrimPrefix(hs.URL, "http://")))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cs := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" || len(cs) != 1 {
		t.Fatalf("the printed URL: %d to %q, cookies %v", resp.StatusCode, resp.Header.Get("Location"), cs)
	}
	if c := cs[0]; c.Value != sv.token || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Errorf("cookie %+v", c)
	}
	// The page comes with the feature's snapshot, as data.
	page, _ := http.NewRequest("GET", hs.URL+"/", nil)
	page.AddCookie(cs[0])
	if resp, err := noRedirect.Do(page); err != nil || resp.StatusCode != 200 {
		t.Errorf("the page with the cookie: %v %v", resp, err)
	} else {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !regexp.MustCompile(`<script id="first" type="application/json">\{"feature":"f",[^<]*"id":"T1"[^<]*</script>`).Match(body) {
			t.Errorf("the page does not carry the snapshot:\n%s", body)
		}
	}
	req, _ := http.NewRequest("GET", hs.URL+"/api/features", nil)
	req.AddCookie(cs[0])
	if resp, err := noRedirect.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("with the cookie: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// A script on the page cannot read it: HttpOnly; nor can another
	// server's page of this host guess its name and value.
	if !strings.HasPrefix(cs[0].Name, "zerg-serve-") || cs[0].Name == other(ctx, s).cookieName() {
		t.Errorf("cookie name %q", cs[0].Name)
	}
}

func other(ctx context.Context, s *gitstore.Store) *Server {
	return NewServer(ctx, NewSource(ctx, s, time.Now), "f")
}

// forgeStatus moves the feature's ref, as a hand edit or a fetch would
// (its reflog message says which: "" for none), to a commit whose task id
// has its status set to status, no transition recorded.
func forgeStatus(t *testing.T, s *gitstore.Store, id, status, reflog string) {
	t.Helper()
	git := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"--git-dir", s.CommonDir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+filepath.Join(t.TempDir(), "index"))
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	ref := gitstore.FeatureRef("f")
	var path string
	for _, p := range strings.Split(git("", "ls-tree", "-r", "--name-only", ref, "tasks"), "\n") {
		if strings.HasSuffix(p, "/"+id) {
			path = p
		}
	}
	blob := git("", "cat-file", "blob", ref+":"+path)
	var tk map[string]any
	if err := json.Unmarshal([]byte(blob), &tk); err != nil {
		t.Fatal(err)
	}
	tk["status"] = status
	forged, _ := json.Marshal(tk)
	idx := filepath.Join(t.TempDir(), "index")
	run := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"--git-dir", s.CommonDir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+idx)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	hash := git(string(forged), "hash-object", "-w", "--stdin")
	run("read-tree", ref)
	run("update-index", "--cacheinfo", "100644,"+hash+","+path)
	tree := run("write-tree")
	c := run("-c", "user.name=x", "-c", "user.email=x@x", "commit-tree", tree, "-p", ref, "-m", "mark "+id)
	if reflog != "" {
		run("update-ref", "-m", reflog, ref, c)
	} else {
		run("update-ref", ref, c)
	}
}

// TestServerRefusesForgedState: state that fails the check status makes
// is shown as refused, never as data: the stream sends the refusal and
// nothing of the tasks, the task page refuses, and a page that was open
// is told to drop what it showed.
func TestServerRefusesForgedState(t *testing.T) {
	s := newStore(t)
	planThree(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	sv := NewServer(ctx, NewSource(ctx, s, time.Now), "f")
	sv.Poll = 20 * time.Millisecond
	hs := httptest.NewServer(sv.Handler())
	t.Cleanup(hs.Close)
	t.Cleanup(cancel)
	get := authorizedGet(t, hs, sv)
	next := stream(t, get("/api/events?feature=f", ""))
	if ev, _ := next(); ev != "snapshot" {
		t.Fatalf("first event %s", ev)
	}

	const markup = `x"><a href="//evil.example/">pwned</a><b x="`
	forgeStatus(t, s, "T1", markup, "fetch origin: forced-update")
	ev, data := next()
	if ev != "refused" || !strings.Contains(data, "refused: the state of f was changed outside git-zerg") || strings.Contains(data, "<a") {
		t.Fatalf("after the forgery: %s %s", ev, data)
	}
	for _, path := range []string{"/api/task?feature=f&id=T1", "/api/task?feature=f&id=T2"} {
		r := get(path, "")
		body, _ := io.ReadAll(r.Body)
		// The refusal names the forged value, as text the page shows as
		// text (textContent), and here served as text.
		if r.StatusCode != http.StatusConflict || !strings.HasPrefix(string(body), "refused: ") || strings.Count(string(body), "\n") != 1 ||
			!strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") || r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %d %v %q", path, r.StatusCode, r.Header, body)
		}
	}
	// A page that opens now gets the refusal, not the last good state.
	late := stream(t, get("/api/events?feature=f", ""))
	if ev, data := late(); ev != "refused" || strings.Contains(data, `"tasks"`) {
		t.Errorf("a new page's first event: %s %s", ev, data)
	}

}

// TestWatchRefused: watch, too, drops what it showed when the state fails
// the check, and says why.
func TestWatchRefused(t *testing.T) {
	s := newStore(t)
	planThree(t, s)
	src := NewSource(context.Background(), s, time.Now)
	w := newWatch(src, "f")
	w.SetSnapshot(src.Snapshot("f"))
	forgeStatus(t, s, "T1", "done", "fetch origin: forced-update")
	sn, err := src.Snapshot("f")
	if sn != nil || !isRefusal(err) {
		t.Fatalf("a forged state read as %v, %v", sn, err)
	}
	w.SetSnapshot(sn, err)
	screen := escapesRe.ReplaceAllString(strings.Join(w.Frame(100, 30, time.Now()), "\n"), "")
	if strings.Contains(screen, "T1") || strings.Contains(screen, "level 1") || !strings.Contains(screen, "changed outside git-zerg") {
		t.Errorf("watch of a refused state:\n%s", screen)
	}
}

// TestServerRefusesUnknownStatus: a status none of git-zerg's, written by
// a plain git update-ref, is refused (by the history check, which takes no
// unsealed commit for one written here, or by the status check behind it),
// and never shown as data.
func TestServerRefusesUnknownStatus(t *testing.T) {
	s := newStore(t)
	planThree(t, s)
	forgeStatus(t, s, "T2", `x"><a href="//evil.example/">pwned</a>`, "")
	ctx, cancel := context.WithCancel(context.Background())
	sv := NewServer(ctx, NewSource(ctx, s, time.Now), "f")
	hs := httptest.NewServer(sv.Handler())
	t.Cleanup(hs.Close)
	t.Cleanup(cancel)
	get := authorizedGet(t, hs, sv)
	ev, data := stream(t, get("/api/events?feature=f", ""))()
	refusal := func(s string) bool {
		return strings.Contains(s, "none of git-zerg's") || strings.Contains(s, "changed outside git-zerg")
	}
	if ev != "refused" || !refusal(data) || strings.Contains(data, `"tasks"`) || strings.Contains(data, "<a") {
		t.Errorf("an unknown status: %s %s", ev, data)
	}
	if _, err := loadSnapshot(s, "f", time.Now()); !isRefusal(err) || !refusal(err.Error()) {
		t.Errorf("Load of a forged status: %v", err)
	}
}

// stream reads a server-sent event stream; next returns its next event
// and data, failing the test after 5 s without one.
func stream(t *testing.T, resp *http.Response) func() (string, string) {
	t.Helper()
	events := make(chan [2]string, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		ev := ""
		for sc.Scan() {
			l := sc.Text()
			if e, ok := strings.CutPrefix(l, "event: "); ok {
				ev = e
			}
			if d, ok := strings.CutPrefix(l, "data: "); ok {
				events <- [2]string{ev, d}
			}
		}
		close(events)
	}()
	return func() (string, string) {
		t.Helper()
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatal("stream ended")
			}
			return e[0], e[1]
		case <-time.After(5 * time.Second):
			t.Fatal("no event within 5s")
		}
		return "", ""
	}
}

var escapesRe = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

// TestReadOutputScrubs: a log kept verbatim (by an older version) reaches
// the views without the secrets of this process's environment.
func TestReadOutputScrubs(t *testing.T) {
	s := newStore(t)
	planThree(t, s)
	t.Setenv("ZERG_TEST_API_TOKEN", "tok-0123456789abcdef")
	dir := s.Layout().RunDir("f", "T1")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "attempt-1.log"), []byte("pushing with tok-0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := readOutput(s, "f", "T1", 0, 0)
	if err != nil || o.Text != "pushing with [REDACTED:ZERG_TEST_API_TOKEN]\n" {
		t.Errorf("output %+v, %v", o, err)
	}
}

// TestSourceOnly: a source told of an epic's features lists those alone,
// in the epic's order, the ones not planned left out.
func TestSourceOnly(t *testing.T) {
	s := newStore(t)
	planThree(t, s)
	src := NewSource(context.Background(), s, time.Now)
	if fs, err := src.Features(); err != nil || len(fs) != 1 || fs[0] != "f" {
		t.Fatalf("Features = %v, %v; want [f]", fs, err)
	}
	src.Only([]string{"x", "f"})
	if fs, err := src.Features(); err != nil || len(fs) != 1 || fs[0] != "f" {
		t.Fatalf("Features of [x f] = %v, %v; want [f] (x is not planned)", fs, err)
	}
	src.Only([]string{"x"})
	if fs, err := src.Features(); err != nil || len(fs) != 0 {
		t.Fatalf("Features of [x] = %v, %v; want none", fs, err)
	}
}
