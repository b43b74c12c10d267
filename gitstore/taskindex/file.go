package taskindex

import (
	"bytes"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/state"
)

// The index file is read in part: a claim looks at the few entries that
// changed since the file was written, their dependents, and the first
// candidates of a list kept best first, never at every entry. So the file
// holds, besides one line per task, what reaching an entry without reading
// the others takes:
//
//	zerg-index 3 <tasks tree> <feature.json> <entries> <CRC-32 of what follows the first line>
//	<shard> <tree> <positions of its entries, in the shard tree's order>   one line per shard
//	(empty line)
//	<offset of each entry's line, 8 hex digits each>
//	<candidates: positions, best first>
//	<id> <blob> <status> <level> <dependents> <attempts> <not before, unix ns> <unapproved 0|1> <dependency positions> <dependent positions> [<cost> <input> <output> <turns>]
//
// Fields are tab-separated, lists comma-separated; a position is an
// entry's place in plan order. A candidate is a pending or failed task
// whose dependencies are all done: the ready rule's facts that change only
// with a task's own status or its dependencies', so that a claim brings the
// list forward from the entries that changed and their dependents alone.
// The other facts (attempts, backoff, approval) are the ready rule's to
// judge, for each candidate as it comes.
//
// The checksum makes a damaged file a missing one (rebuilt), so that what
// is read in part can be trusted to be what was written.

// Format 3 checksums with CRC-32 (IEEE) instead of CRC-32C: Go builds
// CRC-32C's tables in 0.3 ms on first use, IEEE's in 0.03 ms, and every
// claim reads an index.
const indexFormat = 3

var errIndexFile = errors.New("index file unreadable")

// File is one encoding of every entry, read in part.
type File struct {
	data        []byte
	tasks, meta plumbing.Hash
	sum         string // the checksum, which names this encoding
	shards      map[string]plumbing.Hash
	n           int
	shardPos    map[string][]byte // the raw position list of each shard's line
	offsets     []byte
	cands       []byte
	entries     []byte
}

// rec is one entry line, split but not converted.
type rec struct {
	f [14]string
	n int
}

func (f *File) line(p int32) string {
	o := f.offset(p)
	if o < 0 || o >= len(f.entries) {
		return ""
	}
	rest := f.entries[o:]
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[:i]
	}
	return string(rest)
}

func (f *File) offset(p int32) int {
	if p < 0 || int(p) >= f.n {
		return -1
	}
	v := 0
	for _, c := range f.offsets[8*p : 8*p+8] {
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | int(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | int(c-'a'+10)
		default:
			return -1
		}
	}
	return v
}

// blobIs tells whether entry p was read from blob h, without converting
// the entry.
func (f *File) blobIs(p int32, h plumbing.Hash) bool {
	o := f.offset(p)
	if o < 0 {
		return false
	}
	line := f.entries[o:]
	tab := bytes.IndexByte(line, '\t')
	if tab < 0 || len(line) < tab+41 {
		return false
	}
	var got plumbing.Hash
	if _, err := hex.Decode(got[:], line[tab+1:tab+41]); err != nil {
		return false
	}
	return got == h
}

func (f *File) rec(p int32) rec { return splitRec(f.line(p)) }

// id, status and the position lists are read without converting the rest.
func (f *File) id(p int32) string {
	id, _, _ := strings.Cut(f.line(p), "\t")
	return unescapeField(id)
}

func (f *File) status(p int32) state.Status { return statusOf(unescapeField(f.rec(p).f[2])) }
func (f *File) deps(p int32) []int32        { return positions(f.rec(p).f[8]) }
func (f *File) dependents(p int32) []int32  { return positions(f.rec(p).f[9]) }

// entry converts line p; its dependencies are named by id, as the ready
// rule reads them.
func (f *File) entry(p int32) Entry {
	r := f.rec(p)
	e := r.entry()
	for _, d := range positions(r.f[8]) {
		e.Deps = append(e.Deps, f.id(d))
	}
	return e
}

// entry converts the fields of a line but the position lists.
func (r *rec) entry() Entry {
	e := Entry{ID: unescapeField(r.f[0]), Status: statusOf(unescapeField(r.f[2])), Unapproved: r.f[7] == "1"}
	if len(r.f[1]) == 40 {
		hex.Decode(e.Blob[:], []byte(r.f[1]))
	}
	e.Level, _ = strconv.Atoi(r.f[3])
	e.Dependents, _ = strconv.Atoi(r.f[4])
	e.Attempts, _ = strconv.Atoi(r.f[5])
	if r.f[6] != "" {
		if ns, err := strconv.ParseInt(r.f[6], 10, 64); err == nil {
			e.NotBefore = time.Unix(0, ns).UTC()
		}
	}
	if r.n == 14 {
		e.Spent = &state.Usage{}
		e.Spent.CostUSD, _ = strconv.ParseFloat(r.f[10], 64)
		e.Spent.InputTokens, _ = strconv.ParseInt(r.f[11], 10, 64)
		e.Spent.OutputTokens, _ = strconv.ParseInt(r.f[12], 10, 64)
		e.Spent.Turns, _ = strconv.Atoi(r.f[13])
	}
	return e
}

