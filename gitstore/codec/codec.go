// Package codec is the encoding of what gitstore keeps outside git: the
// cache files of tasks, locks and leases, and the JSON of a task as it is
// stored in its blob. It is pure: bytes in, values out, no files, no git.
// Its values hold no state and are safe for concurrent use.
package codec

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"sort"
	"time"
)

// encoder and decoder are the primitives of the cache files' own encodings
// (taskcodec.go, lockcodec.go): encoding/json took a millisecond to decode
// the 150 locks a hook reads, and its reflection is paid again by every
// process. Lengths and counts are uvarints; a list or map is its count
// plus one, 0 standing for nil, so that a nil and an empty one stay apart.
// Every string a decoder returns is a substring of one string holding the
// whole file: one copy of the bytes instead of an allocation per string.

// errUnreadable is every decoder's error: the file is damaged or of
// another format, and is then read as missing.
var errUnreadable = errors.New("cache file unreadable")

type encoder struct{ b []byte }

func (e *encoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) int(v int64)   { e.b = binary.AppendVarint(e.b, v) }

func (e *encoder) str(s string) {
	e.uint(uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *encoder) strs(ss []string) {
	if ss == nil {
		e.uint(0)
		return
	}
	e.uint(uint64(len(ss)) + 1)
	for _, s := range ss {
		e.str(s)
	}
}

func (e *encoder) raw(m map[string]json.RawMessage) {
	if m == nil {
		e.uint(0)
		return
	}
	e.uint(uint64(len(m)) + 1)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e.str(k)
		e.uint(uint64(len(m[k])))
		e.b = append(e.b, m[k]...)
	}
}

func (e *encoder) time(t time.Time) error {
	b, err := t.MarshalBinary()
	if err != nil {
		return err
	}
	e.uint(uint64(len(b)))
	e.b = append(e.b, b...)
	return nil
}

type decoder struct {
	s   string // the whole file: decoded strings are its substrings
	i   int
	err bool
}

func (d *decoder) uint() uint64 {
	if d.err {
		return 0
	}
	var v uint64
	for shift := uint(0); ; shift += 7 {
		if d.i >= len(d.s) || shift > 63 {
			d.err = true
			return 0
		}
		c := d.s[d.i]
		d.i++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
}

func (d *decoder) int() int64 {
	u := d.uint()
	return int64(u>>1) ^ -int64(u&1)
}

// length reads a length of bytes that must still be there.
func (d *decoder) length() int {
	n := d.uint()
	if n > uint64(len(d.s)-d.i) {
		d.err = true
		return 0
	}
	return int(n)
}

func (d *decoder) str() string {
	n := d.length()
	if d.err {
		return ""
	}
	s := d.s[d.i : d.i+n]
	d.i += n
	return s
}

// count reads a count plus one, 0 for nil; each element takes at least a
// byte, which bounds what a damaged count can make us allocate.
func (d *decoder) count() (int, bool) {
	n := d.uint()
	if n == 0 || d.err {
		return 0, false
	}
	if n-1 > uint64(len(d.s)-d.i) {
		d.err = true
		return 0, false
	}
	return int(n - 1), true
}

func (d *decoder) strs() []string {
	n, ok := d.count()
	if !ok {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

func (d *decoder) raw() map[string]json.RawMessage {
	n, ok := d.count()
	if !ok {
		return nil
	}
	out := make(map[string]json.RawMessage, n)
	for range n {
		k := d.str()
		out[k] = json.RawMessage(d.str())
	}
	return out
}

func (d *decoder) time() time.Time {
	var t time.Time
	b := d.str()
	if !d.err && t.UnmarshalBinary([]byte(b)) != nil {
		d.err = true
	}
	return t
}
