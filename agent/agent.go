// Package agent knows the coding agents git-zerg runs as workers: how each
// is started headless so that it can edit files in its worktree, and how to
// read the result object it prints (cost, tokens, turns, session).
package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/git-zerg/git-zerg/lazy"
	"github.com/git-zerg/git-zerg/state"
)

// Preset is one agent's headless invocation.
type Preset struct {
	Name string
	// Command is run by sh in the worker's worktree; the prompt is in the
	// file $ZERG_PROMPT_FILE and reaches the agent on its standard input:
	// as an argument, a prompt over 128 KiB is more than exec takes (the
	// shell's exit 126, taken for a missing program), and one starting with
	// "-" (a template's front matter) is read as an option.
	Command string
	// Allows says, for people, what the flags let the agent do.
	Allows string
	// NoCommit: the agent cannot commit where it runs (Codex's sandbox
	// makes the linked worktree's git directory read-only), so its prompt
	// must not ask it to; git-zerg commits what it leaves.
	NoCommit bool
}

// Custom is the agent name for a command of the user's own.
const Custom = "custom"

// FailedExit is the worker protocol's failed attempt, the exit a preset
// gives for any failure of its agent.
const FailedExit = 1

// failed ends an agent's command line so that the agent's own exit codes
// are not read as the worker protocol, which no agent speaks: Codex's
// usage error (2) would be a checkpoint, a 3 or 4 a block or an
// escalation. Any other failure is a failed attempt, its code told on
// stderr; the shell's 126 and 127 (no program to run) pass through.
func failed(name, command string) string {
	return fmt.Sprintf(`%s || { s=$?; echo "%s exited $s" >&2; [ $s -eq 126 ] || [ $s -eq 127 ] || exit %d; exit $s; }`,
		command, name, FailedExit)
}

// presets follow each agent's documented non-interactive mode. None of
// them needs to commit: git-zerg commits what a worker leaves, and checks
// it either way. Each must be able to edit files and run commands (the
// task's tests, git) without asking, since nobody is there to answer.
// They are made on first use, not at every start of the program.
var presets = &lazy.Value[map[string]Preset]{Build: func() map[string]Preset {
	return map[string]Preset{
		"claude": {Name: "claude",
			Command: failed("claude", `claude -p --permission-mode acceptEdits --allowedTools "Read,Edit,Write,Glob,Grep,Bash" --output-format json < "$ZERG_PROMPT_FILE"`),
			Allows:  "edits accepted without asking; reads, searches and shell commands allowed; prints its JSON result (cost, tokens, turns, session)"},
		// Codex reads its prompt from stdin when given "-".
		"codex": {Name: "codex",
			Command:  failed("codex", `codex exec --sandbox workspace-write --json - < "$ZERG_PROMPT_FILE"`),
			Allows:   "writes and runs commands inside the worktree (sandbox workspace-write), no approvals, cannot commit (git-zerg commits for it); prints JSON events with token usage",
			NoCommit: true},
		// Gemini CLI appends its stdin to -p's text. A worktree is a folder it
		// has never been told to trust (exit 55 without --skip-trust), and under
		// auto_edit it has no shell tool: yolo approves every tool call.
		"gemini": {Name: "gemini",
			Command: failed("gemini", `gemini -p "Do the task described on standard input." --skip-trust --approval-mode yolo --output-format json < "$ZERG_PROMPT_FILE"`),
			Allows:  "every tool call approved (yolo: edits and shell commands), the worktree trusted; prints its JSON result with token stats"},
		"aider": {Name: "aider",
			Command: failed("aider", `aider --message-file "$ZERG_PROMPT_FILE" --yes-always --no-pretty --no-stream --no-auto-commits`),
			Allows:  "edits the files it is told about, answers yes to every question; git-zerg commits its edits"},
	}
}}

// Lookup returns the preset of an agent name.
func Lookup(name string) (Preset, bool) {
	p, ok := presets.Get()[name]
	return p, ok
}

