package codec

import (
	"encoding/binary"
	"math"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
)

// The task cache's own encoding (primitives in codec.go). encoding/gob
// did this job, but decoding 100,000 tasks took a quarter of the first
// `status --json` after a plan. This one is written out field by field;
// TestTaskCodecEveryField fills every field of state.Task by reflection
// and fails when one does not come back, so a field added to the state
// cannot be dropped by the cache unnoticed.
//
//	zerg-task-cache <format> NL
//	uvarint shards, then per shard: name, 20-byte tree hash, uvarint tasks, tasks

const taskCacheMagic = "zerg-task-cache"

// Format is the version every cache file's header names; a file of
// another format is unreadable and rebuilt. Format 2 is this file's
// encoding (3: a lease's instance added to lockcodec.go's); format 1 was
// encoding/gob's, in files named .gob.
const Format = 3

// Shard is the tasks of one shard tree, keyed by the tree's hash so that
// a cached shard is never stale.
type Shard struct {
	Hash  plumbing.Hash
	Tasks []*state.Task
}

// TaskCache is the content of a feature's task cache file: shards by name.
type TaskCache struct {
	Format int
	Shards map[string]Shard
}

func (e *encoder) task(t *state.Task) error {
	if t.Spec == nil {
		return errUnreadable // every stored task has its spec
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
		e.str(string(ev.Op))
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

// EncodeTaskCache encodes c; sorted by shard name, so the same cache is
// the same bytes.
func EncodeTaskCache(c *TaskCache) ([]byte, error) {
	e := &encoder{b: make([]byte, 0, 1<<16)}
	e.b = append(e.b, taskCacheMagic+" "...)
	e.b = binary.AppendUvarint(e.b, Format)
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

func (d *decoder) task() *state.Task {
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
		ev.Op = state.Op(d.str())
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

// DecodeTaskCache decodes what EncodeTaskCache wrote; any damage is an
// error, and the file is then read as missing.
func DecodeTaskCache(b []byte) (*TaskCache, error) {
	head := taskCacheMagic + " " + string(binary.AppendUvarint(nil, Format)) + "\n"
	if len(b) < len(head) || string(b[:len(head)]) != head {
		return nil, errUnreadable
	}
	d := &decoder{s: string(b), i: len(head)}
	n := d.uint()
	if n > uint64(len(d.s)) {
		return nil, errUnreadable
	}
	c := &TaskCache{Format: Format, Shards: make(map[string]Shard, n)}
	for range n {
		name := d.str()
		var cs Shard
		if d.err || d.i+len(cs.Hash) > len(d.s) {
			return nil, errUnreadable
		}
		copy(cs.Hash[:], d.s[d.i:])
		d.i += len(cs.Hash)
		m := d.uint()
		if m > uint64(len(d.s)-d.i) {
			return nil, errUnreadable
		}
		cs.Tasks = make([]*state.Task, m)
		for j := range cs.Tasks {
			cs.Tasks[j] = d.task()
		}
		if d.err {
			return nil, errUnreadable
		}
		c.Shards[name] = cs
	}
	if d.err || d.i != len(d.s) {
		return nil, errUnreadable
	}
	return c, nil
}
