package agenttest

import (
	"encoding/json"
	"net/http"
)

// anthropicConvo reads a Messages request.
func anthropicConvo(body []byte) (convo, error) {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Tools    []struct{ Name string }
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return convo{}, err
	}
	c := convo{model: req.Model, stream: req.Stream}
	for _, t := range req.Tools {
		c.tools = append(c.tools, t.Name)
	}
	for _, m := range req.Messages {
		t := turn{model: m.Role == "assistant"}
		var blocks []struct {
			Type    string          `json:"type"`
			Text    string          `json:"text"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m.Content, &blocks) == nil {
			for _, b := range blocks {
				switch b.Type {
				case "text":
					t.texts = append(t.texts, b.Text)
				case "tool_result":
					for _, x := range texts(b.Content) {
						t.results = append(t.results, x)
					}
				}
			}
		} else {
			t.texts = texts(m.Content)
		}
		c.turns = append(c.turns, t)
	}
	return c, nil
}

func anthropicAnswer(w http.ResponseWriter, c convo, tool string, args map[string]any, text, id string, in, out int) {
	var block map[string]any
	stop := "end_turn"
	if tool != "" {
		block = map[string]any{"type": "tool_use", "id": "toolu_" + id + tool, "name": tool, "input": args}
		stop = "tool_use"
	} else {
		block = map[string]any{"type": "text", "text": text}
	}
	usage := map[string]any{"input_tokens": in, "output_tokens": out, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	msg := map[string]any{"id": "msg_" + id, "type": "message", "role": "assistant", "model": c.model,
		"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage}
	if !c.stream {
		writeJSON(w, msg)
		return
	}
	bw, f := startSSE(w)
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []any{}, nil
	start["usage"] = map[string]any{"input_tokens": in, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	sse(bw, f, "message_start", map[string]any{"type": "message_start", "message": start})
	if tool != "" {
		b, _ := json.Marshal(args)
		sse(bw, f, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": tool, "input": map[string]any{}}})
		sse(bw, f, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(b)}})
	} else {
		sse(bw, f, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		sse(bw, f, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": text}})
	}
	sse(bw, f, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	sse(bw, f, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": out}})
	sse(bw, f, "message_stop", map[string]any{"type": "message_stop"})
}
