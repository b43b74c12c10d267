package agenttest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// geminiConvo reads a generateContent request (the model comes from its
// path).
func geminiConvo(body []byte) (convo, error) {
	var req struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text             string          `json:"text"`
				Thought          bool            `json:"thought"`
				FunctionCall     json.RawMessage `json:"functionCall"`
				FunctionResponse *struct {
					Response json.RawMessage `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
		GenerationConfig struct {
			ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
			ResponseSchema     map[string]any `json:"responseSchema"`
		} `json:"generationConfig"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return convo{}, err
	}
	var c convo
	c.schema = req.GenerationConfig.ResponseJSONSchema
	if c.schema == nil {
		c.schema = req.GenerationConfig.ResponseSchema
	}
	for _, t := range req.Tools {
		for _, d := range t.FunctionDeclarations {
			c.tools = append(c.tools, d.Name)
		}
	}
	for _, m := range req.Contents {
		t := turn{model: m.Role == "model"}
		for _, p := range m.Parts {
			switch {
			case p.FunctionResponse != nil:
				t.results = append(t.results, compactJSON(p.FunctionResponse.Response))
			case p.Text != "" && !p.Thought:
				t.texts = append(t.texts, p.Text)
			}
		}
		c.turns = append(c.turns, t)
	}
	return c, nil
}

func geminiAnswer(w http.ResponseWriter, c convo, tool string, args map[string]any, text string, in, out int) {
	var part map[string]any
	if tool != "" {
		part = map[string]any{"functionCall": map[string]any{"name": tool, "args": args}}
	} else {
		if c.schema != nil {
			// A side request for JSON (Gemini CLI's model router, its
			// next-speaker check) gets an object of its schema.
			b, _ := json.Marshal(fromSchema(c.schema))
			text = string(b)
		}
		part = map[string]any{"text": text}
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}},
			"finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": in, "candidatesTokenCount": out, "totalTokenCount": in + out},
		"modelVersion":  c.model,
	}
	if !c.stream {
		writeJSON(w, resp)
		return
	}
	bw, f := startSSE(w)
	sse(bw, f, "", resp)
}

// fromSchema is a value of a JSON schema: an object with its required
// properties, a string's first enum value, the least of a number.
func fromSchema(schema map[string]any) any {
	typ, _ := schema["type"].(string)
	switch strings.ToLower(typ) {
	case "object":
		props, _ := schema["properties"].(map[string]any)
		req, _ := schema["required"].([]any)
		obj := map[string]any{}
		for _, r := range req {
			name, _ := r.(string)
			sub, _ := props[name].(map[string]any)
			obj[name] = fromSchema(sub)
		}
		return obj
	case "string":
		if e, ok := schema["enum"].([]any); ok && len(e) > 0 {
			return e[0]
		}
		return "ok"
	case "integer", "number":
		if m, ok := schema["minimum"].(float64); ok {
			return m
		}
		return 1
	case "boolean":
		return false
	case "array":
		return []any{}
	}
	return nil
}
