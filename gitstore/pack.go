package gitstore

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// packAbove is the number of new objects past which a transaction writes
// them as one pack instead of one loose file each. A transition writes
// about ten, where starting `git index-pack` would cost more than the
// files; a plan writes one per task, and at 10,000 tasks creating 10,000
// files is nearly all of its time.
const packAbove = 64

// writePack writes objects as one pack through `git index-pack`, which
// checks every object, writes the index beside it and puts both in place
// the way git's own fetches do. Objects are not deltified: they are
// small, and a plan's are written once.
func (s *Store) writePack(objs []plumbing.EncodedObject) error {
	var buf bytes.Buffer
	buf.WriteString("PACK")
	binary.Write(&buf, binary.BigEndian, uint32(2))
	binary.Write(&buf, binary.BigEndian, uint32(len(objs)))
	zw := zlibWriters.Get().(*zlib.Writer)
	defer zlibWriters.Put(zw)
	for _, o := range objs {
		data := memBytes(o)
		writePackHeader(&buf, o.Type(), len(data))
		zw.Reset(&buf)
		zw.Write(data)
		if err := zw.Close(); err != nil {
			return err
		}
	}
	sum := sha1.Sum(buf.Bytes())
	buf.Write(sum[:])
	_, err := s.git.RunWith(context.Background(), gitcmd.Call{Stdin: &buf}, "index-pack", "--stdin")
	if err != nil {
		return fmt.Errorf("writing %d objects as a pack: %w", len(objs), err)
	}
	m := s.memo()
	for _, o := range objs {
		m.putObject(o.Hash(), memoObject{typ: o.Type(), data: memBytes(o)})
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
