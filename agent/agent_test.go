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
