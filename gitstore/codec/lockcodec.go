package codec

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/state"
)

// The encodings of the lock and lease caches: the blobs of a tree by blob
// id (blobCache) and the locks of one tip (LocksAt's snapshot), which
// every hook reads. TestEntryCodecEveryField holds them to every field of
// state.Lock and state.Worker, as TestTaskCodecEveryField does for tasks.
//
//	zerg-blobs <format> <kind> NL, uvarint entries, each a 20-byte blob id and its value
//	zerg-locks-tip <format> NL, the 20-byte tip, uvarint locks, the locks

// Entry encodes one kind of cached value: the blobs of a tree by blob id.
type Entry[T any] struct {
	kind string
	enc  func(*encoder, T) error
	dec  func(*decoder) T
}

// Locks is the encoding of the locks cache.
var Locks = Entry[state.Lock]{kind: "lock",
	enc: func(e *encoder, l state.Lock) error {
		e.str(l.Path)
		e.str(l.Owner)
		e.str(l.Reason)
		e.str(l.Feature)
		e.str(l.Task)
		if err := e.time(l.Created); err != nil {
			return err
		}
		return e.time(l.Expires)
	},
	dec: func(d *decoder) state.Lock {
		var l state.Lock
		l.Path = d.str()
		l.Owner = d.str()
		l.Reason = d.str()
		l.Feature = d.str()
		l.Task = d.str()
		l.Created = d.time()
		l.Expires = d.time()
		return l
	}}

// Workers is the encoding of a feature's leases cache.
var Workers = Entry[state.Worker]{kind: "worker",
	enc: func(e *encoder, w state.Worker) error {
		e.str(w.Name)
		e.str(w.Owner)
		e.str(w.Task)
		if err := e.time(w.Since); err != nil {
			return err
		}
		if err := e.time(w.Expires); err != nil {
			return err
		}
		e.str(w.Host)
		e.str(w.Instance)
		e.int(int64(w.PID))
		e.str(w.Started)
		return nil
	},
	dec: func(d *decoder) state.Worker {
		var w state.Worker
		w.Name = d.str()
		w.Owner = d.str()
		w.Task = d.str()
		w.Since = d.time()
		w.Expires = d.time()
		w.Host = d.str()
		w.Instance = d.str()
		w.PID = int(d.int())
		w.Started = d.str()
		return w
	}}

func (c Entry[T]) header() string {
	return "zerg-blobs " + string(binary.AppendUvarint(nil, Format)) + " " + c.kind + "\n"
}

// EncodeBlobs encodes blobs, sorted by id: the same map is the same bytes.
func (c Entry[T]) EncodeBlobs(blobs map[plumbing.Hash]T) ([]byte, error) {
	e := &encoder{b: []byte(c.header())}
	e.uint(uint64(len(blobs)))
	for _, h := range sortedHashes(blobs) {
		e.b = append(e.b, h[:]...)
		if err := c.enc(e, blobs[h]); err != nil {
			return nil, err
		}
	}
	return e.b, nil
}

// DecodeBlobs decodes what EncodeBlobs wrote; any damage is ErrUnreadable.
func (c Entry[T]) DecodeBlobs(b []byte) (map[plumbing.Hash]T, error) {
	head := c.header()
	if len(b) < len(head) || string(b[:len(head)]) != head {
		return nil, errUnreadable
	}
	d := &decoder{s: string(b), i: len(head)}
	n := d.uint()
	// Each entry takes more than its 20-byte id: a damaged count cannot
	// make the map huge.
	if d.err || n > uint64(len(d.s)-d.i)/20 {
		return nil, errUnreadable
	}
	out := make(map[plumbing.Hash]T, n)
	for range n {
		var h plumbing.Hash
		if d.i+len(h) > len(d.s) {
			return nil, errUnreadable
		}
		copy(h[:], d.s[d.i:])
		d.i += len(h)
		out[h] = c.dec(d)
		if d.err {
			return nil, errUnreadable
		}
	}
	if d.i != len(d.s) {
		return nil, errUnreadable
	}
	return out, nil
}

func sortedHashes[T any](m map[plumbing.Hash]T) []plumbing.Hash {
	hs := make([]plumbing.Hash, 0, len(m))
	for h := range m {
		hs = append(hs, h)
	}
	slices.SortFunc(hs, func(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) })
	return hs
}

const locksTipMagic = "zerg-locks-tip"

func locksTipHeader() string {
	return locksTipMagic + " " + string(binary.AppendUvarint(nil, Format)) + "\n"
}

// EncodeLocksTip encodes the locks of the locks ref at tip.
func EncodeLocksTip(tip plumbing.Hash, locks []state.Lock) ([]byte, error) {
	e := &encoder{b: []byte(locksTipHeader())}
	e.b = append(e.b, tip[:]...)
	e.uint(uint64(len(locks)))
	for _, l := range locks {
		if err := Locks.enc(e, l); err != nil {
			return nil, err
		}
	}
	return e.b, nil
}

// DecodeLocksTip decodes what EncodeLocksTip wrote, with its tip.
func DecodeLocksTip(b []byte) (plumbing.Hash, []state.Lock, error) {
	var tip plumbing.Hash
	head := locksTipHeader()
	if len(b) < len(head)+len(tip) || string(b[:len(head)]) != head {
		return tip, nil, errUnreadable
	}
	copy(tip[:], b[len(head):])
	d := &decoder{s: string(b), i: len(head) + len(tip)}
	n := d.uint()
	if d.err || n > uint64(len(d.s)-d.i) {
		return tip, nil, errUnreadable
	}
	locks := make([]state.Lock, n)
	for i := range locks {
		locks[i] = Locks.dec(d)
	}
	if d.err || d.i != len(d.s) {
		return tip, nil, errUnreadable
	}
	return tip, locks, nil
}
