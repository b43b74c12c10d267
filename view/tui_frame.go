package view

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/git-zerg/git-zerg/state"
)

// Frame draws the view for a width × height screen: one string per line,
// with colours, each at most width columns wide.
func (w *Watch) Frame(width, height int, now time.Time) []string {
	width, height = max(width, 20), max(height, 5)
	if w.logMode {
		return w.logFrame(width, height)
	}
	var lines []string
	head := "git zerg watch  "
	switch {
	case w.snap != nil:
		head += w.snap.Summary()
	default:
		head += "feature " + w.feature
	}
	right := now.Format("15:04:05")
	if w.sync != "" {
		right = w.sync + "  " + right
	}
	lines = append(lines, bar(head, right, width))
	if w.err != nil {
		lines = append(lines, "\x1b[31m"+fit(cleanText(firstLine(w.err.Error())), width)+"\x1b[0m")
	}
	if w.snap == nil {
		if w.err != nil {
			return lines
		}
		return append(lines, fit("reading the state…", width))
	}
	detailRows := 0
	if height >= 12 {
		detailRows = min(14, (height-3)*2/5)
	}
	listRows := max(1, height-len(lines)-1-detailRows-1)
	if detailRows > 0 {
		listRows = height - len(lines) - 1 - detailRows
	}
	w.listRows = listRows
	lines = append(lines, w.listFrame(width, listRows, now)...)
	if detailRows > 0 {
		lines = append(lines, w.detailFrame(width, detailRows, now)...)
	}
	lines = append(lines, "\x1b[2m"+fit("↑/↓ select  enter/l log  tab/f feature  q quit", width)+"\x1b[0m")
	return lines
}

func (w *Watch) listFrame(width, rows int, now time.Time) []string {
	sn := w.snap
	if len(sn.Tasks) == 0 {
		return padLines([]string{"no tasks"}, rows)
	}
	// Keep the selected task in view, with its level's header when it fits.
	selRow := w.rowOf[w.sel]
	if selRow < w.top {
		w.top = selRow
		if selRow > 0 && w.rows[selRow-1].task < 0 {
			w.top = selRow - 1
		}
	}
	if selRow >= w.top+rows {
		w.top = selRow - rows + 1
	}
	w.top = max(0, min(w.top, len(w.rows)-rows))
	// Column widths from the rows shown, so a 10,000-task feature costs
	// what a screen of it costs.
	end := min(len(w.rows), w.top+rows)
	var cols [][]string
	widths := []int{}
	for _, r := range w.rows[w.top:end] {
		if r.task < 0 {
			cols = append(cols, nil)
			continue
		}
		c := sn.Tasks[r.task].Columns(now, sn.HasCost)
		for len(widths) < len(c) {
			widths = append(widths, 0)
		}
		for i, s := range c[:len(c)-1] {
			widths[i] = max(widths[i], utf8.RuneCountInString(s))
		}
		cols = append(cols, c)
	}
	var out []string
	for i, r := range w.rows[w.top:end] {
		if r.task < 0 {
			ids := sn.Levels[r.level-1]
			done := 0
			for _, id := range ids {
				if t := sn.Task(id); t != nil && t.Status == state.Done {
					done++
				}
			}
			out = append(out, "\x1b[1m"+fit(fmt.Sprintf("level %d  %d/%d done", r.level, done, len(ids)), width)+"\x1b[0m")
			continue
		}
		t := sn.Tasks[r.task]
		var l lineBuilder
		l.room = width
		selected := r.task == w.sel
		if selected {
			l.raw("\x1b[7m")
			l.add("▸ ", "")
		} else {
			l.add("  ", "")
		}
		for j, c := range cols[i] {
			style := ""
			if j == 1 {
				style = statusStyle(t.Status)
			}
			if j < len(cols[i])-1 {
				c = pad(c, widths[j]) + "  "
			}
			l.add(c, style)
		}
		if selected {
			l.add(strings.Repeat(" ", max(0, l.room)), "")
		}
		l.raw("\x1b[0m")
		out = append(out, l.String())
	}
	return padLines(out, rows)
}

