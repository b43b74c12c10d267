package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Hook is one of git-zerg's entries in .claude/settings.json.
type Hook struct {
	Event   string // Stop, PreToolUse
	Matcher string // "" for events without one
	Command string
}

// Hooks are the entries install-commands merges into the settings. An entry
// is recognised by its event and exact command, so that install can tell
// it is already there and uninstall takes out only these.
var Hooks = []Hook{
	{Event: "Stop", Command: "git zerg hook claude-stop"},
	{Event: "PreToolUse", Matcher: "Bash", Command: "git zerg hook claude-pretool"},
}

// errSettings: the settings file is not what Claude Code reads (not JSON,
// or hooks of an unexpected shape). Nothing is written then.
var errSettings = errors.New("cannot merge .claude/settings.json")

// member is one key of a JSON object, its value kept exactly as it was
// read: whatever git-zerg does not touch is written back as it came.
type member struct {
	key   string
	value json.RawMessage
}

// object is a JSON object in file order.
type object []member

// parseObject reads a JSON object; where names it in errors (a path such
// as "hooks", "" for the document itself).
func parseObject(data []byte, where string) (object, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return object{}, nil
	}
	at := func(key string) string {
		switch {
		case where == "" && key == "":
			return "the document"
		case where == "":
			return key
		case key == "":
			return where
		}
		return where + "." + key
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errSettings, at(""), err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("%w: %s is not a JSON object", errSettings, at(""))
	}
	o := object{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errSettings, at(""), err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errSettings, at(key), err)
		}
		o = append(o, member{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errSettings, at(""), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: %s: data after the object", errSettings, at(""))
	}
	return o, nil
}

// get returns the value of key (the last one, as JSON decoders do).
func (o object) get(key string) (json.RawMessage, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].key == key {
			return o[i].value, true
		}
	}
	return nil, false
}

// set replaces the value of key in place, or appends it.
func (o object) set(key string, v json.RawMessage) object {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].key == key {
			o[i].value = v
			return o
		}
	}
	return append(o, member{key, v})
}

func (o object) del(key string) object {
	out := o[:0]
	for _, m := range o {
		if m.key != key {
			out = append(out, m)
		}
	}
	return out
}

func (o object) marshal() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(marshalString(m.key))
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func marshalString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
}

func marshalArray(vs []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(v)
	}
	b.WriteByte(']')
	return b.Bytes()
}

func parseArray(data json.RawMessage, where string) ([]json.RawMessage, error) {
	d := bytes.TrimSpace(data)
	if bytes.Equal(d, []byte("null")) {
		return nil, nil
	}
	var vs []json.RawMessage
	if len(d) == 0 || d[0] != '[' || json.Unmarshal(d, &vs) != nil {
		return nil, fmt.Errorf("%w: %s is not an array", errSettings, where)
	}
	return vs, nil
}

// format writes the document the way Claude Code itself writes its
// settings: two-space indent, a final newline.
func format(o object) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, o.marshal(), "", "  "); err != nil {
		panic(err) // built from values that were valid JSON
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// hookEntry is the part of a hook group that git-zerg reads.
type hookGroup struct {
	Matcher string `json:"matcher"`
	Hooks   []struct {
		Type    string `json:"type"`
		Command string `json:"command"`
	} `json:"hooks"`
}

func (g hookGroup) has(command string) bool {
	for _, h := range g.Hooks {
		if h.Type == "command" && strings.TrimSpace(h.Command) == command {
			return true
		}
	}
	return false
}

func ourGroup(h Hook) json.RawMessage {
	entry := object{{"type", marshalString("command")}, {"command", marshalString(h.Command)}}
	g := object{}
	if h.Matcher != "" {
		g = append(g, member{"matcher", marshalString(h.Matcher)})
	}
	g = append(g, member{"hooks", marshalArray([]json.RawMessage{entry.marshal()})})
	return g.marshal()
}

// settingsHooks reads the "hooks" object of the settings.
func settingsHooks(root object) (object, error) {
	raw, ok := root.get("hooks")
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return object{}, nil
	}
	return parseObject(raw, "hooks")
}

