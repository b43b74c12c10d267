// Package agenttest serves scripted model APIs on 127.0.0.1 for the real
// agent CLIs git-zerg's presets start (Claude Code, Codex CLI, Gemini CLI),
// so that tests can run them end to end without an account: each server
// speaks enough of its provider's streaming wire format to answer with the
// tool calls of a script, and logs what the CLI sent.
package agenttest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// The APIs a server can speak.
const (
	Anthropic = "anthropic" // Messages, streamed as server-sent events
	OpenAI    = "openai"    // Responses, streamed
	Gemini    = "gemini"    // generateContent and streamGenerateContent (alt=sse)
)

// Step is one answer of the scripted model: a shell command, a file
// written, or a final text.
type Step struct {
	Shell string
	// Write is a path relative to the directory the conversation's first
	// tool result names (a `pwd` step's output): file-write tools want it
	// absolute, and only the agent knows where it runs.
	Write   string
	Content string
	Text    string
}

// Script is what a server answers.
type Script struct {
	// Steps answer a conversation in turn: a request whose conversation
	// already holds i answers of the model gets Steps[i]; past the end it
	// gets a final "done".
	Steps []Step
	// Fail, when set, answers every agent request with the provider's
	// invalid-request error (HTTP 400) carrying this message.
	Fail string
}

// ParseScript reads a script, one step a line: `shell CMD`, `write PATH
// CONTENT`, `text TEXT`, or `fail MESSAGE`; blank lines and #-comments
// are skipped.
func ParseScript(b []byte) (Script, error) {
	var s Script
	for n, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		verb, rest, _ := strings.Cut(line, " ")
		switch verb {
		case "shell":
			s.Steps = append(s.Steps, Step{Shell: rest})
		case "write":
			p, c, _ := strings.Cut(rest, " ")
			s.Steps = append(s.Steps, Step{Write: p, Content: c + "\n"})
		case "text":
			s.Steps = append(s.Steps, Step{Text: rest})
		case "fail":
			s.Fail = rest
		default:
			return Script{}, fmt.Errorf("script line %d: unknown step %q", n+1, verb)
		}
	}
	return s, nil
}

// Usage each answer reports: the tests compare what git-zerg records with
// what these imply.
const (
	AgentInputTokens  = 1000
	AgentOutputTokens = 50
	SideInputTokens   = 10
	SideOutputTokens  = 2
)

// Server is one scripted model API.
type Server struct {
	kind   string
	script Script
	dir    string
	ln     net.Listener
	srv    *http.Server
	done   chan struct{}

	mu      sync.Mutex
	records []record
	log     *os.File
}

// record is what one request carried, secrets left out.
type record struct {
	method, path string
	model        string
	tools        []string
	headers      []string
	auth         string
	agent        bool
	answers      int
	in, out      int // the tokens its answer reported
}

// Start serves kind on a free port of 127.0.0.1. Every request is logged
// to dir/log; the texts of each agent request's turns before the model's
// first answer (the prompt, with what the CLI adds) are written to
// dir/prompt-N.txt (N counting agent requests from 1) and the texts the
// CLI sent back since the model's last answer (tool results, hook
// messages) to dir/reply-N.txt. With AGENTTEST_DUMP set in the
// environment, each request's body is kept too, as dir/body-N.json (N
// counting every request): what to read when a CLI's upgrade changed its
// protocol.
func Start(kind string, script Script, dir string) (*Server, error) {
	switch kind {
	case Anthropic, OpenAI, Gemini:
	default:
		return nil, fmt.Errorf("agenttest: unknown API %q", kind)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Close()
		return nil, err
	}
	s := &Server{kind: kind, script: script, dir: dir, ln: ln, log: log, done: make(chan struct{})}
	s.srv = &http.Server{Handler: s}
	go func() { defer close(s.done); s.srv.Serve(ln) }()
	return s, nil
}