func (w *Watch) detailFrame(width, rows int, now time.Time) []string {
	t := w.selected()
	if t == nil {
		return padLines(nil, rows)
	}
	title := fmt.Sprintf("%s %s", t.ID, t.Status)
	if t.Worker != "" && t.Status != state.Pending {
		title += " · " + t.Worker
		if t.Host != "" {
			title += "@" + cleanText(t.Host)
		}
	}
	if t.Attempts > 0 {
		title += fmt.Sprintf(" · attempt %d", t.Attempts)
	}
	if !t.Since.IsZero() && t.Status != state.Pending {
		title += " · " + shortDuration(t.Elapsed(now))
	}
	if c := t.Cost(); c != "" {
		title += " · " + c
	}
	out := []string{rule(" "+title+" ", width)}
	var hist []string
	if w.detail != nil {
		for _, ev := range w.detail.History {
			line := fmt.Sprintf("  %s %-8s %s → %s", ev.At.Local().Format("15:04:05"), ev.Op, ev.From, ev.To)
			if ev.From == "" {
				line = fmt.Sprintf("  %s %-8s %s", ev.At.Local().Format("15:04:05"), ev.Op, ev.To)
			}
			if ev.Worker != "" {
				line += " " + ev.Worker
			}
			if ev.Reason != "" {
				line += ": " + ev.Reason
			}
			hist = append(hist, cleanText(line))
		}
	}
	// History gets up to half the pane, its newest events; output the rest.
	rest := rows - 1
	histRows := min(len(hist), max(1, rest/2))
	hist = hist[len(hist)-histRows:]
	for _, h := range hist {
		out = append(out, fit(h, width))
	}
	outRows := rest - histRows
	if outRows > 0 {
		if w.tailFrom == "" {
			out = append(out, "\x1b[2m"+fit("  no output on this machine", width)+"\x1b[0m")
		} else {
			out = append(out, "\x1b[2m"+fit("  output ("+w.tailFrom+"):", width)+"\x1b[0m")
			n := min(len(w.tail), outRows-1)
			for _, l := range w.tail[len(w.tail)-n:] {
				out = append(out, fit("  "+l, width))
			}
		}
	}
	return padLines(out, rows)
}

func (w *Watch) logFrame(width, height int) []string {
	p := &w.log
	p.height = height - 2
	head := p.task
	if p.attempt > 0 {
		head += fmt.Sprintf("  attempt-%d.log", p.attempt)
		if len(p.attempts) > 1 {
			head += fmt.Sprintf(" (%d attempts: [ ] to switch)", len(p.attempts))
		}
	}
	pos := ""
	if len(p.lines) > 0 {
		pos = fmt.Sprintf("lines %d–%d of %d", p.top+1, min(p.top+p.height, len(p.lines)), len(p.lines))
		if p.follow {
			pos += "  following"
		}
	}
	out := []string{bar(head, pos, width)}
	if p.missing != "" {
		out = append(out, fit(p.missing, width))
	}
	if p.follow {
		p.top = max(0, len(p.lines)-p.height)
	}
	end := min(len(p.lines), p.top+p.height)
	for _, l := range p.lines[min(p.top, end):end] {
		out = append(out, fit(l, width))
	}
	out = padLines(out, height-1)
	return append(out, "\x1b[2m"+fit("↑/↓ pgup/pgdn g/G scroll  q back", width)+"\x1b[0m")
}

// lineBuilder writes styled cells up to a width.
type lineBuilder struct {
	b    strings.Builder
	room int
}

func (l *lineBuilder) raw(s string) { l.b.WriteString(s) }

func (l *lineBuilder) add(s, style string) {
	s = fit(s, l.room)
	if s == "" {
		return
	}
	if style != "" {
		l.b.WriteString(style)
	}
	l.b.WriteString(s)
	if style != "" {
		// Back to the default colour and weight, not a full reset, so a
		// selected row stays in reverse video.
		l.b.WriteString("\x1b[22;39m")
	}
	l.room -= utf8.RuneCountInString(s)
}

func (l *lineBuilder) String() string { return l.b.String() }

// fit cuts s to width columns (one per rune: wide characters may overflow).
func fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	if width == 1 {
		return "…"
	}
	return string(r[:width-1]) + "…"
}

func pad(s string, width int) string {
	if n := utf8.RuneCountInString(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}

func padLines(ls []string, n int) []string {
	for len(ls) < n {
		ls = append(ls, "")
	}
	return ls[:n]
}

// bar is a reverse-video line with text at both ends.
func bar(left, right string, width int) string {
	left = cleanText(left)
	gap := width - utf8.RuneCountInString(left) - utf8.RuneCountInString(right)
	s := left + strings.Repeat(" ", max(1, gap)) + right
	return "\x1b[7m" + pad(fit(s, width), width) + "\x1b[0m"
}

func rule(title string, width int) string {
	s := "──" + cleanText(title)
	return "\x1b[2m" + fit(s+strings.Repeat("─", max(0, width-utf8.RuneCountInString(s))), width) + "\x1b[0m"
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// renderFrame writes a frame over the previous one: home, each line cleared to
// its end, the rest of the screen cleared; one write, so the terminal
// never shows half a frame.
func renderFrame(out io.Writer, lines []string) error {
	var b bytes.Buffer
	b.WriteString("\x1b[H")
	for i, l := range lines {
		if i > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString(l)
		b.WriteString("\x1b[K")
	}
	b.WriteString("\x1b[J")
	_, err := out.Write(b.Bytes())
	return err
}
