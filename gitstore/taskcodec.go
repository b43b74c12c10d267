package gitstore

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"sort"
	"time"

	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

// The task cache's own encoding. encoding/gob did this job, but its
// package initialisation alone cost every command 0.25 ms, the hook and
// --version included, and decoding 100,000 tasks took a quarter of the
// first `status --json` after a plan. This one is written out field by
// field; TestTaskCodecEveryField fills every field of state.Task by
// reflection and fails when one does not come back, so a field added to
// the state cannot be dropped by the cache unnoticed.
//
// Every string of a decoded file is a substring of one string holding the
// whole file: one copy of the bytes instead of an allocation per string.
//
//	zerg-task-cache <format> NL
//	uvarint shards, then per shard: name, 20-byte tree hash, uvarint tasks, tasks
//
// Lengths and counts are uvarints; a list or map is its count plus one,
// 0 standing for nil, so that a nil and an empty one stay apart (the state
// prints them differently).

const taskCacheMagic = "zerg-task-cache"

var errTaskCodec = errors.New("task cache unreadable")

type taskEncoder struct{ b []byte }

func (e *taskEncoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *taskEncoder) int(v int64)   { e.b = binary.AppendVarint(e.b, v) }

func (e *taskEncoder) str(s string) {
	e.uint(uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *taskEncoder) strs(ss []string) {
	if ss == nil {
		e.uint(0)
		return
	}
	e.uint(uint64(len(ss)) + 1)
	for _, s := range ss {
		e.str(s)
	}
}

func (e *taskEncoder) raw(m map[string]json.RawMessage) {
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

func (e *taskEncoder) time(t time.Time) error {
	b, err := t.MarshalBinary()
	if err != nil {
		return err
	}
	e.uint(uint64(len(b)))
	e.b = append(e.b, b...)
	return nil
}

func (e *taskEncoder) task(t *state.Task) error {
	if t.Spec == nil {
		return errTaskCodec // every stored task has its spec
	}
	sp := t.Spec
	e.str(sp.ID)
	e.str(sp.Title)
	e.str(sp.Description)
	e.int(int64(sp.Level))
	e.strs(sp.Files.Create)
	e.strs(sp.Files.Modify)
	e.strs(sp.Files.Read)
	e.raw(sp.Files.Extra)
	e.strs(sp.Dependencies)
	e.strs(sp.SoftDependencies)
	e.strs(sp.AcceptanceCriteria)
	e.strs(sp.Context)
	e.str(sp.Risk)
	e.int(int64(sp.Issue))
	e.str(sp.Verification.Command)
	e.int(int64(sp.Verification.TimeoutSeconds))
	e.raw(sp.Verification.Extra)
	e.raw(sp.Extra)

	e.int(int64(t.Level))
	e.strs(t.Implied)
	e.strs(t.Dependents)
	e.str(string(t.Status))
	e.str(t.Worker)
	e.str(t.Owner)
	e.int(int64(t.Attempts))
	e.str(t.Base)
	e.str(t.Commit)
	e.str(t.Approved)
	if err := e.time(t.NotBefore); err != nil {
		return err
	}
	e.str(t.Reason)
	e.int(int64(t.PR))
	e.str(t.Host)
	if t.History == nil {
		e.uint(0)
		return nil
	}
	e.uint(uint64(len(t.History)) + 1)
	for i := range t.History {
		ev := &t.History[i]
		e.uint(ev.Clock)
		if err := e.time(ev.At); err != nil {
			return err
		}
		e.str(ev.Op)
		e.str(string(ev.From))
		e.str(string(ev.To))
		e.str(ev.Worker)
		e.str(ev.Commit)
		e.str(ev.Reason)
		e.int(int64(ev.PR))
		if ev.Usage == nil {
			e.uint(0)
			continue
		}
		e.uint(1)
		e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(ev.Usage.CostUSD))
		e.int(ev.Usage.InputTokens)
		e.int(ev.Usage.OutputTokens)
		e.int(int64(ev.Usage.Turns))
		e.str(ev.Usage.SessionID)
	}
	return nil
}

// encodeTaskCache encodes c; sorted by shard name, so the same cache is
// the same bytes.
func encodeTaskCache(c *taskCache) ([]byte, error) {
	e := &taskEncoder{b: make([]byte, 0, 1<<16)}
	e.b = append(e.b, taskCacheMagic+" "...)
	e.b = binary.AppendUvarint(e.b, cacheFormat)
	e.b = append(e.b, '\n')
	names := make([]string, 0, len(c.Shards))
	for name := range c.Shards {
		names = append(names, name)
	}
	sort.Strings(names)
	e.uint(uint64(len(names)))
	for _, name := range names {
		cs := c.Shards[name]
		e.str(name)
		e.b = append(e.b, cs.Hash[:]...)
		e.uint(uint64(len(cs.Tasks)))
		for _, t := range cs.Tasks {
			if err := e.task(t); err != nil {
				return nil, err
			}
		}
	}
	return e.b, nil
}

type taskDecoder struct {
	s   string // the whole file: decoded strings are its substrings
	i   int
	err bool
}

func (d *taskDecoder) uint() uint64 {
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

func (d *taskDecoder) int() int64 {
	u := d.uint()
	return int64(u>>1) ^ -int64(u&1)
}

// length reads a length of bytes that must still be there.
func (d *taskDecoder) length() int {
	n := d.uint()
	if n > uint64(len(d.s)-d.i) {
		d.err = true
		return 0
	}
	return int(n)
}

func (d *taskDecoder) str() string {
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
func (d *taskDecoder) count() (int, bool) {
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

func (d *taskDecoder) strs() []string {
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

func (d *taskDecoder) raw() map[string]json.RawMessage {
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

func (d *taskDecoder) time() time.Time {
	var t time.Time
	b := d.str()
	if !d.err && t.UnmarshalBinary([]byte(b)) != nil {
		d.err = true
	}
	return t
}

func (d *taskDecoder) task() *state.Task {
	sp := &levels.Task{}
	sp.ID = d.str()
	sp.Title = d.str()
	sp.Description = d.str()
	sp.Level = int(d.int())
	sp.Files.Create = d.strs()
	sp.Files.Modify = d.strs()
	sp.Files.Read = d.strs()
	sp.Files.Extra = d.raw()
	sp.Dependencies = d.strs()
	sp.SoftDependencies = d.strs()
	sp.AcceptanceCriteria = d.strs()
	sp.Context = d.strs()
	sp.Risk = d.str()
	sp.Issue = int(d.int())
	sp.Verification.Command = d.str()
	sp.Verification.TimeoutSeconds = int(d.int())
	sp.Verification.Extra = d.raw()
	sp.Extra = d.raw()

	t := &state.Task{Spec: sp}
	t.Level = int(d.int())
	t.Implied = d.strs()
	t.Dependents = d.strs()
	t.Status = state.Status(d.str())
	t.Worker = d.str()
	t.Owner = d.str()
	t.Attempts = int(d.int())
	t.Base = d.str()
	t.Commit = d.str()
	t.Approved = d.str()
	t.NotBefore = d.time()
	t.Reason = d.str()
	t.PR = int(d.int())
	t.Host = d.str()
	n, ok := d.count()
	if !ok {
		return t
	}
	t.History = make([]state.Event, n)
	for i := range t.History {
		ev := &t.History[i]
		ev.Clock = d.uint()
		ev.At = d.time()
		ev.Op = d.str()
		ev.From = state.Status(d.str())
		ev.To = state.Status(d.str())
		ev.Worker = d.str()
		ev.Commit = d.str()
		ev.Reason = d.str()
		ev.PR = int(d.int())
		if d.uint() == 0 {
			continue
		}
		u := &state.Usage{}
		if d.i+8 > len(d.s) {
			d.err = true
			return t
		}
		var bits uint64
		for k := 7; k >= 0; k-- {
			bits = bits<<8 | uint64(d.s[d.i+k])
		}
		u.CostUSD = math.Float64frombits(bits)
		d.i += 8
		u.InputTokens = d.int()
		u.OutputTokens = d.int()
		u.Turns = int(d.int())
		u.SessionID = d.str()
		ev.Usage = u
	}
	return t
}

// decodeTaskCache decodes what encodeTaskCache wrote; any damage is an
// error, and the file is then read as missing.
func decodeTaskCache(b []byte) (*taskCache, error) {
	head := taskCacheMagic + " " + string(binary.AppendUvarint(nil, cacheFormat)) + "\n"
	if len(b) < len(head) || string(b[:len(head)]) != head {
		return nil, errTaskCodec
	}
	d := &taskDecoder{s: string(b), i: len(head)}
	n := d.uint()
	if n > uint64(len(d.s)) {
		return nil, errTaskCodec
	}
	c := &taskCache{Format: cacheFormat, Shards: make(map[string]cachedShard, n)}
	for range n {
		name := d.str()
		var cs cachedShard
		if d.err || d.i+len(cs.Hash) > len(d.s) {
			return nil, errTaskCodec
		}
		copy(cs.Hash[:], d.s[d.i:])
		d.i += len(cs.Hash)
		m := d.uint()
		if m > uint64(len(d.s)-d.i) {
			return nil, errTaskCodec
		}
		cs.Tasks = make([]*state.Task, m)
		for j := range cs.Tasks {
			cs.Tasks[j] = d.task()
		}
		if d.err {
			return nil, errTaskCodec
		}
		c.Shards[name] = cs
	}
	if d.err || d.i != len(d.s) {
		return nil, errTaskCodec
	}
	return c, nil
}
