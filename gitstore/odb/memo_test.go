package odb

import (
	"bytes"
	"os/exec"
	"testing"
)

// TestLooseObjectsReadByGit writes objects below and above the size that
// is stored uncompressed: git must read both back byte for byte, and fsck
// must find nothing wrong with them.
func TestLooseObjectsReadByGit(t *testing.T) {
	dir := newRepo(t)
	db := openDB(t, dir)
	for _, size := range []int{0, 10, SmallObject - 1, SmallObject, 3 * SmallObject} {
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
