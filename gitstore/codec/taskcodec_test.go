package codec

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/state/statetest"
)

func randomCache(rng *rand.Rand, shards, perShard int, full bool) *TaskCache {
	c := &TaskCache{Format: Format, Shards: map[string]Shard{}}
	for i := range shards {
		cs := Shard{}
		cs.Hash[0], cs.Hash[19] = byte(i), byte(rng.IntN(256))
		for range perShard {
			cs.Tasks = append(cs.Tasks, statetest.RandomTask(rng, full))
		}
		c.Shards[fmt.Sprintf("%02x", i)] = cs
	}
	return c
}

// TestTaskCodecEveryField round-trips tasks whose every field is set by
// reflection (a field added to the state is set too), and tasks where any
// may be zero, nil or empty: what comes back must be deeply equal, nil and
// empty lists kept apart.
func TestTaskCodecEveryField(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		want := randomCache(rng, 1+i%3, i%5, i%2 == 0)
		b, err := EncodeTaskCache(want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeTaskCache(b)
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		sameZones(reflect.ValueOf(want))
		for name, cs := range want.Shards {
			if cs.Tasks == nil {
				cs.Tasks = []*state.Task{} // a count, never nil, comes back
				want.Shards[name] = cs
			}
		}
		if !reflect.DeepEqual(got, want) {
			for name, cs := range want.Shards {
				for j, task := range cs.Tasks {
					if g := got.Shards[name].Tasks; j < len(g) && !reflect.DeepEqual(g[j], task) {
						t.Fatalf("round %d: task differs:\n got %#v\nwant %#v", i, g[j], task)
					}
				}
			}
			t.Fatalf("round %d: caches differ", i)
		}
		again, _ := EncodeTaskCache(got)
		if !bytes.Equal(again, b) {
			t.Fatalf("round %d: the same cache encodes to other bytes", i)
		}
	}
}

// sameZones gives every time under v the zone a decoded time has: its
// offset, without the zone's name (time's binary encoding keeps only
// that, as the JSON of the state does).
func sameZones(v reflect.Value) {
	switch {
	case v.Type() == reflect.TypeFor[time.Time]():
		b, _ := v.Interface().(time.Time).MarshalBinary()
		var t time.Time
		t.UnmarshalBinary(b)
		v.Set(reflect.ValueOf(t))
	case v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface:
		if !v.IsNil() {
			sameZones(v.Elem())
		}
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				sameZones(v.Field(i))
			}
		}
	case v.Kind() == reflect.Slice:
		for i := range v.Len() {
			sameZones(v.Index(i))
		}
	case v.Kind() == reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			sameZones(e)
			v.SetMapIndex(k, e)
		}
	}
}

// TestTaskCodecDamaged truncates and flips a cache file everywhere: every
// damage is an error or a cache, never a panic or a huge allocation.
func TestTaskCodecDamaged(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	b, err := EncodeTaskCache(randomCache(rng, 2, 3, true))
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(b) {
		if _, err := DecodeTaskCache(b[:n]); err == nil {
			t.Fatalf("a file cut at %d of %d bytes was read", n, len(b))
		}
	}
	for i := range len(b) {
		d := bytes.Clone(b)
		d[i] ^= 0xff
		DecodeTaskCache(d) // must not panic
	}
	if _, err := DecodeTaskCache(append(bytes.Clone(b), 0)); err == nil {
		t.Fatal("a file with a byte too many was read")
	}
	// A cache of the old encoding (gob) is not read: it is rebuilt.
	var old bytes.Buffer
	if err := gob.NewEncoder(&old).Encode(randomCache(rng, 1, 1, true)); err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeTaskCache(old.Bytes()); err == nil {
		t.Fatal("a gob file was read as a task cache")
	}
}

func FuzzTaskCodec(f *testing.F) {
	b, _ := EncodeTaskCache(randomCache(rand.New(rand.NewPCG(5, 6)), 2, 2, true))
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeTaskCache(b)
		if err != nil {
			return
		}
		again, err := EncodeTaskCache(c)
		if err != nil {
			return // a task without its spec cannot be written back
		}
		if _, err := DecodeTaskCache(again); err != nil {
			t.Fatalf("what was read cannot be read back: %v", err)
		}
	})
}

