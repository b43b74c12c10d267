package levels

import "encoding/json"

// A graph is checked for syntax once, whole, by topObject; its objects and
// arrays are then split into members by the functions here instead of by
// json.Unmarshal, which checks the syntax again at every level and
// reflects: at 100,000 tasks that was most of the time reading a graph.
// They give what json.Unmarshal into a map or slice of raw messages gives,
// and false for anything they leave to it (keys with escapes or beyond
// ASCII, which it rewrites, or anything unexpected).

// splitObject splits an object checked for syntax into its members; of
// repeated keys the last wins, as with json.Unmarshal.
func splitObject(raw []byte) (map[string]json.RawMessage, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	m := map[string]json.RawMessage{}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return m, skipSpace(raw, i+1) == len(raw)
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return nil, false
		}
		j := i + 1
		for ; j < len(raw) && raw[j] != '"'; j++ {
			if c := raw[j]; c == '\\' || c < 0x20 || c >= 0x80 {
				return nil, false
			}
		}
		if j >= len(raw) {
			return nil, false
		}
		key := string(raw[i+1 : j])
		i = skipSpace(raw, j+1)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		i = skipSpace(raw, i+1)
		end, ok := skipValue(raw, i)
		if !ok {
			return nil, false
		}
		m[key] = json.RawMessage(raw[i:end:end])
		var done bool
		if i, done, ok = afterValue(raw, end, '}'); !ok {
			return nil, false
		} else if done {
			return m, true
		}
	}
}

// afterValue reads what follows a member or element ending at end: a
// comma (the next one starts at i) or the closing byte, which must end raw
// (done).
func afterValue(raw []byte, end int, closing byte) (i int, done, ok bool) {
	i = skipSpace(raw, end)
	if i >= len(raw) {
		return 0, false, false
	}
	switch raw[i] {
	case ',':
		return skipSpace(raw, i+1), false, true
	case closing:
		return 0, true, skipSpace(raw, i+1) == len(raw)
	}
	return 0, false, false
}

// splitArray splits an array checked for syntax into its elements.
func splitArray(raw []byte) ([]json.RawMessage, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	elems := []json.RawMessage{}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return elems, skipSpace(raw, i+1) == len(raw)
	}
	for {
		end, ok := skipValue(raw, i)
		if !ok {
			return nil, false
		}
		elems = append(elems, json.RawMessage(raw[i:end:end]))
		var done bool
		if i, done, ok = afterValue(raw, end, ']'); !ok {
			return nil, false
		} else if done {
			return elems, true
		}
	}
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the value starting at i.
func skipValue(raw []byte, i int) (int, bool) {
	if i >= len(raw) {
		return 0, false
	}
	switch raw[i] {
	case '"':
		return skipString(raw, i)
	case '{', '[':
		depth := 0
		for i < len(raw) {
			switch raw[i] {
			case '"':
				end, ok := skipString(raw, i)
				if !ok {
					return 0, false
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	case ',', '}', ']', ':':
		return 0, false
	}
	// A number, true, false or null.
	j := i
	for j < len(raw) {
		switch raw[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j, true
		}
		j++
	}
	return j, true
}

func skipString(raw []byte, i int) (int, bool) {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}