// mergeSettings adds git-zerg's hooks to the settings document data (empty
// for a file that does not exist). Every key and hook already there is
// kept, in its order; a hook of ours already present (same event and
// command, under any matcher) is not added again. changed is false when
// nothing had to be added: the file is then left as it is, byte for byte.
func mergeSettings(data []byte) (out []byte, changed bool, err error) {
	root, err := parseObject(data, "")
	if err != nil {
		return nil, false, err
	}
	hooks, err := settingsHooks(root)
	if err != nil {
		return nil, false, err
	}
	for _, h := range Hooks {
		var groups []json.RawMessage
		if raw, ok := hooks.get(h.Event); ok {
			if groups, err = parseArray(raw, "hooks."+h.Event); err != nil {
				return nil, false, err
			}
		}
		present := false
		for _, g := range groups {
			var hg hookGroup
			if json.Unmarshal(g, &hg) == nil && hg.has(h.Command) {
				present = true
			}
		}
		if present {
			continue
		}
		hooks = hooks.set(h.Event, marshalArray(append(groups, ourGroup(h))))
		changed = true
	}
	if !changed {
		return data, false, nil
	}
	root = root.set("hooks", hooks.marshal())
	return format(root), true, nil
}

// unmergeSettings takes git-zerg's hook entries out of the settings, and
// nothing else: a group that held only our entry goes, an event left with
// no group goes, and "hooks" goes when it is left empty. empty reports that
// nothing at all is left in the document.
func unmergeSettings(data []byte) (out []byte, changed, empty bool, err error) {
	root, err := parseObject(data, "")
	if err != nil {
		return nil, false, false, err
	}
	hooks, err := settingsHooks(root)
	if err != nil {
		return nil, false, false, err
	}
	for _, h := range Hooks {
		raw, ok := hooks.get(h.Event)
		if !ok {
			continue
		}
		groups, err := parseArray(raw, "hooks."+h.Event)
		if err != nil {
			return nil, false, false, err
		}
		kept := []json.RawMessage{}
		removed := false
		for _, g := range groups {
			ng, drop, did, err := removeCommand(g, h.Command, "hooks."+h.Event)
			if err != nil {
				return nil, false, false, err
			}
			removed = removed || did
			if !drop {
				kept = append(kept, ng)
			}
		}
		if !removed {
			continue
		}
		changed = true
		if len(kept) == 0 {
			hooks = hooks.del(h.Event)
		} else {
			hooks = hooks.set(h.Event, marshalArray(kept))
		}
	}
	if !changed {
		return data, false, len(root) == 0, nil
	}
	if len(hooks) == 0 {
		root = root.del("hooks")
	} else {
		root = root.set("hooks", hooks.marshal())
	}
	return format(root), true, len(root) == 0, nil
}

// removeCommand takes our command out of one hook group. drop: the group
// held nothing else.
func removeCommand(g json.RawMessage, command, where string) (out json.RawMessage, drop, removed bool, err error) {
	var hg hookGroup
	if json.Unmarshal(g, &hg) != nil || !hg.has(command) {
		return g, false, false, nil
	}
	o, err := parseObject(g, where)
	if err != nil {
		return nil, false, false, err
	}
	raw, _ := o.get("hooks")
	entries, err := parseArray(raw, where+".hooks")
	if err != nil {
		return nil, false, false, err
	}
	kept := []json.RawMessage{}
	for _, e := range entries {
		var h struct {
			Type    string `json:"type"`
			Command string `json:"command"`
		}
		if json.Unmarshal(e, &h) == nil && h.Type == "command" && strings.TrimSpace(h.Command) == command {
			continue
		}
		kept = append(kept, e)
	}
	if len(kept) == 0 {
		return nil, true, true, nil
	}
	return o.set("hooks", marshalArray(kept)).marshal(), false, true, nil
}