// URL is the server's base URL, without a trailing slash.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server and its connections, and waits for it.
func (s *Server) Close() error {
	err := s.srv.Close()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log != nil {
		s.log.Close()
		s.log = nil
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// Summary is what the CLI's agent requests had in common, in a form stable
// across runs, for a golden file: the API paths, the auth header's name,
// the models, the tools offered, and how many agent requests came.
func (s *Server) Summary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	paths, auths, models, tools := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	n := 0
	for _, r := range s.records {
		if !r.agent {
			continue
		}
		n++
		paths[r.method+" "+r.path] = true
		auths[r.auth] = true
		models[r.model] = true
		for _, t := range r.tools {
			tools[t] = true
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "api %s\n", s.kind)
	fmt.Fprintf(&b, "path %s\n", strings.Join(keys(paths), " "))
	fmt.Fprintf(&b, "auth %s\n", strings.Join(keys(auths), " "))
	fmt.Fprintf(&b, "model %s\n", strings.Join(keys(models), " "))
	fmt.Fprintf(&b, "tools %s\n", strings.Join(keys(tools), " "))
	fmt.Fprintf(&b, "agent requests %d\n", n)
	return b.String()
}

// AgentRequests counts the requests that offered tools: the agent's
// turns, not its side requests.
func (s *Server) AgentRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.records {
		if r.agent {
			n++
		}
	}
	return n
}

// Usage is the tokens the server's answers reported, side requests'
// (a title, a model router) included.
func (s *Server) Usage() (in, out int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.records {
		in += r.in
		out += r.out
	}
	return in, out
}

func keys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		if k != "" {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return ks
}

// authHeaders are the headers a provider's key travels in: their names are
// logged, never their values.
var authHeaders = []string{"X-Api-Key", "Authorization", "X-Goog-Api-Key"}

// convo is a request reduced to what a script needs: the model, the tools
// offered, and the conversation's turns.
type convo struct {
	model  string
	tools  []string
	stream bool
	turns  []turn
	schema map[string]any // the JSON schema an answer must follow, if any
}

type turn struct {
	model   bool // the model's turn (assistant), or the CLI's
	texts   []string
	results []string
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rec := record{method: r.Method, path: r.URL.Path}
	if os.Getenv("AGENTTEST_DUMP") != "" {
		s.mu.Lock()
		os.WriteFile(filepath.Join(s.dir, fmt.Sprintf("body-%d.json", len(s.records)+1)), body, 0o644)
		s.mu.Unlock()
	}
	if r.URL.Query().Get("alt") != "" {
		rec.path += "?alt=" + r.URL.Query().Get("alt")
	}
	for name := range r.Header {
		rec.headers = append(rec.headers, name)
		for _, a := range authHeaders {
			if http.CanonicalHeaderKey(name) == a {
				rec.auth = a
			}
		}
	}
	sort.Strings(rec.headers)
	if r.URL.Query().Get("key") != "" {
		rec.auth = "key query parameter"
	}
	var c convo
	var perr error
	known := true
	switch {
	case s.kind == Anthropic && r.Method == "POST" && r.URL.Path == "/v1/messages":
		c, perr = anthropicConvo(body)
	case s.kind == OpenAI && r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/responses"):
		c, perr = openaiConvo(body)
	case s.kind == Gemini && r.Method == "POST" && geminiPath.MatchString(r.URL.Path):
		c, perr = geminiConvo(body)
		m := geminiPath.FindStringSubmatch(r.URL.Path)
		c.model, c.stream = m[1], m[2] == "streamGenerateContent"
		if m[2] == "countTokens" {
			known = false
		}
	default:
		known = false
	}
	rec.model, rec.tools = c.model, c.tools
	rec.agent = known && perr == nil && len(c.tools) > 0
	for _, t := range c.turns {
		if t.model {
			rec.answers++
		}
	}
	n, idx := s.note(rec, c)
	switch {
	case perr != nil:
		s.errorf(w, http.StatusBadRequest, "agenttest: %v", perr)
	case !known:
		s.other(w, r)
	case rec.agent && s.script.Fail != "":
		s.errorf(w, http.StatusBadRequest, "%s", s.script.Fail)
	case rec.agent:
		s.answer(w, c, s.step(rec.answers), n)
		s.used(idx, AgentInputTokens, AgentOutputTokens)
	default:
		s.answer(w, c, Step{Text: "ok"}, 0)
		s.used(idx, SideInputTokens, SideOutputTokens)
	}
}

// used notes the tokens the answer to request idx reported.
func (s *Server) used(idx, in, out int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &s.records[idx]
	r.in, r.out = in, out
}

var geminiPath = regexp.MustCompile(`^/v1(?:beta|alpha)?/models/([^:/]+):(generateContent|streamGenerateContent|countTokens)$`)

// note logs a request, and for an agent request writes its prompt and
// the CLI's latest texts; it returns the agent request's number (0 for
// another) and the request's index.
func (s *Server) note(rec record, c convo) (int, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	idx := len(s.records)
	s.records = append(s.records, rec)
	n := 0
	for _, r := range s.records {
		if r.agent {
			n++
		}
	}
	if s.log != nil {
		fmt.Fprintf(s.log, "%s %s model=%s agent=%v answers=%d tools=%s headers=%s\n", rec.method, rec.path, rec.model,
			rec.agent, rec.answers, strings.Join(rec.tools, ","), strings.Join(rec.headers, ","))
	}
	if !rec.agent {
		return 0, idx
	}
	var prompt []string
	for _, t := range c.turns {
		if t.model {
			break
		}
		prompt = append(prompt, t.texts...)
	}
	os.WriteFile(filepath.Join(s.dir, fmt.Sprintf("prompt-%d.txt", n)), []byte(strings.Join(prompt, "\n")), 0o644)
	var latest []string
	for i := len(c.turns) - 1; i >= 0 && !c.turns[i].model; i-- {
		latest = append(append(append([]string{}, c.turns[i].results...), c.turns[i].texts...), latest...)
	}
	os.WriteFile(filepath.Join(s.dir, fmt.Sprintf("reply-%d.txt", n)), []byte(strings.Join(latest, "\n")), 0o644)
	return n, idx
}

func (s *Server) step(answers int) Step {
	if answers < len(s.script.Steps) {
		return s.script.Steps[answers]
	}
	return Step{Text: "done"}
}

// workdir is the first absolute path in the conversation's first tool
// result: the output of the script's `pwd`.
func workdir(c convo) string {
	for _, t := range c.turns {
		for _, r := range t.results {
			if m := absPath.FindString(r); m != "" {
				return m
			}
		}
	}
	return ""
}

var absPath = regexp.MustCompile(`/[^\s"'\\]*`)

func (s *Server) errorf(w http.ResponseWriter, code int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	var body any
	switch s.kind {
	case Anthropic:
		body = map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg}}
	case OpenAI:
		body = map[string]any{"error": map[string]any{"type": "invalid_request_error", "message": msg, "code": nil, "param": nil}}
	default:
		body = map[string]any{"error": map[string]any{"code": code, "message": msg, "status": "INVALID_ARGUMENT"}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(body)
}

// other answers what no script is about: a model list is empty, anything
// else is not found.
func (s *Server) other(w http.ResponseWriter, r *http.Request) {
	if r.Method == "GET" && strings.HasSuffix(r.URL.Path, "/models") {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[],"models":[]}`)
		return
	}
	if strings.HasSuffix(r.URL.Path, ":countTokens") || strings.HasSuffix(r.URL.Path, "/count_tokens") {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"totalTokens":10,"input_tokens":10}`)
		return
	}
	s.errorf(w, http.StatusNotFound, "agenttest: no %s %s here", r.Method, r.URL.Path)
}

