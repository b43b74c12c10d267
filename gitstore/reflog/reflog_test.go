package reflog

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

func hash(n int) plumbing.Hash { return plumbing.NewHash(fmt.Sprintf("%040x", n)) }

func line(old, new int, when int64) string {
	return fmt.Sprintf("%s %s t <t@e> %d +0000\tgit-zerg", hash(old), hash(new), when)
}

// writeLog writes the reflog of ref under common, one line per step.
func writeLog(t *testing.T, common, ref string, lines ...string) {
	t.Helper()
	name := path(common, ref)
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A line still being written is left for the next check, and a line that
// is not an entry is skipped.
func TestParse(t *testing.T) {
	b := []byte(line(0, 1, 100) + "\nnot an entry\n" + line(1, 2, 200) + "\n" + line(2, 3, 300)[:50])
	got := parse(b, 10)
	if len(got) != 2 {
		t.Fatalf("parse = %d entries, want 2: %+v", len(got), got)
	}
	if got[0].Old != hash(0) || got[0].New != hash(1) || !got[0].When.Equal(time.Unix(100, 0)) {
		t.Errorf("first entry = %+v", got[0])
	}
	if want := int64(10 + len(line(0, 1, 100)) + 1 + len("not an entry\n") + len(line(1, 2, 200)) + 1); got[1].end != want {
		t.Errorf("second entry ends at %d, want %d", got[1].end, want)
	}
}

func TestBreaks(t *testing.T) {
	chain := []Entry{{Old: hash(0), New: hash(1)}, {Old: hash(1), New: hash(2)}}
	for _, c := range []struct {
		name    string
		from    plumbing.Hash
		entries []Entry
		tip     plumbing.Hash
		want    []plumbing.Hash
	}{
		{"whole chain", plumbing.ZeroHash, chain, hash(2), nil},
		{"ref put back", plumbing.ZeroHash, chain, hash(1), []plumbing.Hash{hash(2)}},
		{"built on an undone value", plumbing.ZeroHash, append(chain[:2:2], Entry{Old: hash(1), New: hash(3)}), hash(3), []plumbing.Hash{hash(2)}},
		{"checkpoint not followed on", hash(9), chain[1:], hash(2), []plumbing.Hash{hash(9)}},
		{"newest first", plumbing.ZeroHash, []Entry{{Old: hash(0), New: hash(1)}, {Old: hash(5), New: hash(2)}, {Old: hash(6), New: hash(3)}}, hash(3), []plumbing.Hash{hash(2), hash(1)}},
	} {
		if got := Breaks(c.from, c.entries, c.tip); !slices.Equal(got, c.want) {
			t.Errorf("%s: Breaks = %v, want %v", c.name, got, c.want)
		}
	}
}

// The checkpoint file is read back as written: a check in another process
// starts where this one stopped.
func TestCheckpointFile(t *testing.T) {
	cp := checkpoint{end: 42, line: line(0, 1, 100), tip: hash(1)}
	got := decodeCheckpoint(encodeCheckpoint(cp))
	if got.end != cp.end || got.tip != cp.tip || strings.TrimSuffix(got.line, "\n") != cp.line {
		t.Errorf("decodeCheckpoint(encodeCheckpoint(%+v)) = %+v", cp, got)
	}
	for _, bad := range []string{"", "x y\n", "12\n", "12 nothash\nline\n"} {
		if got := decodeCheckpoint([]byte(bad)); got != (checkpoint{}) {
			t.Errorf("decodeCheckpoint(%q) = %+v, want none", bad, got)
		}
	}
}

// A check starts from the checkpoint kept, in memory at once and in the
// file every CheckpointEvery entries; a fresh Checker (another process)
// starts from the file.
func TestCheckerKeepsCheckpoint(t *testing.T) {
	common := t.TempDir()
	ref := "refs/zerg/features/f"
	file := func(ref string) string { return filepath.Join(common, "zerg", "reflog-checked", ref) }
	var lines []string
	for i := 0; i < CheckpointEvery; i++ {
		lines = append(lines, line(i, i+1, int64(i)))
	}
	writeLog(t, common, ref, lines...)
	tip := hash(CheckpointEvery)
	writes := 0
	write := func(name string, data []byte) error {
		writes++
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		return os.WriteFile(name, data, 0o644)
	}
	c := NewChecker(common, file)
	sc, err := c.Scan(ref, tip)
	if err != nil || len(sc.Breaks) != 0 || sc.scanned != CheckpointEvery {
		t.Fatalf("Scan = %+v, %v: want %d entries, no breaks", sc, err, CheckpointEvery)
	}
	c.Keep(sc, write)
	if writes != 1 {
		t.Fatalf("%d checkpoint files written after %d entries, want 1", writes, CheckpointEvery)
	}
	// Nothing new: nothing read.
	if sc, err = c.Scan(ref, tip); err != nil || sc.scanned != 0 || len(sc.Breaks) != 0 {
		t.Errorf("Scan again = %+v, %v: want nothing to read", sc, err)
	}
	// The ref put back: the value undone is a break, from the checkpoint
	// in the file too.
	writeLog(t, common, ref, append(lines, line(CheckpointEvery, CheckpointEvery+1, 99))...)
	for name, c := range map[string]*Checker{"same": c, "fresh": NewChecker(common, file)} {
		sc, err := c.Scan(ref, tip)
		if err != nil || sc.scanned != 1 || !slices.Equal(sc.Breaks, []plumbing.Hash{hash(CheckpointEvery + 1)}) {
			t.Errorf("%s checker: Scan = %+v, %v: want one entry read, its value a break", name, sc, err)
		}
	}
	// A ref without a reflog (made with logs off) has nothing to check.
	if sc, err := c.Scan("refs/zerg/locks", hash(1)); err != nil || len(sc.Breaks) != 0 {
		t.Errorf("Scan of a ref without a reflog = %+v, %v: want no break", sc, err)
	}
}

// Checks of one repository's refs run from many goroutines at once.
func TestCheckerConcurrent(t *testing.T) {
	common := t.TempDir()
	file := func(ref string) string { return filepath.Join(common, "zerg", "reflog-checked", ref) }
	c := NewChecker(common, file)
	for i := 0; i < 2; i++ {
		writeLog(t, common, fmt.Sprintf("refs/zerg/features/f%d", i), line(0, 1, 1), line(1, 2, 2))
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		ref := fmt.Sprintf("refs/zerg/features/f%d", i%2)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				sc, err := c.Scan(ref, hash(2))
				if err != nil || len(sc.Breaks) != 0 {
					t.Errorf("Scan = %+v, %v", sc, err)
					return
				}
				c.Keep(sc, func(string, []byte) error { return nil })
			}
		}()
	}
	wg.Wait()
}

