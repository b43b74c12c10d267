package view

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
)

//go:embed web
var webFiles embed.FS

// Server is the web page of `git zerg serve`: the page, its assets, the
// state as JSON and a stream of changes as server-sent events. It only
// reads.
type Server struct {
	src     *Source
	feature string // shown first
	// Public skips the Host check that keeps other sites' pages (DNS
	// rebinding) from reading a loopback server.
	Public bool
	// Poll is how often each watched feature's ref is read.
	Poll time.Duration

	// token is this run's secret: every request must carry it, as the
	// query of the URL serve prints or as the cookie that query sets.
	// Any local process can reach a loopback port; only the user who
	// started serve saw the token.
	token string

	mu   sync.Mutex
	hubs map[string]*hub
	ctx  context.Context
	sync string // the last background sync's outcome
}

// NewServer serves src, showing feature first, under a secret of its own
// (see URL). ctx bounds every stream: ending it ends them.
func NewServer(ctx context.Context, src *Source, feature string) *Server {
	return &Server{src: src, feature: feature, Poll: PollInterval, hubs: map[string]*hub{}, ctx: ctx, token: newToken()}
}

// newToken is 192 random bits, URL-safe.
func newToken() string {
	b := make([]byte, 24)
	rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// URL is the page's address on addr (HOST:PORT), its secret included: what
// serve prints, and the only way in.
func (sv *Server) URL(addr string) string {
	return "http://" + addr + "/?token=" + sv.token
}

// cookieName is the cookie the token is kept in, named after it: servers
// on two ports of one host (which share cookies) keep theirs apart.
func (sv *Server) cookieName() string {
	sum := sha256.Sum256([]byte(sv.token))
	return "zerg-serve-" + hex.EncodeToString(sum[:6])
}

// authorized says whether r carries this run's token. A request that has
// it in its query gets it as a cookie (HttpOnly, SameSite=Strict), so that
// the page's own requests carry it without the page seeing it.
func (sv *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if c, err := r.Cookie(sv.cookieName()); err == nil && sameSecret(c.Value, sv.token) {
		return true
	}
	if !sameSecret(r.URL.Query().Get("token"), sv.token) {
		return false
	}
	http.SetCookie(w, &http.Cookie{Name: sv.cookieName(), Value: sv.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return true
}

func sameSecret(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// SetSync records the outcome of a background sync, for the page's header.
func (sv *Server) SetSync(err error, at time.Time) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if err != nil {
		sv.sync = "sync failed: " + firstLine(err.Error())
	} else {
		sv.sync = "synced " + at.Format("15:04:05")
	}
}

// Handler routes the page and its API.
func (sv *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(webFiles, "web")
	files := http.FileServer(http.FS(static))
	mux.Handle("GET /app.js", files)
	mux.Handle("GET /app.css", files)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		b, _ := webFiles.ReadFile("web/index.html")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(sv.withFirstSnapshot(b))
	})
	mux.HandleFunc("GET /api/features", sv.features)
	mux.HandleFunc("GET /api/events", sv.events)
	mux.HandleFunc("GET /api/task", sv.task)
	mux.HandleFunc("GET /api/output", sv.output)
	return sv.guard(mux)
}

// withFirstSnapshot puts the feature's snapshot into the page, as data
// (a script element of type application/json, which nothing runs and the
// page's policy allows): the graph is drawn as the page loads, before its
// event stream answers, and a screenshot taken at load shows it.
func (sv *Server) withFirstSnapshot(page []byte) []byte {
	sn, err := sv.src.Snapshot(sv.feature)
	if err != nil {
		return page
	}
	// encoding/json writes <, > and & as \u escapes: no </script> ends it.
	data, err := json.Marshal(snapshotEvent{sn, sv.src.Now()})
	if err != nil {
		return page
	}
	i := bytes.LastIndex(page, []byte("</body>"))
	if i < 0 {
		return page
	}
	out := append([]byte(nil), page[:i]...)
	out = append(out, `<script id="first" type="application/json">`...)
	out = append(out, data...)
	out = append(out, "</script>\n"...)
	return append(out, page[i:]...)
}

// guard refuses requests for another host name or without the run's
// token, and sets the headers that keep the page to its own files.
func (sv *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !sv.Public && !loopbackHost(r.Host) {
			http.Error(w, "this server answers only to a loopback host name", http.StatusForbidden)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		if !sv.authorized(w, r) {
			http.Error(w, "forbidden: git zerg serve answers only with the token in the URL it printed when it started", http.StatusForbidden)
			return
		}
		if r.URL.Path == "/" && r.URL.Query().Has("token") {
			// The cookie is set: the address bar and the history keep
			// the page's address without the secret.
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a host (or host:port) names this machine
// only: localhost or a loopback address.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (sv *Server) features(w http.ResponseWriter, r *http.Request) {
	fs, err := sv.src.Features()
	if err != nil {
		httpError(w, err)
		return
	}
	sv.mu.Lock()
	syncState := sv.sync
	sv.mu.Unlock()
	writeJSONResponse(w, map[string]any{"features": fs, "default": sv.feature, "sync": syncState})
}

func (sv *Server) featureOf(r *http.Request) (string, error) {
	f := r.URL.Query().Get("feature")
	if f == "" {
		f = sv.feature
	}
	if err := levels.ValidFeatureName(f); err != nil {
		return "", badRequest{fmt.Sprintf("bad feature %q", f)}
	}
	return f, nil
}

func (sv *Server) taskID(r *http.Request) (string, string, error) {
	f, err := sv.featureOf(r)
	if err != nil {
		return "", "", err
	}
	id := r.URL.Query().Get("id")
	if !levels.ValidID(id) {
		return "", "", badRequest{fmt.Sprintf("bad task id %q", id)}
	}
	return f, id, nil
}

// taskJSON is the task page's data.
type taskJSON struct {
	*Detail
	View   *Task   `json:"view,omitempty"`
	Output *Output `json:"output,omitempty"`
	Host   string  `json:"host,omitempty"`
	Now    string  `json:"now"`
}

// outputTail is how much of a log the task page shows; the whole of it
// (up to outputMax) is one link away.
const (
	outputTail = 64 << 10
	outputMax  = 8 << 20
)

func (sv *Server) task(w http.ResponseWriter, r *http.Request) {
	f, id, err := sv.taskID(r)
	if err != nil {
		httpError(w, err)
		return
	}
	d, err := sv.src.Detail(f, id)
	if err != nil {
		httpError(w, err)
		return
	}
	out := taskJSON{Detail: d, Now: sv.src.Now().UTC().Format(time.RFC3339Nano), View: taskOf(d.Task)}
	if len(d.Attempts) > 0 {
		attempt, _ := strconv.Atoi(r.URL.Query().Get("attempt"))
		if o, err := sv.src.Output(f, id, attempt, outputTail); err == nil {
			out.Output = o
		}
	}
	writeJSONResponse(w, out)
}

func (sv *Server) output(w http.ResponseWriter, r *http.Request) {
	f, id, err := sv.taskID(r)
	if err != nil {
		httpError(w, err)
		return
	}
	attempt, _ := strconv.Atoi(r.URL.Query().Get("attempt"))
	limit := int64(outputMax)
	if r.URL.Query().Get("tail") != "" {
		limit = outputTail
	}
	o, err := sv.src.Output(f, id, attempt, limit)
	if err != nil {
		httpError(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if o.Truncated {
		fmt.Fprintln(w, "… (earlier output left out)")
	}
	w.Write([]byte(o.Text))
}

// events streams a feature's state: the whole snapshot first, then a patch
// of the tasks that changed each time its ref moves (the whole snapshot
// again when it was re-planned).
func (sv *Server) events(w http.ResponseWriter, r *http.Request) {
	f, err := sv.featureOf(r)
	if err != nil {
		httpError(w, err)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	h := sv.hub(f)
	ch := h.subscribe()
	defer sv.unsubscribe(h, ch)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// A lost connection is retried by the browser after a second.
	fmt.Fprint(w, "retry: 1000\n\n")
	flusher.Flush()
	keepalive := time.NewTicker(15 * time.Second)
	defer keepalive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-sv.ctx.Done():
			return
		case msg, ok := <-ch:
			if !ok {
				// Too slow to keep up: the browser reconnects and starts
				// again from a whole snapshot.
				return
			}
			if _, err := w.Write(msg); err != nil {
				return
			}
			flusher.Flush()
		case <-keepalive.C:
			fmt.Fprint(w, ": keepalive\n\n")
			flusher.Flush()
		}
	}
}

// hub polls one feature for all the streams that show it: one ref read per
// interval however many pages are open, one snapshot per change.
type hub struct {
	feature string
	mu      sync.Mutex
	subs    map[chan []byte]bool
	last    *Snapshot
	// full is the last snapshot as an event, for new subscribers: made
	// when one asks (at 10,000 tasks it is a megabyte of JSON, and most
	// changes need only a patch).
	full    []byte
	now     func() time.Time
	failing string // the error the last read ended in, told once
	cancel  context.CancelFunc
}

func (sv *Server) hub(f string) *hub {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	h, ok := sv.hubs[f]
	if !ok {
		ctx, cancel := context.WithCancel(sv.ctx)
		h = &hub{feature: f, subs: map[chan []byte]bool{}, cancel: cancel, now: sv.src.Now}
		sv.hubs[f] = h
		go sv.src.Poll(ctx, f, sv.Poll, h.publish(sv))
	}
	return h
}

func (sv *Server) unsubscribe(h *hub, ch chan []byte) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	h.mu.Lock()
	if h.subs[ch] {
		delete(h.subs, ch)
	}
	empty := len(h.subs) == 0
	h.mu.Unlock()
	if empty && sv.hubs[h.feature] == h {
		h.cancel()
		delete(sv.hubs, h.feature)
	}
}

func (h *hub) subscribe() chan []byte {
	// Room for bursts; a page that falls further behind is dropped.
	ch := make(chan []byte, 64)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs[ch] = true
	if h.full == nil && h.last != nil {
		h.full = sse("snapshot", snapshotEvent{h.last, h.now()})
	}
	if h.full != nil {
		ch <- h.full
	}
	return ch
}

// Event payloads: the whole state, or what changed. Now is the server's
// clock, so the page shows elapsed times whatever the browser's clock.
type snapshotEvent struct {
	*Snapshot
	Now time.Time `json:"now"`
}

type patchEvent struct {
	Tip     string         `json:"tip"`
	Now     time.Time      `json:"now"`
	Tasks   []*Task        `json:"tasks"`
	Workers []Worker       `json:"workers"`
	Counts  map[string]int `json:"counts"`
	Done    int            `json:"done"`
	Total   int            `json:"total"`
	HasCost bool           `json:"has_cost,omitempty"`
	// Gates, all of them, when they changed since the last event (null
	// when they did not).
	Gates []GateRun `json:"gates"`
}

func (h *hub) publish(sv *Server) func(*Snapshot, error) {
	return func(sn *Snapshot, err error) {
		now := sv.src.Now()
		// One hold of the lock from reading the last snapshot to handing
		// the message out: a page subscribing in between would get the new
		// snapshot from subscribe and then this message about it again.
		h.mu.Lock()
		defer h.mu.Unlock()
		var msg []byte
		if err != nil {
			text := err.Error()
			if errors.Is(err, gitstore.ErrNotFound) {
				text = fmt.Sprintf("feature %q is not planned", h.feature)
			}
			refused := isRefusal(err)
			if refused {
				text = refusalText(err)
			}
			told := h.failing == text
			h.failing = text
			if refused {
				// What was shown before is not to be shown again, to a
				// page open now or one that opens later.
				h.last = nil
				h.full = sse("refused", map[string]string{"error": text})
				msg = h.full
			}
			if told {
				return
			}
			if msg == nil {
				msg = sse("problem", map[string]string{"error": text})
			}
		} else {
			prev, recovered := h.last, h.failing != ""
			h.last, h.full, h.failing = sn, nil, ""
			changed, all := changedTasks(prev, sn)
			switch {
			case all, recovered:
				msg = sse("snapshot", snapshotEvent{sn, now})
			case len(changed) == 0 && prev.Tip == sn.Tip && sameGates(prev.Gates, sn.Gates):
				return
			default:
				p := patchEvent{Tip: sn.Tip, Now: now, Tasks: changed, Workers: sn.Workers,
					Counts: sn.Counts, Done: sn.Done, Total: sn.Total, HasCost: sn.HasCost}
				if !sameGates(prev.Gates, sn.Gates) {
					p.Gates = sn.Gates
				}
				msg = sse("patch", p)
			}
		}
		for ch := range h.subs {
			select {
			case ch <- msg:
			default:
				delete(h.subs, ch)
				close(ch)
			}
		}
	}
}

func sse(event string, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"error": err.Error()})
		event = "problem"
	}
	// JSON has no raw newlines, so the data is one line.
	return []byte("event: " + event + "\ndata: " + string(b) + "\n\n")
}

type badRequest struct{ msg string }

func (b badRequest) Error() string { return b.msg }

func httpError(w http.ResponseWriter, err error) {
	var br badRequest
	switch {
	case errors.As(err, &br):
		http.Error(w, br.msg, http.StatusBadRequest)
	case errors.Is(err, gitstore.ErrNotFound), errors.Is(err, errNoOutput):
		http.Error(w, err.Error(), http.StatusNotFound)
	case isRefusal(err):
		http.Error(w, refusalText(err), http.StatusConflict)
	default:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// refusalText is a refusal said as status says it, hint included.
func refusalText(err error) string {
	var ee *engine.Error
	if errors.As(err, &ee) && ee.Hint != "" {
		return "refused: " + ee.Error() + "; " + ee.Hint
	}
	return "refused: " + err.Error()
}

func writeJSONResponse(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// Serve runs the server on l until the server's context ends, then waits
// (a bounded time) for the requests in flight; the streams end with the
// context.
func (sv *Server) Serve(l net.Listener) error {
	hs := &http.Server{Handler: sv.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return sv.ctx }}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-sv.ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	return nil
}
