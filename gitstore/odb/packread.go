package odb

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// Packed objects are read here, their index searched where it lies: go-git
// decodes a pack's whole index into maps on first use (and a map from
// offsets to names on the first delta), which made a transition's first
// read of a packed tree cost more than the rest of the transition at
// 10,000 tasks (a plan is one pack). A pack this reader cannot take (an
// index of another version) is left to git (catFile).

// packFile is one pack: its index (version 2) in memory as read, and the
// pack opened on first use.
type packFile struct {
	path  string // the .pack
	idx   []byte
	count int
	pack  *os.File
	bases map[int64]memoObject // delta bases already resolved, by offset
	br    *bufio.Reader        // reused: reads hold packMu
}

// errNotInPacks says no pack this reader knows holds the object.
var errNotInPacks = errors.New("not in the packs read directly")

const (
	idxHeader   = 8
	idxFanout   = 256 * 4
	maxBaseMemo = 256
)

func openPackIndex(idxPath string) (*packFile, error) {
	// Mapped, not read: a lookup touches a few pages of an index that is
	// megabytes long for a large plan's pack. git never changes a pack
	// index in place.
	return MapFile(idxPath, func(b []byte) (*packFile, error) { return packIndexOf(idxPath, b) })
}

func packIndexOf(idxPath string, b []byte) (*packFile, error) {
	if len(b) < idxHeader+idxFanout || !bytes.Equal(b[:4], []byte{0xff, 't', 'O', 'c'}) || binary.BigEndian.Uint32(b[4:8]) != 2 {
		return nil, fmt.Errorf("%s: not a version 2 pack index", idxPath)
	}
	n := int(binary.BigEndian.Uint32(b[idxHeader+255*4:]))
	// names, CRCs, offsets, the two checksums; large offsets between.
	if len(b) < idxHeader+idxFanout+n*28+40 {
		return nil, fmt.Errorf("%s: truncated pack index", idxPath)
	}
	return &packFile{path: strings.TrimSuffix(idxPath, ".idx") + ".pack", idx: b, count: n}, nil
}

