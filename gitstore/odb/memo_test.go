package odb

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestLooseObjectsReadByGit writes objects below and above the size that
// is stored uncompressed: git must read both back byte for byte, and fsck
// must find nothing wrong with them.
func TestLooseObjectsReadByGit(t *testing.T) {
	dir := newRepo(t)
	db := openDB(t, dir)
	for _, size := range []int{0, 10, smallObject - 1, smallObject, 3 * smallObject} {
		data := bytes.Repeat([]byte("zerg "), size/5+1)[:size]
		h, err := db.WriteBlob(data)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("git", "-C", dir, "cat-file", "blob", h.String()).Output()
		if err != nil {
			t.Fatalf("size %d: git cat-file: %v", size, err)
		}
		if !bytes.Equal(out, data) {
			t.Fatalf("size %d: git read back %d bytes", size, len(out))
		}
		// And a fresh process (no memo) reads git's own objects.
		fresh := openDB(t, dir)
		got, err := fresh.ReadBlob(h)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("size %d: read back %d bytes, %v", size, len(got), err)
		}
	}
	git(t, dir, "fsck", "--strict", "--no-progress", "--no-dangling")
}

// TestConfirmedTwiceAtOnce: two updates of a process may confirm the
// objects written before them at once; each object is dropped once, and one
// written meanwhile stays for the next update. Dropping by count took the
// second confirm past the end of the list (a panic in a rush).
func TestConfirmedTwiceAtOnce(t *testing.T) {
	m := NewMemo()
	for i := range 11 {
		m.noteWritten(Object{Hash: plumbing.Hash{byte(i)}})
	}
	a, markA := m.unconfirmedObjects()
	b, markB := m.unconfirmedObjects()
	if len(a) != 11 || len(b) != 11 {
		t.Fatalf("unconfirmed %d and %d, want 11", len(a), len(b))
	}
	late := Object{Hash: plumbing.Hash{99}}
	m.noteWritten(late)
	m.confirmed(markA)
	m.confirmed(markB)
	left, _ := m.unconfirmedObjects()
	if len(left) != 1 || left[0].Hash != late.Hash {
		t.Fatalf("left %v, want only the object written after both looked", left)
	}
}
