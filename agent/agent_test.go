package agent

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, out           string
		cost                float64
		in, outTok          int64
		turns               int
		session, errMessage string
		none                bool
	}{
		{name: "claude", out: "== run 1\nthinking...\n" +
			`{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s1","total_cost_usd":0.25,"num_turns":4,"usage":{"input_tokens":10,"cache_creation_input_tokens":5,"cache_read_input_tokens":5,"output_tokens":7}}` + "\n",
			cost: 0.25, in: 20, outTok: 7, turns: 4, session: "s1"},
		{name: "claude error", out: `{"type":"result","is_error":true,"result":"  out of credit ","session_id":"s2","total_cost_usd":0}`,
			session: "s2", errMessage: "out of credit"},
		{name: "two checkpointed runs add up", out: `{"type":"result","total_cost_usd":1,"num_turns":1,"usage":{"input_tokens":1,"output_tokens":1}}` + "\n== run 2\n" +
			`{"type":"result","total_cost_usd":2,"num_turns":2,"usage":{"input_tokens":2,"output_tokens":2}}`,
			cost: 3, in: 3, outTok: 3, turns: 3},
		{name: "codex", out: `{"type":"thread.started","thread_id":"th"}` + "\n" + `{"type":"turn.completed","usage":{"input_tokens":5,"output_tokens":1}}` + "\n" +
			`{"type":"turn.failed","error":{"message":"rate limited"}}`,
			in: 5, outTok: 1, turns: 1, session: "th", errMessage: "rate limited"},
		{name: "gemini pretty", out: "{\n  \"response\": \"x\",\n  \"stats\": {\"models\": {\"m\": {\"api\": {\"totalRequests\": 3}, \"tokens\": {\"prompt\": 8, \"candidates\": 2}}}}\n}\n",
			in: 8, outTok: 2, turns: 3},
		{name: "gemini thoughts, tool prompt and session", out: `{"session_id":"g-1","response":"x","stats":{"models":{"m":{"api":{"totalRequests":1},` +
			`"tokens":{"prompt":100,"candidates":20,"total":155,"cached":40,"thoughts":30,"tool":5}}}}}`,
			in: 105, outTok: 50, turns: 1, session: "g-1"},
		// Gemini CLI 0.61: the model router's request is billed, and no
		// turn of the agent.
		{name: "gemini roles", out: `{"session_id":"g-3","response":"x","stats":{"models":{` +
			`"flash-lite":{"api":{"totalRequests":1},"tokens":{"prompt":10,"candidates":2},"roles":{"utility_router":{"totalRequests":1,"tokens":{"prompt":10,"candidates":2}}}},` +
			`"flash":{"api":{"totalRequests":5},"tokens":{"prompt":3000,"candidates":150},"roles":{"main":{"totalRequests":3},"subagent":{"totalRequests":1},"utility_loop_detector":{"totalRequests":1}}}}}}`,
			in: 3010, outTok: 152, turns: 4, session: "g-3"},
		// Gemini CLI's error object has no stats; its message carries the
		// API's body, which carries the API's own body again as a string.
		{name: "gemini error object", out: "{\n  \"session_id\": \"g-2\",\n  \"error\": {\n    \"type\": \"Error\",\n" +
			`    "message": "[API Error: {\"error\":{\"message\":\"{\\n  \\\"error\\\": {\\n    \\\"code\\\": 400,\\n    \\\"message\\\": \\\"API key not valid. Please pass a valid API key.\\\"\\n  }\\n}\\n\",\"code\":400}}]",` + "\n" +
			"    \"code\": 1\n  }\n}\n",
			session: "g-2", errMessage: "API key not valid. Please pass a valid API key."},
		{name: "codex provider error", out: `{"type":"thread.started","thread_id":"th-2"}` + "\n" +
			`{"type":"turn.failed","error":{"message":"unexpected status 400 Bad Request: {\"error\":{\"message\":\"Unsupported value: 'xhigh'\",\"type\":\"invalid_request_error\"}}"}}`,
			session: "th-2", errMessage: "Unsupported value: 'xhigh'"},
		{name: "error message without a body", out: `{"type":"turn.failed","error":{"message":"stream closed {before completion}"}}`,
			errMessage: "stream closed {before completion}"},
		{name: "plain output", out: "did it\n{not json\n{\"a\": 1}\n", none: true},
		{name: "empty", out: "", none: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Parse([]byte(tc.out))
			if tc.none {
				if r != nil {
					t.Fatalf("got %+v, want none", r)
				}
				return
			}
			if r == nil {
				t.Fatal("no result")
			}
			u := r.Usage
			if u.CostUSD != tc.cost || u.InputTokens != tc.in || u.OutputTokens != tc.outTok || u.Turns != tc.turns || u.SessionID != tc.session {
				t.Errorf("usage %+v", u)
			}
			if r.IsError != (tc.errMessage != "") || r.Message != tc.errMessage {
				t.Errorf("error %v %q, want %q", r.IsError, r.Message, tc.errMessage)
			}
		})
	}
}

