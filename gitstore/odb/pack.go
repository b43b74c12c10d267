package odb

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// PackAbove is the number of new objects past which a transaction writes
// them as one pack instead of one loose file each. A transition writes
// about ten, where starting `git index-pack` would cost more than the
// files; a plan writes one per task, and at 10,000 tasks creating 10,000
// files is nearly all of its time.
const PackAbove = 64

// writePack writes objects as one pack through `git index-pack`, which
// checks every object, writes the index beside it and puts both in place
// the way git's own fetches do. Objects are not deltified: they are
// small, and a plan's are written once. Nor are they compressed (zlib
// level 0, which every git reads): deflating a 500-byte task costs 20 to
// 40 µs, nearly all of it per stream: at 10,000 tasks a third of a plan,
// to make its pack 40% smaller. The entries are built on every processor,
// in chunks.
//
// With keep, the pack is kept until the caller has updated its refs: the
// path of its .keep file is returned.
func (db *DB) writePack(objs []Object, keep bool) (string, error) {
	var head bytes.Buffer
	head.WriteString("PACK")
	binary.Write(&head, binary.BigEndian, uint32(2))
	binary.Write(&head, binary.BigEndian, uint32(len(objs)))
	chunks := make([][]byte, (len(objs)+packChunk-1)/packChunk)
	if err := Parallel(len(chunks), func(i int) error {
		var err error
		chunks[i], err = packEntries(objs[i*packChunk : min((i+1)*packChunk, len(objs))])
		return err
	}); err != nil {
		return "", err
	}
	sum := sha1.New()
	sum.Write(head.Bytes())
	for _, c := range chunks {
		sum.Write(c)
	}
	trailer := sum.Sum(nil)
	args, want := []string{"index-pack", "--stdin"}, "pack"
	if keep {
		args, want = append(args, "--keep=git-zerg: refs not updated yet"), "keep"
	}
	// A pack is named by its trailing checksum.
	name := hex.EncodeToString(trailer)
	base := filepath.Join(db.commonDir, "objects", "pack", "pack-"+name)
	var out []byte
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		readers := []io.Reader{bytes.NewReader(head.Bytes())}
		for _, c := range chunks {
			readers = append(readers, bytes.NewReader(c))
		}
		readers = append(readers, bytes.NewReader(trailer))
		if out, err = db.git.RunWith(context.Background(), gitcmd.Call{Stdin: io.MultiReader(readers...)}, args...); err == nil {
			break
		}
		// `git prune --expire=now` deletes index-pack's temporary files
		// (tmp_pack_*) as it deletes every tmp_ file older than its
		// expiry; index-pack had made the .keep by then, which would make
		// the next attempt keep nothing.
		if _, serr := os.Stat(base + ".pack"); errors.Is(serr, fs.ErrNotExist) {
			os.Remove(base + ".keep")
		}
	}
	if err != nil {
		return "", fmt.Errorf("writing %d objects as a pack: %w", len(objs), err)
	}
	// It prints "keep\t<name>" (the pack's name, its .keep beside it), or
	// "pack\t<name>" when it kept none.
	kind, got, _ := strings.Cut(strings.TrimSpace(string(out)), "\t")
	if kind == "pack" && want == "keep" && got == name {
		// The .keep was there already, so index-pack made none: an attempt
		// above that failed after making it (a prune took a temporary file
		// of its), or an update of this repository writing the same
		// objects. It keeps these objects all the same, until released.
		if _, serr := os.Stat(base + ".keep"); serr == nil {
			kind = want
		}
	}
	if kind != want || got != name {
		return "", fmt.Errorf("writing %d objects as a pack: git index-pack said %q", len(objs), out)
	}
	keepFile := ""
	if keep {
		keepFile = base + ".keep"
	}
	m := db.memo
	for _, o := range objs {
		m.putObject(o.Hash, memoObject{typ: o.Type, data: o.Data})
	}
	return keepFile, nil
}

// A pack is kept (a .keep file beside it, as git's fetches keep theirs)
// until the refs that reach its objects are updated: `git repack -a -d`
// packs only reachable objects and deletes the packs it read, so the pack
// of a plan no ref reaches yet would be lost to one running meanwhile,
// where loose objects are left for prune and its two weeks.

// HeldPacks are the packs an update wrote, kept until the update is over,
// its retries included: a retry finds the objects of the attempt before
// it present (the memo says so) and writes them no more, so that
// attempt's pack must outlive it. They are one update's, not for concurrent use.
type HeldPacks struct {
	keeps []string
	objs  []plumbing.Hash
}

func (h *HeldPacks) Add(keep string, objs []Object) {
	if keep == "" {
		return
	}
	h.keeps = append(h.keeps, keep)
	for _, o := range objs {
		h.objs = append(h.objs, o.Hash)
	}
}

// Release lets git repack the packs like any other. Their objects are
// reachable now, or garbage if the update failed, and this process can no
// longer tell which: it writes them again when it needs them.
func (h *HeldPacks) Release(db *DB) {
	for _, k := range h.keeps {
		os.Remove(k)
	}
	if len(h.objs) > 0 {
		db.memo.unmarkPresent(h.objs)
	}
	*h = HeldPacks{}
}

// packChunk is how many objects one goroutine compresses at a time.
const packChunk = 512

// packEntries is the pack entries of objects, one after the other.
func packEntries(objs []Object) ([]byte, error) {
	var buf bytes.Buffer
	zw := zlibStored.Get().(*zlib.Writer)
	defer zlibStored.Put(zw)
	for _, o := range objs {
		writePackHeader(&buf, o.Type, len(o.Data))
		zw.Reset(&buf)
		zw.Write(o.Data)
		if err := zw.Close(); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// Parallel runs f(0) to f(n-1) on as many goroutines as there are
// processors to run them, and returns the first error.
func Parallel(n int, f func(i int) error) error {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			if err := f(i); err != nil {
				return err
			}
		}
		return nil
	}
	var next atomic.Int64
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// writePackHeader writes an entry's type and size: the size in 4 bits,
// then 7 bits a byte, low bits first, the high bit saying more follow.
func writePackHeader(buf *bytes.Buffer, typ plumbing.ObjectType, size int) {
	c := byte(typ)<<4 | byte(size&0x0f)
	size >>= 4
	for size > 0 {
		buf.WriteByte(c | 0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	buf.WriteByte(c)
}