// call is a step as a tool call of the CLI: the tool's name and its
// arguments.
func (s *Server) call(c convo, st Step) (string, map[string]any) {
	offered := map[string]bool{}
	for _, t := range c.tools {
		offered[t] = true
	}
	if st.Write != "" {
		path := filepath.Join(workdir(c), st.Write)
		switch {
		case offered["Write"]:
			return "Write", map[string]any{"file_path": path, "content": st.Content}
		case offered["write_file"]:
			return "write_file", map[string]any{"file_path": path, "content": st.Content}
		}
		st = Step{Shell: fmt.Sprintf("printf '%%s' %s > %s", shellQuote(st.Content), shellQuote(path))}
	}
	switch {
	case offered["Bash"]:
		return "Bash", map[string]any{"command": st.Shell, "description": "run a command"}
	case offered["run_shell_command"]:
		return "run_shell_command", map[string]any{"command": st.Shell, "description": "run a command"}
	case offered["functions.exec/exec_command"]:
		// Codex's code mode: a script for its exec tool that runs the
		// command through the nested exec_command and returns its output.
		cmd, _ := json.Marshal(st.Shell)
		return "exec", map[string]any{"_freeform": fmt.Sprintf(
			"const r = await tools.exec_command({cmd: %s});\ntext(typeof r === \"string\" ? r : (r.output ?? JSON.stringify(r)));\n", cmd)}
	case offered["exec_command"]:
		return "exec_command", map[string]any{"cmd": st.Shell}
	case offered["shell_command"]:
		return "shell_command", map[string]any{"command": st.Shell}
	case offered["shell"]:
		return "shell", map[string]any{"command": []string{"bash", "-lc", st.Shell}}
	}
	return "", nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// answer writes step st as the provider's response.
func (s *Server) answer(w http.ResponseWriter, c convo, st Step, n int) {
	in, out := SideInputTokens, SideOutputTokens
	if n > 0 {
		in, out = AgentInputTokens, AgentOutputTokens
	}
	var name string
	var args map[string]any
	if st.Text == "" {
		name, args = s.call(c, st)
		if name == "" {
			st = Step{Text: "agenttest: no shell or write tool offered"}
		}
	}
	id := fmt.Sprintf("%d", n)
	switch s.kind {
	case Anthropic:
		anthropicAnswer(w, c, name, args, st.Text, id, in, out)
	case OpenAI:
		openaiAnswer(w, c, name, args, st.Text, id, in, out)
	default:
		geminiAnswer(w, c, name, args, st.Text, in, out)
	}
}

// sse writes one server-sent event (event may be empty) and flushes it.
func sse(w *bufio.Writer, f http.Flusher, event string, data any) {
	b, _ := json.Marshal(data)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	w.Flush()
	if f != nil {
		f.Flush()
	}
}

func startSSE(w http.ResponseWriter) (*bufio.Writer, http.Flusher) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return bufio.NewWriter(w), f
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// texts are the text parts of a content value that is a string or a list
// of blocks with "text" fields.
func texts(raw json.RawMessage) []string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}
	}
	var blocks []map[string]json.RawMessage
	if json.Unmarshal(raw, &blocks) != nil {
		return nil
	}
	var out []string
	for _, b := range blocks {
		var t string
		if json.Unmarshal(b["text"], &t) == nil && t != "" {
			out = append(out, t)
		}
	}
	return out
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
