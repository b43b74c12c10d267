package agenttest

import (
	"encoding/json"
	"net/http"
	"regexp"
)

// openaiConvo reads a Responses request: its input items are the
// conversation, each a turn of its own.
func openaiConvo(body []byte) (convo, error) {
	var req struct {
		Model  string       `json:"model"`
		Stream bool         `json:"stream"`
		Tools  []openaiTool `json:"tools"`
		Input  []struct {
			Type    string          `json:"type"`
			Tools   []openaiTool    `json:"tools"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
			Output  json.RawMessage `json:"output"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return convo{}, err
	}
	c := convo{model: req.Model, stream: req.Stream}
	c.tools = toolNames("", req.Tools)
	for _, it := range req.Input {
		switch it.Type {
		case "additional_tools":
			c.tools = append(c.tools, toolNames("", it.Tools)...)
		case "message", "":
			c.turns = append(c.turns, turn{model: it.Role == "assistant", texts: texts(it.Content)})
		case "function_call", "custom_tool_call", "local_shell_call":
			c.turns = append(c.turns, turn{model: true})
		case "function_call_output", "custom_tool_call_output":
			out := texts(it.Output)
			if len(out) == 0 {
				// An output object of its own ({"output": ..., "metadata": ...}).
				var o struct {
					Output string `json:"output"`
				}
				json.Unmarshal(it.Output, &o)
				out = []string{o.Output}
			}
			c.turns = append(c.turns, turn{results: out})
		}
	}
	return c, nil
}

// openaiTool is a tool of a Responses request: a function, a freeform
// (custom) tool, or a namespace of tools. Codex's code mode offers one
// freeform tool, exec, that runs JavaScript calling the other tools (its
// description declares them, each under a "### `name`" heading).
type openaiTool struct {
	Type        string       `json:"type"`
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Tools       []openaiTool `json:"tools"`
}

func toolNames(prefix string, tools []openaiTool) []string {
	var names []string
	for _, t := range tools {
		name := t.Name
		if name == "" {
			name = t.Type
		}
		if t.Type == "namespace" {
			names = append(names, toolNames(prefix+name+".", t.Tools)...)
			continue
		}
		names = append(names, prefix+name)
		if t.Type == "custom" && name == "exec" {
			for _, m := range nestedTool.FindAllStringSubmatch(t.Description, -1) {
				names = append(names, prefix+name+"/"+m[1])
			}
		}
	}
	return names
}

var nestedTool = regexp.MustCompile("(?m)^### `(\\w+)`")

func openaiAnswer(w http.ResponseWriter, c convo, tool string, args map[string]any, text, id string, in, out int) {
	var item map[string]any
	switch {
	case tool != "" && args["_freeform"] != nil:
		item = map[string]any{"type": "custom_tool_call", "id": "ctc_" + id, "call_id": "call_" + id, "name": tool,
			"input": args["_freeform"], "status": "completed"}
	case tool != "":
		b, _ := json.Marshal(args)
		item = map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": "call_" + id, "name": tool,
			"arguments": string(b), "status": "completed"}
	default:
		item = map[string]any{"type": "message", "id": "msg_" + id, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
	}
	usage := map[string]any{"input_tokens": in, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": out, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": in + out}
	resp := map[string]any{"id": "resp_" + id, "object": "response", "status": "completed", "model": c.model,
		"output": []any{item}, "usage": usage}
	if !c.stream {
		writeJSON(w, resp)
		return
	}
	bw, f := startSSE(w)
	created := map[string]any{"id": "resp_" + id, "object": "response", "status": "in_progress", "model": c.model, "output": []any{}}
	sse(bw, f, "response.created", map[string]any{"type": "response.created", "response": created})
	sse(bw, f, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	if tool == "" {
		sse(bw, f, "response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": "msg_" + id,
			"output_index": 0, "content_index": 0, "delta": text})
	}
	sse(bw, f, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	sse(bw, f, "response.completed", map[string]any{"type": "response.completed", "response": resp})
}