func splitRec(line string) rec {
	var r rec
	for more := true; more && r.n < len(r.f); r.n++ {
		r.f[r.n], line, more = strings.Cut(line, "\t")
	}
	return r
}

// appendEntry encodes one entry line, its dependencies and dependents as
// positions.
func appendEntry(b []byte, e *Entry, deps, dependents []int32) []byte {
	b = appendEscaped(b, e.ID)
	b = append(b, '\t')
	if !e.Blob.IsZero() {
		b = hex.AppendEncode(b, e.Blob[:])
	}
	b = append(b, '\t')
	b = appendEscaped(b, string(e.Status))
	b = append(b, '\t')
	b = strconv.AppendInt(b, int64(e.Level), 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, int64(e.Dependents), 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, int64(e.Attempts), 10)
	b = append(b, '\t')
	if !e.NotBefore.IsZero() {
		b = strconv.AppendInt(b, e.NotBefore.UnixNano(), 10)
	}
	b = append(b, '\t')
	if e.Unapproved {
		b = append(b, '1')
	} else {
		b = append(b, '0')
	}
	b = append(b, '\t')
	b = appendPositions(b, deps)
	b = append(b, '\t')
	b = appendPositions(b, dependents)
	if e.Spent != nil {
		b = append(b, '\t')
		b = strconv.AppendFloat(b, e.Spent.CostUSD, 'g', -1, 64)
		b = append(b, '\t')
		b = strconv.AppendInt(b, e.Spent.InputTokens, 10)
		b = append(b, '\t')
		b = strconv.AppendInt(b, e.Spent.OutputTokens, 10)
		b = append(b, '\t')
		b = strconv.AppendInt(b, int64(e.Spent.Turns), 10)
	}
	return append(b, '\n')
}

// all converts every line in one pass over one copy of the entries: ids
// and dependencies share its memory instead of a string each.
func (f *File) all() []Entry {
	text := string(f.entries)
	out := make([]Entry, f.n)
	deps := make([]string, f.n)
	for p := range out {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		r := splitRec(line)
		out[p] = r.entry()
		deps[p] = r.f[8]
	}
	for p := range out {
		for _, d := range positions(deps[p]) {
			id := ""
			if d >= 0 && int(d) < len(out) {
				id = out[d].ID
			}
			out[p].Deps = append(out[p].Deps, id)
		}
	}
	return out
}

func positions(s string) []int32 {
	if s == "" {
		return nil
	}
	out := make([]int32, 0, strings.Count(s, ",")+1)
	for s != "" {
		var one string
		one, s, _ = strings.Cut(s, ",")
		v, err := strconv.ParseInt(one, 10, 32)
		if err != nil {
			return out
		}
		out = append(out, int32(v))
	}
	return out
}

// parseIndexFile checks the file's checksum and splits it into its
// sections; the entries are converted only when asked for, each access
// bounded by the sections (the checksum says they are what was written).
func parseIndexFile(data []byte) (*File, error) {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return nil, errIndexFile
	}
	head := strings.Fields(string(data[:nl]))
	if len(head) != 6 || head[0] != "zerg-index" || head[1] != strconv.Itoa(indexFormat) || len(head[2]) != 40 || len(head[3]) != 40 {
		return nil, errIndexFile
	}
	n, err1 := strconv.Atoi(head[4])
	sum, err2 := strconv.ParseUint(head[5], 16, 32)
	rest := data[nl+1:]
	if err1 != nil || err2 != nil || n < 0 || crc32.ChecksumIEEE(rest) != uint32(sum) {
		return nil, errIndexFile
	}
	f := &File{data: data, n: n, shardPos: map[string][]byte{}, shards: map[string]plumbing.Hash{},
		tasks: plumbing.NewHash(head[2]), meta: plumbing.NewHash(head[3]), sum: head[5]}
	for {
		nl = bytes.IndexByte(rest, '\n')
		if nl < 0 {
			return nil, errIndexFile
		}
		line := rest[:nl]
		rest = rest[nl+1:]
		if len(line) == 0 {
			break
		}
		name, tail, ok1 := bytes.Cut(line, []byte{'\t'})
		h, pos, ok2 := bytes.Cut(tail, []byte{'\t'})
		if !ok1 || !ok2 || len(h) != 40 {
			return nil, errIndexFile
		}
		f.shards[string(name)] = plumbing.NewHash(string(h))
		f.shardPos[string(name)] = pos
	}
	if nl = bytes.IndexByte(rest, '\n'); nl != 8*n {
		return nil, errIndexFile
	}
	f.offsets, rest = rest[:nl], rest[nl+1:]
	if nl = bytes.IndexByte(rest, '\n'); nl < 0 {
		return nil, errIndexFile
	}
	f.cands, f.entries = rest[:nl], rest[nl+1:]
	if n > 0 && f.entries[len(f.entries)-1] != '\n' || n == 0 && len(f.entries) != 0 {
		return nil, errIndexFile
	}
	return f, nil
}

