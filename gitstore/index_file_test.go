package gitstore

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/state"
)

// TestIndexFileRoundTrip: what the file keeps reads back the same, and a
// file cut short or of another format is refused, never half read.
func TestIndexFileRoundTrip(t *testing.T) {
	h := func(s string) plumbing.Hash { return plumbing.ComputeHash(plumbing.BlobObject, []byte(s)) }
	ix := &Index{Format: indexFormat, Tasks: h("tasks"), Meta: h("meta"),
		Shards: map[string]plumbing.Hash{"0a": h("a"), "ff": h("b")},
		Entries: []IndexEntry{
			{ID: "T1", Blob: h("1"), Status: state.Pending, Level: 1, Dependents: 2},
			{ID: "T2", Status: state.Failed, Level: 2, Deps: []string{"T1", "x.y-z"}, Attempts: 3,
				NotBefore: time.Date(2026, 3, 1, 12, 0, 0, 5, time.UTC), Unapproved: true,
				Spent: &state.Usage{CostUSD: 0.125, InputTokens: 10, OutputTokens: 20, Turns: 3}},
		}}
	ix.link()
	b := encodeIndex(ix)
	got, err := decodeIndex(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, ix) {
		t.Fatalf("read back\n%+v\nwrote\n%+v", got, ix)
	}
	for _, cut := range []int{0, 10, len(b) / 2, len(b) - 1} {
		if _, err := decodeIndex(b[:cut]); err == nil && cut < len(b)-1 {
			t.Errorf("a file cut at %d of %d bytes was read", cut, len(b))
		}
	}
	ix.Entries[0].ID = "T\t1"
	if encodeIndex(ix) != nil {
		t.Error("an id with a tab was written")
	}
}

func BenchmarkIndexDecode(b *testing.B) {
	ix := &Index{Format: indexFormat, Shards: map[string]plumbing.Hash{}}
	for i := 0; i < 10000; i++ {
		e := IndexEntry{ID: fmt.Sprintf("T%04d", i), Status: state.Pending, Level: 1 + i%10/9, Dependents: i % 10 / 8}
		if i%10 == 9 {
			e.Deps = []string{fmt.Sprintf("T%04d", i-1)}
		}
		ix.Entries = append(ix.Entries, e)
	}
	data := encodeIndex(ix)
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		if _, err := decodeIndex(data); err != nil {
			b.Fatal(err)
		}
	}
}
