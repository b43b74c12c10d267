// Package agent knows the coding agents git-zerg runs as workers: how each
// is started headless so that it can edit files in its worktree, and how to
// read the result object it prints (cost, tokens, turns, session).
package agent

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"github.com/git-zerg/git-zerg/state"
)

// Preset is one agent's headless invocation.
type Preset struct {
	Name string
	// Command is run by sh in the worker's worktree; the prompt is in the
	// file $ZERG_PROMPT_FILE (too long and too full of quotes for argv
	// when written inline).
	Command string
	// Allows says, for people, what the flags let the agent do.
	Allows string
}

// Custom is the agent name for a command of the user's own.
const Custom = "custom"

// presets follow each agent's documented non-interactive mode. None of
// them needs to commit: git-zerg commits what a worker leaves, and checks
// it either way. Each must be able to edit files without asking, since
// nobody is there to answer.
var presets = map[string]Preset{
	"claude": {Name: "claude",
		Command: `claude -p "$(cat "$ZERG_PROMPT_FILE")" --permission-mode acceptEdits --allowedTools "Read,Edit,Write,Glob,Grep,Bash" --output-format json`,
		Allows:  "edits accepted without asking; reads, searches and shell commands allowed; prints its JSON result (cost, tokens, turns, session)"},
	"codex": {Name: "codex",
		Command: `codex exec --sandbox workspace-write --json "$(cat "$ZERG_PROMPT_FILE")" </dev/null`,
		Allows:  "writes inside the worktree (sandbox workspace-write), no approvals; prints JSON events with token usage"},
	"gemini": {Name: "gemini",
		Command: `gemini -p "$(cat "$ZERG_PROMPT_FILE")" --approval-mode auto_edit --output-format json`,
		Allows:  "edits approved automatically; prints its JSON result with token stats"},
	"aider": {Name: "aider",
		Command: `aider --message-file "$ZERG_PROMPT_FILE" --yes-always --no-pretty --no-stream --no-auto-commits`,
		Allows:  "edits the files it is told about, answers yes to every question; git-zerg commits its edits"},
}

// Lookup returns the preset of an agent name.
func Lookup(name string) (Preset, bool) {
	p, ok := presets[name]
	return p, ok
}

// Names lists the agent names a configuration may give, presets first.
func Names() []string {
	var ns []string
	for n := range presets {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return append(ns, Custom)
}

// Result is what an agent's output said about its run.
type Result struct {
	Usage *state.Usage
	// IsError: the agent says its run failed (Claude Code's is_error, a
	// Codex turn.failed); Message is what it said.
	IsError bool
	Message string
}

// Parse reads the result object an agent printed among its output (the
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
	get := func() *Result {
		if res == nil {
			res = &Result{Usage: &state.Usage{}}
		}
		return res
	}
	for _, obj := range objects(out) {
		switch {
		case obj["type"] == "result" && (has(obj, "total_cost_usd") || has(obj, "usage") || has(obj, "is_error")):
			r := get()
			r.Usage.CostUSD += num(obj["total_cost_usd"])
			if u, ok := obj["usage"].(map[string]any); ok {
				r.Usage.InputTokens += int64(num(u["input_tokens"]) + num(u["cache_creation_input_tokens"]) + num(u["cache_read_input_tokens"]))
				r.Usage.OutputTokens += int64(num(u["output_tokens"]))
			}
			r.Usage.Turns += int(num(obj["num_turns"]))
			if sid, ok := obj["session_id"].(string); ok {
				r.Usage.SessionID = sid
			}
			if b, ok := obj["is_error"].(bool); ok && b {
				r.IsError = true
				r.Message, _ = obj["result"].(string)
			}
		case obj["type"] == "thread.started":
			if id, ok := obj["thread_id"].(string); ok {
				get().Usage.SessionID = id
			}
		case obj["type"] == "turn.completed":
			r := get()
			if u, ok := obj["usage"].(map[string]any); ok {
				r.Usage.InputTokens += int64(num(u["input_tokens"]))
				r.Usage.OutputTokens += int64(num(u["output_tokens"]))
			}
			r.Usage.Turns++
		case obj["type"] == "turn.failed":
			r := get()
			r.IsError = true
			if e, ok := obj["error"].(map[string]any); ok {
				r.Message, _ = e["message"].(string)
			}
		case has(obj, "stats") && (has(obj, "response") || has(obj, "error")):
			r := get()
			stats, _ := obj["stats"].(map[string]any)
			if models, ok := stats["models"].(map[string]any); ok {
				for _, m := range models {
					if t, ok := m.(map[string]any)["tokens"].(map[string]any); ok {
						r.Usage.InputTokens += int64(num(t["prompt"]))
						r.Usage.OutputTokens += int64(num(t["candidates"]))
					}
					if a, ok := m.(map[string]any)["api"].(map[string]any); ok {
						r.Usage.Turns += int(num(a["totalRequests"]))
					}
				}
			}
			r.Usage.InputTokens += int64(num(stats["inputTokens"]))
			r.Usage.OutputTokens += int64(num(stats["outputTokens"]))
			if e, ok := obj["error"].(map[string]any); ok {
				r.IsError = true
				r.Message, _ = e["message"].(string)
			}
		}
	}
	if res != nil && res.Message != "" {
		res.Message = strings.TrimSpace(res.Message)
	}
	return res
}

// objects decodes every JSON object that starts a line, a pretty-printed
// one included; what follows an object on its line is skipped.
func objects(out []byte) []map[string]any {
	var objs []map[string]any
	for i := 0; i < len(out); {
		if out[i] == '{' && (i == 0 || out[i-1] == '\n') {
			dec := json.NewDecoder(bytes.NewReader(out[i:]))
			var m map[string]any
			if dec.Decode(&m) == nil {
				objs = append(objs, m)
				i += int(dec.InputOffset())
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

func has(m map[string]any, k string) bool { _, ok := m[k]; return ok }

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}