// The output is the worker's: a result object whose figures would lower
// the spending (negative, beyond range, not numbers) is refused whole, and
// says why; the objects beside it still count.
func TestParseRefusesFigures(t *testing.T) {
	good := `{"type":"result","total_cost_usd":0.5,"num_turns":2,"usage":{"input_tokens":10,"output_tokens":5},"session_id":"s"}`
	for _, tc := range []struct {
		name, out, refused string
		cost               float64
		tokens             int64
		turns              int
	}{
		{name: "negative cost", out: `{"type":"result","total_cost_usd":-1000}`, refused: "claude result object: total_cost_usd is negative (-1000)"},
		{name: "negative cost beside a real one", out: good + "\n" + `{"type":"result","total_cost_usd":-1000,"is_error":true,"result":"x"}`,
			refused: "total_cost_usd is negative", cost: 0.5, tokens: 15, turns: 2},
		{name: "cost beyond float range", out: `{"type":"result","total_cost_usd":1e400}`, refused: "total_cost_usd is beyond range (1e400)"},
		{name: "negative cost beyond range", out: `{"type":"result","total_cost_usd":-1e400}`, refused: "total_cost_usd is beyond range"},
		{name: "NaN cost", out: good + "\n" + `{"type":"result","total_cost_usd":NaN}`, refused: "total_cost_usd is not a number (NaN)", cost: 0.5, tokens: 15, turns: 2},
		{name: "Infinity cost", out: `{"type":"result", "total_cost_usd": Infinity}`, refused: "total_cost_usd is not a number (Infinity)"},
		{name: "minus Infinity cost", out: `{"type":"result","total_cost_usd":-Infinity}`, refused: "total_cost_usd is not a number (-Infinity)"},
		{name: "cost as a string", out: `{"type":"result","total_cost_usd":"-5"}`, refused: "total_cost_usd is not a number (-5)"},
		{name: "absurd cost", out: `{"type":"result","total_cost_usd":1e300}`, refused: "total_cost_usd is beyond 1000000"},
		// int64(1e300) is the most negative int64: the token count would
		// have wrapped below zero.
		{name: "tokens beyond int64", out: `{"type":"result","usage":{"input_tokens":1e300}}`, refused: "input_tokens is beyond 1000000000000"},
		{name: "negative tokens", out: `{"type":"result","usage":{"input_tokens":100,"output_tokens":-1000}}`, refused: "output_tokens is negative"},
		{name: "negative turns", out: `{"type":"result","total_cost_usd":0.1,"num_turns":-3}`, refused: "num_turns is negative"},
		{name: "usage not an object", out: `{"type":"result","total_cost_usd":1,"usage":[1]}`, refused: "usage is not an object"},
		{name: "sum past the attempt's bound", out: `{"type":"result","usage":{"input_tokens":900000000000}}` + "\n" + `{"type":"result","usage":{"input_tokens":900000000000}}`,
			refused: "the attempt's tokens would pass 1000000000000", tokens: 900000000000},
		{name: "codex negative tokens", out: `{"type":"turn.completed","usage":{"input_tokens":5,"output_tokens":1}}` + "\n" + `{"type":"turn.completed","usage":{"input_tokens":-50}}`,
			refused: "codex turn.completed result object: input_tokens is negative", tokens: 6, turns: 1},
		{name: "gemini negative tokens", out: `{"response":"x","stats":{"models":{"m":{"tokens":{"prompt":-8,"candidates":2}}}}}`, refused: "gemini result object: prompt is negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Parse([]byte(tc.out))
			if r == nil {
				t.Fatal("no result")
			}
			if len(r.Refused) != 1 || !strings.Contains(r.Refused[0], tc.refused) {
				t.Errorf("refused %q, want one with %q", r.Refused, tc.refused)
			}
			if r.IsError {
				t.Errorf("a refused object's is_error was taken")
			}
			if tc.cost == 0 && tc.tokens == 0 {
				if r.Usage != nil {
					t.Errorf("usage %+v recorded from refused figures", r.Usage)
				}
				return
			}
			if u := r.Usage; u == nil || u.CostUSD != tc.cost || u.Tokens() != tc.tokens || u.Turns != tc.turns {
				t.Errorf("usage %+v, want $%v %d tokens %d turns", u, tc.cost, tc.tokens, tc.turns)
			}
		})
	}
}

// A worker that prints megabytes is read from its end, where the result is.
func TestParseLongOutput(t *testing.T) {
	out := strings.Repeat("noise line\n", 300000) + `{"type":"result","total_cost_usd":0.5}` + "\n"
	if r := Parse([]byte(out)); r == nil || r.Usage.CostUSD != 0.5 {
		t.Fatalf("got %+v", r)
	}
}

func TestPresets(t *testing.T) {
	for _, n := range Names() {
		if n == Custom {
			continue
		}
		p, ok := Lookup(n)
		if !ok || !strings.Contains(p.Command, "$ZERG_PROMPT_FILE") || p.Allows == "" {
			t.Errorf("preset %s: %+v", n, p)
		}
	}
}
