package taskindex

import (
	"bytes"
	"hash/crc32"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// The delta file brings the index file forward without rewriting it: at
// 100,000 tasks the file is 9 MB, and encoding and writing it again took a
// claim a quarter of a second. The delta holds what changed since the file
// was encoded (the entries, the candidacies, the shards) and is rewritten
// now and then; the file itself only once the delta has grown past
// gitstore's rebaseIndexAfter entries.
//
//	zerg-index-delta 2 <file's tasks tree> <file's checksum> <tasks tree> <CRC-32 of what follows the first line>
//	<shard> <tree>                         every shard, then an empty line
//	<position> <0|1>                       candidacies changed since the file, then an empty line
//	<position> <entry line>                entries changed since the file (position lists empty: the file's stand)
//
// A delta names the file it was made on: against any other it is ignored,
// so that a reader never mixes one writer's file with another's delta.

const indexDeltaFormat = 2 // 2: CRC-32 (IEEE), as index format 3

// Delta is the delta file that brings ix's file forward to ix.
func (ix *Index) Delta() []byte {
	var body []byte
	for _, name := range slices.Sorted(maps.Keys(ix.Shards)) {
		h := ix.Shards[name]
		body = append(body, name...)
		body = append(body, '\t')
		body = append(body, h.String()...)
		body = append(body, '\n')
	}
	body = append(body, '\n')
	for _, p := range slices.Sorted(maps.Keys(ix.cand)) {
		body = strconv.AppendInt(body, int64(p), 10)
		if ix.cand[p] {
			body = append(body, "\t1\n"...)
		} else {
			body = append(body, "\t0\n"...)
		}
	}
	body = append(body, '\n')
	for _, p := range slices.Sorted(maps.Keys(ix.over)) {
		e := ix.over[p]
		body = strconv.AppendInt(body, int64(p), 10)
		body = append(body, '\t')
		body = appendEntry(body, &e, nil, nil)
	}
	head := "zerg-index-delta " + strconv.Itoa(indexDeltaFormat) + " " + ix.f.tasks.String() + " " + ix.f.sum + " " +
		ix.Tasks.String() + " " + strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 16) + "\n"
	return append([]byte(head), body...)
}

// WithDelta is the index of ix's file brought forward by the delta in
// data, or nil when the delta is not one of that file's or is damaged.
func (ix *Index) WithDelta(data []byte) *Index {
	return withIndexDelta(ix.f, data)
}

func withIndexDelta(f *File, data []byte) *Index {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return nil
	}
	head := strings.Fields(string(data[:nl]))
	if len(head) != 6 || head[0] != "zerg-index-delta" || head[1] != strconv.Itoa(indexDeltaFormat) ||
		head[2] != f.tasks.String() || head[3] != f.sum || len(head[4]) != 40 {
		return nil
	}
	body := data[nl+1:]
	if sum, err := strconv.ParseUint(head[5], 16, 32); err != nil || crc32.ChecksumIEEE(body) != uint32(sum) {
		return nil
	}
	ix := &Index{Tasks: plumbing.NewHash(head[4]), Meta: f.meta, Shards: make(map[string]plumbing.Hash, len(f.shards)),
		f: f, over: map[int32]Entry{}, cand: map[int32]bool{}}
	lines := strings.Split(string(body), "\n")
	section := 0
	for _, line := range lines[:len(lines)-1] {
		if line == "" {
			if section++; section > 2 {
				return nil
			}
			continue
		}
		a, b, ok := strings.Cut(line, "\t")
		if !ok {
			return nil
		}
		if section == 0 {
			if len(b) != 40 {
				return nil
			}
			ix.Shards[a] = plumbing.NewHash(b)
			continue
		}
		p, err := strconv.ParseInt(a, 10, 32)
		if err != nil || p < 0 || int(p) >= f.n {
			return nil
		}
		if section == 1 {
			ix.cand[int32(p)] = b == "1"
			continue
		}
		r := splitRec(b)
		e := r.entry()
		for _, d := range f.deps(int32(p)) {
			e.Deps = append(e.Deps, f.id(d))
		}
		ix.over[int32(p)] = e
	}
	if section != 2 || lines[len(lines)-1] != "" {
		return nil
	}
	return ix
}