// encodeIndexFile encodes entries (plan order) with their shards. Ids and
// statuses are escaped: plans allow no separators in ids, but state fetched
// from elsewhere is not trusted to be a plan's.
func encodeIndexFile(tasks, meta plumbing.Hash, shards map[string]plumbing.Hash, entries []Entry) []byte {
	n := len(entries)
	byID := make(map[string]int32, n)
	for i := range entries {
		byID[entries[i].ID] = int32(i)
	}
	deps := make([][]int32, n)
	dependents := make([][]int32, n)
	shardPos := map[string][]int32{}
	for i := range entries {
		for _, d := range entries[i].Deps {
			// A dependency outside the feature (only state made by hand
			// has one) is never done: position -1.
			j, ok := byID[d]
			if !ok {
				deps[i] = append(deps[i], -1)
				continue
			}
			deps[i] = append(deps[i], j)
			dependents[j] = append(dependents[j], int32(i))
		}
		sh := ShardOf(entries[i].ID)
		shardPos[sh] = append(shardPos[sh], int32(i))
	}
	status := func(p int32) state.Status {
		if p < 0 {
			return ""
		}
		return entries[p].Status
	}
	var cands []int32
	for i := range entries {
		if candidate(status(int32(i)), deps[i], status) {
			cands = append(cands, int32(i))
		}
	}
	sort.Slice(cands, func(a, b int) bool {
		return better(&entries[cands[a]], cands[a], &entries[cands[b]], cands[b])
	})

	body := make([]byte, 0, 96*n+64*len(shards)+64)
	names := make([]string, 0, len(shards))
	for name := range shards {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		pos := shardPos[name]
		// The shard tree lists its tasks by name: so does the line.
		sort.Slice(pos, func(a, b int) bool { return entries[pos[a]].ID < entries[pos[b]].ID })
		h := shards[name]
		body = append(body, name...)
		body = append(body, '\t')
		body = hex.AppendEncode(body, h[:])
		body = append(body, '\t')
		body = appendPositions(body, pos)
		body = append(body, '\n')
	}
	body = append(body, '\n')
	offsetsAt := len(body)
	body = append(body, make([]byte, 8*n)...)
	body = append(body, '\n')
	body = appendPositions(body, cands)
	body = append(body, '\n')
	start := len(body)
	for i := range entries {
		e := &entries[i]
		off := len(body) - start
		if off >= 1<<32 {
			return nil
		}
		hexOffset(body[offsetsAt+8*i:offsetsAt+8*i+8], uint32(off))
		body = appendEntry(body, e, deps[i], dependents[i])
	}
	head := "zerg-index " + strconv.Itoa(indexFormat) + " " + tasks.String() + " " + meta.String() + " " +
		strconv.Itoa(n) + " " + strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 16) + "\n"
	return append([]byte(head), body...)
}

func hexOffset(dst []byte, v uint32) {
	const digits = "0123456789abcdef"
	for i := 7; i >= 0; i-- {
		dst[i] = digits[v&15]
		v >>= 4
	}
}

func appendPositions(b []byte, ps []int32) []byte {
	for i, p := range ps {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(p), 10)
	}
	return b
}

// candidate: claimable, every dependency done.
func candidate(st state.Status, deps []int32, status func(int32) state.Status) bool {
	if !st.Claimable() {
		return false
	}
	for _, d := range deps {
		if status(d) != state.Done {
			return false
		}
	}
	return true
}

// better orders candidates as the ready rule does: gates.Better, then plan
// order.
func better(a *Entry, pa int32, b *Entry, pb int32) bool {
	if gates.Better(a.Level, a.Dependents, b.Level, b.Dependents) {
		return true
	}
	if gates.Better(b.Level, b.Dependents, a.Level, a.Dependents) {
		return false
	}
	return pa < pb
}

// Fields escape the separators (tab, newline, comma) and the escape
// character itself; what a plan allows has none of them.
func appendEscaped(b []byte, s string) []byte {
	if !strings.ContainsAny(s, "\t\n,%") {
		return append(b, s...)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\t', '\n', ',', '%':
			b = append(b, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15])
		default:
			b = append(b, c)
		}
	}
	return b
}

func unescapeField(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// statusOf returns the status named s, sharing the constant's string.
func statusOf(s string) state.Status {
	for _, st := range state.Statuses {
		if string(st) == s {
			return st
		}
	}
	return state.Status(s)
}
