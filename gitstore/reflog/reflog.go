// Package reflog reads a ref's reflog for the updates git undid, and
// remembers how far each was checked.
//
// git appends every update of a ref to its reflog, under the ref's lock
// and before the ref moves; `git pack-refs` never touches it. An update
// undone without a trace of its own (pack-refs putting a ref back to the
// value it packed) therefore shows as a break of the chain: the next
// entry does not start from the value the last one set, or the ref is not
// at the last value set. The values at the breaks are the candidates for
// an undone update; whether the ref still contains one is a question for
// the objects, which this package does not read.
//
// A checkpoint per ref (how far the reflog was checked, and the tip then,
// which contains every entry before it) keeps each check to the new
// entries; it is only a shortcut, so it lives in a plain file, and is not
// written after every check.
package reflog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// Entry is one line of a reflog.
type Entry struct {
	Old, New plumbing.Hash
	When     time.Time // to the second; zero when the line does not say
	end      int64     // offset just past the line
	line     string    // the line, without its newline
}

// parse reads the complete lines of b, which starts at offset base.
func parse(b []byte, base int64) []Entry {
	var out []Entry
	off := base
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return out // a line being written: the next check reads it
		}
		line := string(b[:i])
		b = b[i+1:]
		off += int64(i + 1)
		if len(line) < 82 || !plumbing.IsHash(line[:40]) || !plumbing.IsHash(line[41:81]) {
			continue
		}
		e := Entry{Old: plumbing.NewHash(line[:40]), New: plumbing.NewHash(line[41:81]), end: off, line: line}
		if who, _, ok := strings.Cut(line[82:], "\t"); ok {
			// "name <email> seconds zone"
			if f := strings.Fields(who); len(f) >= 2 {
				if sec, err := strconv.ParseInt(f[len(f)-2], 10, 64); err == nil {
					e.When = time.Unix(sec, 0)
				}
			}
		}
		out = append(out, e)
	}
}

// checkpoint: the reflog up to end (the line ending there is line) was
// checked, and every value it records is contained in tip, the value of
// that last line.
type checkpoint struct {
	end  int64
	line string
	tip  plumbing.Hash
	// stamp is the reflog's size and time when it ended at end: while
	// they and the tip stay, there is nothing new to check (kept in
	// memory only).
	stamp string
}

func stampOf(fi fs.FileInfo) string {
	return fmt.Sprint(fi.Size(), " ", fi.ModTime().UnixNano())
}

func encodeCheckpoint(cp checkpoint) []byte {
	return []byte(fmt.Sprintf("%d %s\n%s\n", cp.end, cp.tip, cp.line))
}

// decodeCheckpoint reads a checkpoint file; anything it cannot read is
// no checkpoint: the whole reflog is read again.
func decodeCheckpoint(b []byte) checkpoint {
	head, line, _ := strings.Cut(string(b), "\n")
	line = strings.TrimSuffix(line, "\n")
	end, tip, _ := strings.Cut(head, " ")
	n, err := strconv.ParseInt(end, 10, 64)
	if err != nil || !plumbing.IsHash(tip) {
		return checkpoint{}
	}
	return checkpoint{end: n, line: line, tip: plumbing.NewHash(tip)}
}

func path(commonDir, ref string) string {
	return filepath.Join(commonDir, "logs", filepath.FromSlash(ref))
}

// Read returns every entry of ref's reflog, oldest first (none when it
// has no reflog).
func Read(commonDir, ref string) ([]Entry, error) {
	entries, _, _, err := scan(path(commonDir, ref), checkpoint{})
	return entries, err
}

// scan returns the reflog entries after the checkpoint, and the value
// every earlier entry is contained in (zero when it reads the whole
// reflog). A checkpoint that no longer matches the file (git gc expired
// old entries and rewrote it; the ref was deleted and made again) is
// looked for by its line, else the whole reflog is read.
func scan(name string, cp checkpoint) (entries []Entry, from plumbing.Hash, fi fs.FileInfo, err error) {
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, plumbing.ZeroHash, nil, nil
	}
	if err != nil {
		return nil, plumbing.ZeroHash, nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, plumbing.ZeroHash, nil, err
	}
	size := fi.Size()
	start := int64(0)
	// The line ends at end, its newline included, and starts the file or
	// follows a newline.
	at := cp.end - int64(len(cp.line)) - 1
	if cp.line != "" && cp.end <= size && at >= 0 {
		want := "\n" + cp.line + "\n"
		if at == 0 {
			want = want[1:]
		}
		buf := make([]byte, len(want))
		if _, err := f.ReadAt(buf, cp.end-int64(len(buf))); err == nil && string(buf) == want {
			start, from = cp.end, cp.tip
		}
	}
	if start == 0 {
		all, err := io.ReadAll(f)
		if err != nil {
			return nil, plumbing.ZeroHash, nil, err
		}
		if cp.line != "" {
			if bytes.HasPrefix(all, []byte(cp.line+"\n")) {
				start, from = int64(len(cp.line)+1), cp.tip
			} else if i := bytes.Index(all, []byte("\n"+cp.line+"\n")); i >= 0 {
				start, from = int64(i+len(cp.line)+2), cp.tip
			}
		}
		return parse(all[start:], start), from, fi, nil
	}
	buf := make([]byte, size-start)
	n, err := f.ReadAt(buf, start)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, plumbing.ZeroHash, nil, err
	}
	return parse(buf[:n], start), from, fi, nil
}