// BenchmarkTaskCacheDecode decodes 10,000 plan-fresh tasks, as the first
// full read after a plan does, against encoding/gob, which did it before.
func BenchmarkTaskCacheDecode(b *testing.B) {
	c := &TaskCache{Format: Format, Shards: map[string]Shard{}}
	for i := range 10000 {
		name := fmt.Sprintf("%02x", i%256)
		id := fmt.Sprintf("T%05d", i)
		task := &state.Task{Spec: &levels.Task{ID: id, Title: "task " + id,
			Files: levels.Files{Create: []string{"src/" + id + ".go"}}, Verification: levels.Verification{Command: "go test ./..."}},
			Level: 1 + i%4, Status: state.Pending, History: []state.Event{{Clock: 1, Op: "plan", To: state.Pending}}}
		cs := c.Shards[name]
		cs.Hash = plumbing.ComputeHash(plumbing.TreeObject, []byte(name))
		cs.Tasks = append(cs.Tasks, task)
		c.Shards[name] = cs
	}
	mine, err := EncodeTaskCache(c)
	if err != nil {
		b.Fatal(err)
	}
	var old bytes.Buffer
	if err := gob.NewEncoder(&old).Encode(c); err != nil {
		b.Fatal(err)
	}
	b.Run("codec", func(b *testing.B) {
		b.SetBytes(int64(len(mine)))
		for b.Loop() {
			if _, err := DecodeTaskCache(mine); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gob", func(b *testing.B) {
		b.SetBytes(int64(old.Len()))
		for b.Loop() {
			var got TaskCache
			if err := gob.NewDecoder(bytes.NewReader(old.Bytes())).Decode(&got); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestEntryCodecEveryField round-trips leases and locks whose every field
// is set by reflection, through the blob caches and the locks' snapshot.
func TestEntryCodecEveryField(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 100 {
		locks := map[plumbing.Hash]state.Lock{}
		workers := map[plumbing.Hash]state.Worker{}
		var list []state.Lock
		for j := range i % 6 {
			var l state.Lock
			var w state.Worker
			statetest.Fill(rng, i%2 == 0, &l)
			statetest.Fill(rng, i%2 == 0, &w)
			h := plumbing.ComputeHash(plumbing.BlobObject, []byte{byte(i), byte(j)})
			locks[h], workers[h] = l, w
			list = append(list, l)
		}
		sameZones(reflect.ValueOf(locks))
		sameZones(reflect.ValueOf(workers))
		sameZones(reflect.ValueOf(list))
		roundTrip(t, Locks, locks)
		roundTrip(t, Workers, workers)
		tip := plumbing.ComputeHash(plumbing.CommitObject, []byte{byte(i)})
		b, err := EncodeLocksTip(tip, list)
		if err != nil {
			t.Fatal(err)
		}
		gotTip, got, err := DecodeLocksTip(b)
		if err != nil || gotTip != tip || len(got) != len(list) || (len(list) > 0 && !reflect.DeepEqual(got, list)) {
			t.Fatalf("round %d: locks of the tip %v, %v: %#v, want %#v", i, gotTip, err, got, list)
		}
		for n := range len(b) {
			if _, _, err := DecodeLocksTip(b[:n]); err == nil {
				t.Fatalf("round %d: a snapshot cut at %d of %d bytes was read", i, n, len(b))
			}
		}
	}
}

func roundTrip[T any](t *testing.T, c Entry[T], want map[plumbing.Hash]T) {
	t.Helper()
	b, err := c.EncodeBlobs(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.DecodeBlobs(b)
	if err != nil {
		t.Fatalf("%s: %v", c.kind, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: got %#v\nwant %#v", c.kind, got, want)
	}
	for n := range len(b) {
		if _, err := c.DecodeBlobs(b[:n]); err == nil {
			t.Fatalf("%s: a file cut at %d of %d bytes was read", c.kind, n, len(b))
		}
	}
	for i := range len(b) {
		d := bytes.Clone(b)
		d[i] ^= 0xff
		c.DecodeBlobs(d) // must not panic
	}
}