// Names lists the agent names a configuration may give, presets first.
func Names() []string {
	var ns []string
	for n := range presets.Get() {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return append(ns, Custom)
}

// Result is what an agent's output said about its run.
type Result struct {
	// Usage adds up the result objects whose figures were accepted; nil
	// when none was.
	Usage *state.Usage
	// IsError: the agent says its run failed (Claude Code's is_error, a
	// Codex turn.failed); Message is what it said.
	IsError bool
	Message string
	// Refused says why each result object that was not taken was refused.
	// The output is the worker's, and a worker can print anything: a
	// negative cost or a count beyond range would lower the spending the
	// budget is held against, so such an object adds nothing at all.
	Refused []string
}

// Bounds of the figures one attempt may report: far beyond any real run,
// and low enough that no sum of them overflows or loses a cent.
const (
	maxCostUSD = 1e6
	maxTokens  = 1e12
	maxTurns   = 1e9
)

// Parse reads the result objects an agent printed among its output (the
// worker's log: stdout and stderr in order). Claude Code prints one JSON
// object with total_cost_usd and usage; Codex prints JSON lines with a
// turn.completed usage each; Gemini CLI prints one object with stats. It
// returns nil when the output holds none of these.
func Parse(out []byte) *Result {
	// Only the end of a long log can hold the result; a bound keeps a
	// chatty worker's megabytes from being scanned.
	const window = 1 << 20
	if len(out) > window {
		out = out[len(out)-window:]
	}
	var res *Result
	for _, obj := range objects(out) {
		kind, ok := kindOf(obj)
		if !ok {
			continue
		}
		if res == nil {
			res = &Result{}
		}
		f := read(kind, obj)
		if f.bad != "" {
			res.Refused = append(res.Refused, kind+" result object: "+f.bad)
			continue
		}
		if why := res.take(&f.usage); why != "" {
			res.Refused = append(res.Refused, kind+" result object: "+why)
			continue
		}
		if f.isError {
			res.IsError, res.Message = true, innerMessage(strings.TrimSpace(f.message))
		}
	}
	return res
}

// kindOf names the result object obj is, if it is one.
func kindOf(obj map[string]any) (string, bool) {
	switch {
	case obj["type"] == "result" && (has(obj, "total_cost_usd") || has(obj, "usage") || has(obj, "is_error")):
		return "claude", true
	case obj["type"] == "thread.started", obj["type"] == "turn.completed", obj["type"] == "turn.failed":
		return "codex " + obj["type"].(string), true
	case !has(obj, "type") && (has(obj, "response") || has(obj, "error")) && (has(obj, "stats") || has(obj, "session_id")):
		// Gemini CLI's error object has no stats: a session and the error.
		return "gemini", true
	}
	return "", false
}

// take adds u to the result's usage unless the sum would leave the bounds
// of one attempt, and says why when it does not.
func (r *Result) take(u *state.Usage) string {
	sum := state.Usage{}
	sum.Add(r.Usage)
	sum.Add(u)
	switch {
	case sum.CostUSD > maxCostUSD:
		return fmt.Sprintf("the attempt's cost would pass $%.0f", float64(maxCostUSD))
	case sum.InputTokens > maxTokens || sum.OutputTokens > maxTokens:
		return fmt.Sprintf("the attempt's tokens would pass %.0f", float64(maxTokens))
	case sum.Turns > maxTurns:
		return fmt.Sprintf("the attempt's turns would pass %.0f", float64(maxTurns))
	}
	if r.Usage == nil {
		r.Usage = &state.Usage{}
	}
	session := r.Usage.SessionID
	if u.SessionID != "" {
		session = u.SessionID
	}
	*r.Usage = sum
	r.Usage.SessionID = session
	return ""
}

// figures is what one result object reports; bad says why it cannot be
// taken.
type figures struct {
	usage   state.Usage
	isError bool
	message string
	bad     string
}

func read(kind string, obj map[string]any) figures {
	var f figures
	switch kind {
	case "claude":
		f.usage.CostUSD = f.cost(obj, "total_cost_usd")
		if u, ok := f.object(obj, "usage"); ok {
			f.usage.InputTokens = f.count(u, "input_tokens", maxTokens) + f.count(u, "cache_creation_input_tokens", maxTokens) +
				f.count(u, "cache_read_input_tokens", maxTokens)
			f.usage.OutputTokens = f.count(u, "output_tokens", maxTokens)
		}
		f.usage.Turns = int(f.count(obj, "num_turns", maxTurns))
		f.usage.SessionID, _ = obj["session_id"].(string)
		if b, ok := obj["is_error"].(bool); ok && b {
			f.isError = true
			f.message, _ = obj["result"].(string)
		}
	case "codex thread.started":
		f.usage.SessionID, _ = obj["thread_id"].(string)
	case "codex turn.completed":
		if u, ok := f.object(obj, "usage"); ok {
			f.usage.InputTokens = f.count(u, "input_tokens", maxTokens)
			f.usage.OutputTokens = f.count(u, "output_tokens", maxTokens)
		}
		f.usage.Turns = 1
	case "codex turn.failed":
		f.isError = true
		if e, ok := obj["error"].(map[string]any); ok {
			f.message, _ = e["message"].(string)
		}
	case "gemini":
		stats, _ := f.object(obj, "stats")
		if models, ok := f.object(stats, "models"); ok {
			for name := range models {
				m, _ := f.object(models, name)
				if t, ok := f.object(m, "tokens"); ok {
					// Thoughts are billed as output, a tool-use prompt as
					// input; cached tokens are part of the prompt.
					f.usage.InputTokens += f.count(t, "prompt", maxTokens) + f.count(t, "tool", maxTokens)
					f.usage.OutputTokens += f.count(t, "candidates", maxTokens) + f.count(t, "thoughts", maxTokens)
				}
				f.usage.Turns += geminiTurns(&f, m)
			}
		}
		f.usage.InputTokens += f.count(stats, "inputTokens", maxTokens)
		f.usage.OutputTokens += f.count(stats, "outputTokens", maxTokens)
		f.usage.SessionID, _ = obj["session_id"].(string)
		if e, ok := obj["error"].(map[string]any); ok {
			f.isError = true
			f.message, _ = e["message"].(string)
		}
	}
	return f
}

// geminiTurns counts one model's requests that were the agent's turns.
// Gemini CLI (0.61) splits each model's requests by role: the agent's
// own ("main", and its subagents') and the utility calls around them (the
// model router that picks a model for each prompt, the loop detector, the
// summarizer...), which are billed as tokens but are no turns. Without
// roles, every request is a turn.
func geminiTurns(f *figures, m map[string]any) int {
	roles, ok := f.object(m, "roles")
	if !ok {
		a, _ := f.object(m, "api")
		return int(f.count(a, "totalRequests", maxTurns))
	}
	turns := 0
	for name := range roles {
		if strings.HasPrefix(name, "utility_") {
			continue
		}
		r, _ := f.object(roles, name)
		turns += int(f.count(r, "totalRequests", maxTurns))
	}
	return turns
}

// innerMessage is what a provider said inside an agent's error message:
// Codex and Gemini CLI (and Claude Code's API errors) pass on the API's
// JSON body, as in `unexpected status 400: {"error":{"message":"..."}}`,
// sometimes that body again as a string within. Its innermost
// error.message is the part a person can act on; a message without one is
// kept whole.
func innerMessage(msg string) string {
	for depth := 0; depth < 4; depth++ {
		i := strings.IndexByte(msg, '{')
		if i < 0 {
			break
		}
		var body struct {
			Error json.RawMessage `json:"error"`
		}
		if json.NewDecoder(strings.NewReader(msg[i:])).Decode(&body) != nil || len(body.Error) == 0 {
			break
		}
		var e struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(body.Error, &e) != nil || strings.TrimSpace(e.Message) == "" {
			break
		}
		msg = strings.TrimSpace(e.Message)
	}
	return msg
}

// object is the object under key k of m; absent is no error, anything but
// an object is.
func (f *figures) object(m map[string]any, k string) (map[string]any, bool) {
	v, ok := m[k]
	if !ok || v == nil {
		return nil, false
	}
	o, ok := v.(map[string]any)
	if !ok {
		f.refuse(k, "is not an object")
	}
	return o, ok
}

// number is the figure under key k of m, checked to be a finite number
// from 0 to max; an absent figure is 0.
func (f *figures) number(m map[string]any, k string, max float64) float64 {
	v, ok := m[k]
	if !ok || v == nil {
		return 0
	}
	n, ok := v.(json.Number)
	if !ok {
		f.refuse(k, fmt.Sprintf("is not a number (%.20v)", v))
		return 0
	}
	x, err := strconv.ParseFloat(n.String(), 64)
	switch {
	case err != nil || math.IsInf(x, 0) || math.IsNaN(x):
		f.refuse(k, fmt.Sprintf("is beyond range (%.20s)", n))
	case x < 0:
		f.refuse(k, fmt.Sprintf("is negative (%.20s)", n))
	case x > max:
		f.refuse(k, fmt.Sprintf("is beyond %.0f (%.20s)", max, n))
	default:
		return x
	}
	return 0
}

func (f *figures) cost(m map[string]any, k string) float64 { return f.number(m, k, maxCostUSD) }

func (f *figures) count(m map[string]any, k string, max float64) int64 {
	return int64(f.number(m, k, max))
}

func (f *figures) refuse(k, why string) {
	if f.bad == "" {
		f.bad = k + " " + why
	}
}

// objects decodes every JSON object that starts a line, a pretty-printed
// one included; what follows an object on its line is skipped. Numbers
// stay as written, for figures to be checked before they are converted.
// NaN and Infinity, which JSON lacks but some encoders print, are read as
// strings, to be refused as figures rather than taken for noise.
func objects(out []byte) []map[string]any {
	var objs []map[string]any
	for i := 0; i < len(out); {
		if out[i] == '{' && (i == 0 || out[i-1] == '\n') {
			if m, n, ok := decode(out[i:]); ok {
				objs = append(objs, m)
				i += n
				continue
			}
		}
		j := bytes.IndexByte(out[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
	}
	return objs
}

// decode reads the object at the start of b and says how long it was.
func decode(b []byte) (map[string]any, int, bool) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if dec.Decode(&m) == nil {
		return m, int(dec.InputOffset()), true
	}
	end := bytes.IndexByte(b, '\n')
	if end < 0 {
		end = len(b)
	}
	line := b[:end]
	if !nonFinite.Get().Match(line) {
		return nil, 0, false
	}
	// Only a one-line object is read again: the quoting below must not
	// reach into the next object of the log.
	dec = json.NewDecoder(bytes.NewReader(nonFinite.Get().ReplaceAll(line, []byte(`$1"$2"`))))
	dec.UseNumber()
	m = nil
	if dec.Decode(&m) != nil {
		return nil, 0, false
	}
	return m, end, true
}

// nonFinite matches a bare NaN or Infinity where a JSON value starts.
var nonFinite = &lazy.Value[*regexp.Regexp]{Build: func() *regexp.Regexp { return regexp.MustCompile(`([:\[,]\s*)(-?Infinity|NaN)\b`) }} // compiled on first use, not at every start

func has(m map[string]any, k string) bool { _, ok := m[k]; return ok }
