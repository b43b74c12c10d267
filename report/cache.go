package report

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/lazy"
)

// The rendered cache keeps each task as `status --json` prints it, keyed
// by the task blob it was rendered from: 10,000 tasks are then a file
// copied to the output, where decoding and rendering them costs three
// times what the rest of status does. A task's rendering is a function of
// its blob and of the program, so the file names both: the blob per task,
// and the executable that wrote it (another build may render otherwise).
// Records follow the plan order of the index, so the file is read once,
// front to back, as the document is written; a record for another blob
// is a miss, and the task is read from the state instead. The file is
// rewritten once the misses cost more than writing it does.
//
//	zerg-task-json <format> <build>
//	<id> <blob> <length>           tab-separated, then the rendering and a newline

const (
	cacheMagic  = "zerg-task-json"
	cacheFormat = 1
	// rewriteAfter is how many misses make the file worth rewriting.
	rewriteAfter = 16
)

func cachePath(s *gitstore.Store, feature string) string {
	return s.Layout().TaskJSON(feature)
}

// buildKey names the running executable: its path, size and time, cheap
// to read and different for every build. "" when unknown: no cache then.
var buildKey = &lazy.Value[string]{Build: func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	sum := sha1.Sum(fmt.Appendf(nil, "%s\x00%d\x00%d", exe, fi.Size(), fi.ModTime().UnixNano()))
	return hex.EncodeToString(sum[:])
}}

func cacheHeader(key string) string {
	return fmt.Sprintf("%s %d %s\n", cacheMagic, cacheFormat, key)
}

type cacheReader struct {
	f   *os.File
	r   *bufio.Reader
	buf []byte
	ok  bool // false once the file ended or went wrong: every read misses
}

// openCache opens the file if this build wrote it; nil otherwise.
func openCache(path, key string) *cacheReader {
	if key == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	c := &cacheReader{f: f, r: bufio.NewReaderSize(f, 1<<16), ok: true}
	head, err := c.r.ReadString('\n')
	if err != nil || head != cacheHeader(key) {
		f.Close()
		return nil
	}
	return c
}

// next returns the rendering of the next record if it is of task id read
// from blob.
func (c *cacheReader) next(id string, blob plumbing.Hash) ([]byte, bool) {
	if c == nil || !c.ok {
		return nil, false
	}
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		c.ok = false
		return nil, false
	}
	// <id> TAB <blob> TAB <length> NL, parsed in place: 10,000 of them.
	name, rest, ok1 := bytes.Cut(line[:len(line)-1], []byte{'\t'})
	hexBlob, size, ok2 := bytes.Cut(rest, []byte{'\t'})
	n, err := strconv.Atoi(string(size))
	if !ok1 || !ok2 || err != nil || n < 0 || n > 1<<24 {
		c.ok = false
		return nil, false
	}
	var h plumbing.Hash
	same := string(name) == id && !blob.IsZero() && len(hexBlob) == 2*len(h)
	if same {
		_, err := hex.Decode(h[:], hexBlob)
		same = err == nil && h == blob
	}
	if cap(c.buf) < n+1 {
		c.buf = make([]byte, n+1)
	}
	c.buf = c.buf[:n+1]
	if _, err := io.ReadFull(c.r, c.buf); err != nil || c.buf[n] != '\n' {
		c.ok = false
		return nil, false
	}
	if !same {
		return nil, false
	}
	return c.buf[:n], true
}

func (c *cacheReader) close() {
	if c != nil {
		c.f.Close()
	}
}

// cacheWriter writes a new file beside the old one, which it replaces
// only once whole.
type cacheWriter struct {
	f    *os.File
	w    *bufio.Writer
	path string
	b    []byte
}

func createCache(path, key string) *cacheWriter {
	if key == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return nil
	}
	c := &cacheWriter{f: f, w: bufio.NewWriterSize(f, 1<<16), path: path}
	c.w.WriteString(cacheHeader(key))
	return c
}

func (c *cacheWriter) add(id string, blob plumbing.Hash, elem []byte) {
	if c == nil || blob.IsZero() || strings.ContainsAny(id, "\t\n") {
		return // a record that could not be read back: the task misses
	}
	c.b = append(c.b[:0], id...)
	c.b = append(c.b, '\t')
	c.b = append(c.b, blob.String()...)
	c.b = append(c.b, '\t')
	c.b = strconv.AppendInt(c.b, int64(len(elem)), 10)
	c.b = append(c.b, '\n')
	c.w.Write(c.b)
	c.w.Write(elem)
	c.w.WriteByte('\n')
}

// commit replaces the file, best effort: without it status only renders
// the tasks again.
func (c *cacheWriter) commit() {
	if c == nil {
		return
	}
	err := c.w.Flush()
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(c.f.Name(), c.path)
	}
	if err != nil {
		os.Remove(c.f.Name())
	}
}

func (c *cacheWriter) abort() {
	if c != nil {
		c.f.Close()
		os.Remove(c.f.Name())
	}
}