// A check starts after its checkpoint, whether the checkpoint is this
// process's or read from its file, and when git rewrote the reflog with
// its older entries expired; the checkpoint's line is found at the start
// of the file too. Each case counts the entries the second check read.
func TestScanStartsAtCheckpoint(t *testing.T) {
	for _, c := range []struct {
		name     string
		fresh    bool // a new process: the checkpoint comes from its file
		expire   bool // gc dropped the entries before the checkpoint
		firstOne bool // the checkpoint is the reflog's first line
	}{
		{"in memory", false, false, false},
		{"in memory, first line", false, false, true},
		{"from the file", true, false, false},
		{"from the file, reflog expired", true, true, false},
		{"in memory, reflog expired", false, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			common := t.TempDir()
			const ref = "refs/zerg/features/f"
			old := []string{line(0, 1, 100), line(1, 2, 200)}
			if c.firstOne {
				old = old[:1]
			}
			writeLog(t, common, ref, old...)
			cpFile := filepath.Join(common, "checked")
			ck := NewChecker(common, func(string) string { return cpFile })
			tip := hash(len(old))
			sc, err := ck.Scan(ref, tip)
			if err != nil {
				t.Fatal(err)
			}
			// Past CheckpointEvery entries the file is written too.
			sc.scanned = CheckpointEvery
			ck.Keep(sc, func(name string, data []byte) error { return os.WriteFile(name, data, 0o644) })
			lines := append(old, line(len(old), 7, 300), line(7, 8, 400))
			if c.expire {
				lines = lines[len(old)-1:]
			}
			writeLog(t, common, ref, lines...)
			if c.fresh {
				ck = NewChecker(common, func(string) string { return cpFile })
			}
			sc, err = ck.Scan(ref, hash(8))
			if err != nil {
				t.Fatal(err)
			}
			if sc.scanned != 2 || len(sc.Breaks) != 0 {
				t.Errorf("second check read %d entries (breaks %v), want the 2 after the checkpoint", sc.scanned, sc.Breaks)
			}
		})
	}
}