// Breaks returns the values at the breaks of the chain from (the value
// before the first entry) through entries to tip, newest first: the
// candidates for an undone update.
func Breaks(from plumbing.Hash, entries []Entry, tip plumbing.Hash) []plumbing.Hash {
	var out []plumbing.Hash
	seen := map[plumbing.Hash]bool{}
	add := func(h plumbing.Hash) {
		if !h.IsZero() && !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	prev := from
	for _, e := range entries {
		if e.Old != prev {
			add(prev)
		}
		prev = e.New
	}
	if prev != tip {
		add(prev)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// CheckpointEvery is how many entries checked make the checkpoint file
// written again; fewer are cheaper to read again than to write.
const CheckpointEvery = 8

// Checker keeps the checkpoints of one repository's refs: in memory for
// the process, in a file for the next one. One is shared by every store
// of a repository in the process, so a check one goroutine made is not
// made again by the others; it is safe for concurrent use.
type Checker struct {
	commonDir string
	file      func(ref string) string

	mu      sync.Mutex
	checked map[string]checked
}

// checked is a ref's checkpoint in memory, and how many entries it is
// ahead of the file.
type checked struct {
	cp      checkpoint
	unsaved int
}

// NewChecker checks the reflogs of the repository whose common git
// directory is commonDir, keeping each ref's checkpoint in file(ref).
func NewChecker(commonDir string, file func(ref string) string) *Checker {
	return &Checker{commonDir: commonDir, file: file, checked: map[string]checked{}}
}

func (c *Checker) load(ref string) checkpoint {
	c.mu.Lock()
	k, ok := c.checked[ref]
	c.mu.Unlock()
	if ok {
		return k.cp
	}
	b, err := os.ReadFile(c.file(ref))
	if err != nil {
		return checkpoint{}
	}
	return decodeCheckpoint(b)
}

// Scan is one check of a ref's reflog: the values to look at, and the
// checkpoint to keep if the ref contains them all.
type Scan struct {
	// Breaks are the values at the breaks since the checkpoint, newest
	// first (see Breaks).
	Breaks  []plumbing.Hash
	ref     string
	tip     plumbing.Hash
	next    checkpoint
	scanned int
}

// Scan reads ref's reflog from its checkpoint, for a ref now at tip.
func (c *Checker) Scan(ref string, tip plumbing.Hash) (Scan, error) {
	old := c.load(ref)
	sc := Scan{ref: ref, tip: tip, next: old}
	if tip.IsZero() {
		return sc, nil // no ref: deleted, with its reflog
	}
	name := path(c.commonDir, ref)
	if old.stamp != "" && old.tip == tip {
		if fi, err := os.Stat(name); err == nil && stampOf(fi) == old.stamp {
			return sc, nil
		}
	}
	entries, from, fi, err := scan(name, old)
	if err != nil {
		return sc, err
	}
	if len(entries) == 0 && from == tip {
		if fi != nil && fi.Size() == old.end {
			sc.next.stamp = stampOf(fi)
		}
		return sc, nil
	}
	sc.Breaks = Breaks(from, entries, tip)
	sc.scanned = len(entries)
	if len(entries) > 0 && entries[len(entries)-1].New == tip {
		last := entries[len(entries)-1]
		sc.next = checkpoint{end: last.end, line: last.line, tip: tip}
		if fi != nil && fi.Size() == last.end {
			sc.next.stamp = stampOf(fi)
		}
	}
	return sc, nil
}

// Keep records the checkpoint of sc, once the ref was found to contain
// every value at its breaks; write puts the checkpoint's file, and may
// refuse (the file only makes a later check shorter).
func (c *Checker) Keep(sc Scan, write func(name string, data []byte) error) {
	cp := sc.next
	if cp.tip != sc.tip || sc.tip.IsZero() || (sc.scanned == 0 && cp.stamp == "") {
		return
	}
	c.mu.Lock()
	k := c.checked[sc.ref]
	k.cp, k.unsaved = cp, k.unsaved+sc.scanned
	save := k.unsaved >= CheckpointEvery
	if save {
		k.unsaved = 0
	}
	c.checked[sc.ref] = k
	c.mu.Unlock()
	if save {
		_ = write(c.file(sc.ref), encodeCheckpoint(cp))
	}
}
