package view

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/git-zerg/git-zerg/state"
)

// Columns are a task's cells as both terminal outputs print them.
func (t *Task) Columns(now time.Time, withCost bool) []string {
	attempt, elapsed := "", ""
	if t.Attempts > 0 {
		attempt = fmt.Sprintf("#%d", t.Attempts)
	}
	// A task given back (released, or failed and waiting) shows how long
	// its last attempt ran until it is claimed again; a pending one, none.
	if !t.Since.IsZero() && t.Status != state.Pending {
		elapsed = shortDuration(t.Elapsed(now))
	}
	worker := t.Worker
	if t.Status == state.Pending && t.Attempts == 0 {
		worker = ""
	}
	host := t.Host
	if worker == "" {
		host = ""
	}
	cols := []string{t.ID, string(t.Status), worker, host, attempt, elapsed}
	if withCost {
		cols = append(cols, t.Cost())
	}
	note := cleanText(t.Title)
	if t.Reason != "" && t.Status.Stopped() {
		note += " — " + cleanText(t.Reason)
	}
	return append(cols, note)
}

// Summary is the one-line head of a snapshot.
func (sn *Snapshot) Summary() string {
	pct := 0
	if sn.Total > 0 {
		pct = sn.Done * 100 / sn.Total
	}
	var parts []string
	for _, st := range state.Statuses {
		if n := sn.Counts[string(st)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", st, n))
		}
	}
	return fmt.Sprintf("feature %s: %d/%d done (%d%%)  %s", sn.Feature, sn.Done, sn.Total, pct, strings.Join(parts, ", "))
}

// WriteText prints the snapshot as plain text: what watch prints when its
// output is not a terminal, and with --once.
func WriteText(w io.Writer, sn *Snapshot, now time.Time) error {
	fmt.Fprintf(w, "%s  (at %s, state %s)\n", sn.Summary(), now.Format("15:04:05"), short(sn.Tip))
	// Widths over every task, so the levels line up with each other.
	rows := make([][]string, len(sn.Tasks))
	var widths []int
	for i, t := range sn.Tasks {
		rows[i] = t.Columns(now, sn.HasCost)
		for len(widths) < len(rows[i]) {
			widths = append(widths, 0)
		}
		for j, c := range rows[i] {
			widths[j] = max(widths[j], utf8.RuneCountInString(c))
		}
	}
	bw := bufio.NewWriter(w)
	for i, ids := range sn.Levels {
		fmt.Fprintf(bw, "level %d\n", i+1)
		for _, id := range ids {
			j, ok := sn.byID[id]
			if !ok {
				continue
			}
			line := ""
			for k, c := range rows[j] {
				if k < len(rows[j])-1 {
					c = pad(c, widths[k])
				}
				line += "  " + c
			}
			bw.WriteString(strings.TrimRight(line, " ") + "\n")
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if len(sn.Workers) > 0 {
		fmt.Fprintln(w, "workers:")
		for _, wk := range sn.Workers {
			fmt.Fprintf(w, "  %s %s on %s for %s\n", wk.Name, wk.Task, cleanText(wk.Host), shortDuration(now.Sub(wk.Since)))
		}
	}
	return nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// cleanText makes text from the state or a worker's output safe to print on a
// terminal: escape sequences go, other control characters become spaces
// (a title or a log line must not move the cursor or retitle the window),
// tabs are expanded.
func cleanText(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	col := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == 0x1b {
			i += escapeLen(s[i:])
			continue
		}
		i += size
		switch {
		case r == '\t':
			n := 8 - col%8
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		case r == utf8.RuneError && size == 1, unicode.IsControl(r), r == '\u2028', r == '\u2029':
			r = ' '
		}
		b.WriteRune(r)
		col++
	}
	return b.String()
}

func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// escapeLen is the length of the escape sequence at the start of s: CSI
// (ESC [ ... final), OSC and other string sequences (up to BEL or ST), or
// ESC and one character.
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[':
		for i := 2; i < len(s); i++ {
			if s[i] >= 0x40 && s[i] <= 0x7e {
				return i + 1
			}
		}
		return len(s)
	case ']', 'P', '_', '^', 'X':
		for i := 2; i < len(s); i++ {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
		return len(s)
	}
	return 2
}