// find returns the object's offset in the pack.
func (p *packFile) find(h plumbing.Hash) (int64, bool) {
	fan := p.idx[idxHeader:]
	lo := 0
	if h[0] > 0 {
		lo = int(binary.BigEndian.Uint32(fan[(int(h[0])-1)*4:]))
	}
	hi := int(binary.BigEndian.Uint32(fan[int(h[0])*4:]))
	names := p.idx[idxHeader+idxFanout:]
	for lo < hi {
		mid := (lo + hi) / 2
		switch c := bytes.Compare(names[mid*20:mid*20+20], h[:]); {
		case c == 0:
			return p.offset(mid), true
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return 0, false
}

func (p *packFile) offset(i int) int64 {
	offs := p.idx[idxHeader+idxFanout+p.count*24:]
	o := binary.BigEndian.Uint32(offs[i*4:])
	if o&0x80000000 == 0 {
		return int64(o)
	}
	large := offs[p.count*4:]
	j := int(o & 0x7fffffff)
	if len(large) < (j+1)*8 {
		return -1
	}
	return int64(binary.BigEndian.Uint64(large[j*8:]))
}

// read returns the object at off, its deltas applied; lookup finds a base
// named by hash (REF_DELTA).
func (p *packFile) read(off int64, lookup func(plumbing.Hash) (memoObject, error), depth int) (memoObject, error) {
	if o, ok := p.bases[off]; ok {
		return o, nil
	}
	if depth > 4096 || off < 12 {
		return memoObject{}, fmt.Errorf("%s: bad object offset %d", p.path, off)
	}
	if p.pack == nil {
		f, err := os.Open(p.path)
		if err != nil {
			return memoObject{}, err
		}
		p.pack = f
	}
	if p.br == nil {
		p.br = bufio.NewReaderSize(nil, 4096)
	}
	r := p.br
	r.Reset(io.NewSectionReader(p.pack, off, 1<<62))
	c, err := r.ReadByte()
	if err != nil {
		return memoObject{}, err
	}
	typ := plumbing.ObjectType((c >> 4) & 7)
	size := int64(c & 0x0f)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if c, err = r.ReadByte(); err != nil {
			return memoObject{}, err
		}
		size |= int64(c&0x7f) << shift
	}
	if size < 0 || size > 1<<32 {
		// Not a state object, nor a tree or commit anyone makes: a
		// damaged pack, which must not make this process allocate it.
		return memoObject{}, fmt.Errorf("%s: object at %d claims %d bytes", p.path, off, size)
	}
	// The base is read after this object's data: reading it reuses the
	// reader.
	baseOff, baseName := int64(-1), plumbing.ZeroHash
	switch typ {
	case plumbing.OFSDeltaObject:
		c, err := r.ReadByte()
		if err != nil {
			return memoObject{}, err
		}
		rel := int64(c & 0x7f)
		for c&0x80 != 0 {
			if c, err = r.ReadByte(); err != nil {
				return memoObject{}, err
			}
			rel = (rel+1)<<7 | int64(c&0x7f)
		}
		baseOff = off - rel
	case plumbing.REFDeltaObject:
		if _, err := io.ReadFull(r, baseName[:]); err != nil {
			return memoObject{}, err
		}
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	default:
		return memoObject{}, fmt.Errorf("%s: object type %d at %d", p.path, typ, off)
	}
	data, err := inflate(r, size)
	if err != nil {
		return memoObject{}, fmt.Errorf("%s: object at %d: %w", p.path, off, err)
	}
	var base memoObject
	switch typ {
	case plumbing.OFSDeltaObject:
		base, err = p.read(baseOff, lookup, depth+1)
	case plumbing.REFDeltaObject:
		base, err = lookup(baseName)
	}
	if err != nil {
		return memoObject{}, err
	}
	o := memoObject{typ: typ, data: data}
	if base.typ != plumbing.InvalidObject {
		if o.data, err = packfile.PatchDelta(base.data, data); err != nil {
			return memoObject{}, fmt.Errorf("%s: delta at %d: %w", p.path, off, err)
		}
		o.typ = base.typ
		if p.bases == nil {
			p.bases = map[int64]memoObject{}
		}
		if len(p.bases) < maxBaseMemo {
			// The base is likely the base of the next object read too.
			p.bases[off] = o
		}
	}
	return o, nil
}

func inflate(r io.Reader, size int64) ([]byte, error) {
	var zr io.ReadCloser
	var err error
	if v := zlibReaders.Get(); v != nil {
		zr = v.(io.ReadCloser)
		err = zr.(zlib.Resetter).Reset(r, nil)
	} else {
		zr, err = zlib.NewReader(r)
	}
	if err != nil {
		return nil, err
	}
	defer zlibReaders.Put(zr)
	data := make([]byte, size)
	if _, err := io.ReadFull(zr, data); err != nil {
		return nil, err
	}
	return data, nil
}

func (p *packFile) close() {
	if p.pack != nil {
		p.pack.Close()
	}
}

// directPacks returns the packs this reader takes, loading their indexes
// on first use. Called with packMu held.
func (db *DB) directPacks() []*packFile {
	if db.packsLoaded {
		return db.packs
	}
	db.packsLoaded = true
	db.directSeen = db.packNames() // listed before the packs: never newer than they are
	for _, d := range db.objectDirs() {
		names, _ := filepath.Glob(filepath.Join(d, "pack", "pack-*.idx"))
		for _, name := range names {
			if _, err := os.Stat(strings.TrimSuffix(name, ".idx") + ".pack"); err != nil {
				continue // being deleted: git unlinks the .pack first
			}
			if p, err := openPackIndex(name); err == nil {
				db.packs = append(db.packs, p)
			} else if !errors.Is(err, fs.ErrNotExist) { // not deleted by gc meanwhile
				db.foreign = true
			}
		}
	}
	return db.packs
}

// dropDirectPacks forgets the packs: the next read lists them again.
// Called with packMu held.
func (db *DB) dropDirectPacks() {
	for _, p := range db.packs {
		p.close()
	}
	db.packs, db.packsLoaded, db.foreign = nil, false, false
}

// readDirect reads a packed object through the packs' indexes in place.
// Called with packMu held.
func (db *DB) readDirect(h plumbing.Hash, depth int) (memoObject, error) {
	for _, p := range db.directPacks() {
		off, ok := p.find(h)
		if !ok {
			continue
		}
		return p.read(off, func(b plumbing.Hash) (memoObject, error) {
			if o, ok := db.memo.object(b); ok {
				return o, nil
			}
			if o, err := db.readLoose(b); err == nil {
				return o, nil
			}
			if depth > 64 {
				return memoObject{}, fmt.Errorf("delta base %s: chain too long", b)
			}
			return db.readDirect(b, depth+1)
		}, 0)
	}
	return memoObject{}, errNotInPacks
}

// hasDirect reports whether a pack read directly holds the object.
// Called with packMu held.
func (db *DB) hasDirect(h plumbing.Hash) bool {
	for _, p := range db.directPacks() {
		if _, ok := p.find(h); ok {
			return true
		}
	}
	return false
}
