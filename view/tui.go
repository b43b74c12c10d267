package view

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/git-zerg/git-zerg/state"
)

// Key is one key press, decoded from the terminal's input.
type Key string

const (
	KeyUp       Key = "up"
	KeyDown     Key = "down"
	KeyPageUp   Key = "pgup"
	KeyPageDown Key = "pgdn"
	KeyHome     Key = "home"
	KeyEnd      Key = "end"
	KeyTab      Key = "tab"
	KeyBackTab  Key = "backtab"
	KeyEnter    Key = "enter"
	KeyEsc      Key = "esc"
	KeyLeft     Key = "left"
	KeyRight    Key = "right"
	KeyCtrlC    Key = "ctrl-c"
)

// parseKeys splits terminal input into keys. Sequences it does not know
// are dropped whole, so a stray function key does nothing rather than
// something.
func parseKeys(b []byte) []Key {
	var out []Key
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == 0x1b:
			if i+1 == len(b) {
				out = append(out, KeyEsc)
				i++
				continue
			}
			n := escapeLen(string(b[i:]))
			if b[i+1] == 'O' && i+2 < len(b) {
				n = 3
			}
			seq := string(b[i : i+n])
			if k, ok := escKey(seq); ok {
				out = append(out, k)
			} else if n == 2 && b[i+1] == 0x1b {
				out = append(out, KeyEsc)
				n = 1
			}
			i += n
		case c == '\r' || c == '\n':
			out = append(out, KeyEnter)
			i++
		case c == '\t':
			out = append(out, KeyTab)
			i++
		case c == 0x03:
			out = append(out, KeyCtrlC)
			i++
		case c < 0x20 || c == 0x7f:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			out = append(out, Key(string(r)))
			i += size
		}
	}
	return out
}

// escKey is the key an escape sequence stands for. Switches here, not
// maps that every start of the program would build.
func escKey(seq string) (Key, bool) {
	switch seq {
	case "\x1b[A", "\x1bOA":
		return KeyUp, true
	case "\x1b[B", "\x1bOB":
		return KeyDown, true
	case "\x1b[C", "\x1bOC":
		return KeyRight, true
	case "\x1b[D", "\x1bOD":
		return KeyLeft, true
	case "\x1b[5~":
		return KeyPageUp, true
	case "\x1b[6~":
		return KeyPageDown, true
	case "\x1b[H", "\x1bOH", "\x1b[1~", "\x1b[7~":
		return KeyHome, true
	case "\x1b[F", "\x1bOF", "\x1b[4~", "\x1b[8~":
		return KeyEnd, true
	case "\x1b[Z":
		return KeyBackTab, true
	}
	return "", false
}

// statusStyle colours by state, the same as the web page's.
func statusStyle(s state.Status) string {
	switch s {
	case state.Pending:
		return "\x1b[2m"
	case state.Claimed:
		return "\x1b[33;1m"
	case state.Verified:
		return "\x1b[36m"
	case state.Done:
		return "\x1b[32m"
	case state.Failed:
		return "\x1b[31;1m"
	case state.Blocked:
		return "\x1b[35m"
	}
	return ""
}

// Watch is the state of the full-screen view: what it shows and where
// the user is in it. Frame draws it; Key moves it. Run drives both from
// a terminal and the refs.
type Watch struct {
	src      *Source
	features []string
	feature  string
	snap     *Snapshot
	err      error
	sync     string // the last background sync's outcome, if any

	sel, top int   // selected task (index in snap.Tasks), first list row shown
	rows     []row // level headers and tasks, in order
	rowOf    []int // task index -> row
	listRows int   // rows the list had at the last frame
	detail   *state.Task
	tail     []string // last lines of the selected task's output
	tailFrom string   // which log they came from

	logMode bool
	log     pager
}

type row struct {
	level int // 1-based
	task  int // index in snap.Tasks, -1 for the level's header
}

// pager is the log view of one attempt.
type pager struct {
	task     string
	attempt  int
	attempts []int
	path     string
	size     int64
	lines    []string
	top      int
	follow   bool // stays at the end as the log grows
	height   int
	missing  string
}

// newWatch starts on feature.
func newWatch(src *Source, feature string) *Watch {
	return &Watch{src: src, feature: feature}
}

// SetSync records the outcome of a background sync for the header.
func (w *Watch) SetSync(err error, at time.Time) {
	if err != nil {
		w.sync = "sync failed: " + firstLine(err.Error())
		return
	}
	w.sync = "synced " + at.Format("15:04:05")
}

// SetSnapshot shows a new read of the feature, keeping the selection on
// the same task.
func (w *Watch) SetSnapshot(sn *Snapshot, err error) {
	if err != nil {
		w.err = err
		if isRefusal(err) {
			// State that fails the check is not shown, nor is what was
			// shown before it.
			w.snap, w.rows, w.detail, w.tail, w.logMode = nil, nil, nil, nil, false
		}
		return
	}
	w.err = nil
	keep := ""
	if w.snap != nil && w.sel < len(w.snap.Tasks) && w.snap.Feature == sn.Feature {
		keep = w.snap.Tasks[w.sel].ID
	}
	w.snap = sn
	w.rows, w.rowOf = w.rows[:0], make([]int, len(sn.Tasks))
	for i, ids := range sn.Levels {
		w.rows = append(w.rows, row{level: i + 1, task: -1})
		for _, id := range ids {
			if j, ok := sn.byID[id]; ok {
				w.rowOf[j] = len(w.rows)
				w.rows = append(w.rows, row{level: i + 1, task: j})
			}
		}
	}
	switch {
	case keep != "" && sn.Task(keep) != nil:
		w.sel = sn.byID[keep]
	default:
		w.sel = firstInteresting(sn)
		w.top = 0
	}
	w.loadDetail()
}

// firstInteresting is where the selection starts: the first task at work,
// else the first not done.
func firstInteresting(sn *Snapshot) int {
	for i, t := range sn.Tasks {
		if t.Status == state.Claimed {
			return i
		}
	}
	for i, t := range sn.Tasks {
		if t.Status != state.Done {
			return i
		}
	}
	return 0
}

func (w *Watch) selected() *Task {
	if w.snap == nil || w.sel >= len(w.snap.Tasks) {
		return nil
	}
	return w.snap.Tasks[w.sel]
}

// loadDetail reads the selected task's history and output tail.
func (w *Watch) loadDetail() {
	t := w.selected()
	w.detail, w.tail, w.tailFrom = nil, nil, ""
	if t == nil {
		return
	}
	if d, err := w.src.Task(w.feature, t.ID); err == nil {
		w.detail = d
	}
	w.refreshTail()
}

func (w *Watch) refreshTail() {
	t := w.selected()
	if t == nil {
		return
	}
	out, err := w.src.Output(w.feature, t.ID, 0, 16<<10)
	if err != nil {
		w.tail, w.tailFrom = nil, ""
		return
	}
	lines := strings.Split(strings.TrimRight(out.Text, "\n"), "\n")
	for i := range lines {
		lines[i] = cleanText(lines[i])
	}
	w.tail, w.tailFrom = lines, fmt.Sprintf("attempt-%d.log", out.Attempt)
}

// Tick refreshes what grows without a state change: the output of the
// task shown.
func (w *Watch) Tick() {
	if w.logMode {
		w.log.reload(w.src, w.feature)
		return
	}
	if t := w.selected(); t != nil && t.Status == state.Claimed {
		w.refreshTail()
	}
}

// Key handles a key press; it returns true to quit.
func (w *Watch) Key(k Key) (quit bool) {
	if k == KeyCtrlC {
		return true
	}
	if w.logMode {
		return w.logKey(k)
	}
	switch k {
	case "q", "Q":
		return true
	case KeyUp, "k":
		w.move(-1)
	case KeyDown, "j":
		w.move(1)
	case KeyPageUp:
		w.move(-max(1, w.listRows-1))
	case KeyPageDown:
		w.move(max(1, w.listRows-1))
	case KeyHome, "g":
		w.move(-len(w.rows))
	case KeyEnd, "G":
		w.move(len(w.rows))
	case KeyTab, "f":
		w.switchFeature(1)
	case KeyBackTab, "F":
		w.switchFeature(-1)
	case KeyEnter, "l", KeyRight:
		if t := w.selected(); t != nil {
			w.openLog(t.ID, 0)
		}
	}
	return false
}

func (w *Watch) move(d int) {
	if w.snap == nil || len(w.snap.Tasks) == 0 {
		return
	}
	n := min(max(w.sel+d, 0), len(w.snap.Tasks)-1)
	if n != w.sel {
		w.sel = n
		w.loadDetail()
	}
}

func (w *Watch) switchFeature(d int) {
	fs, err := w.src.Features()
	if err != nil || len(fs) == 0 {
		return
	}
	w.features = fs
	i := 0
	for j, f := range fs {
		if f == w.feature {
			i = (j + d + len(fs)) % len(fs)
		}
	}
	if fs[i] == w.feature {
		return
	}
	w.feature, w.snap, w.sel, w.top = fs[i], nil, 0, 0
	w.SetSnapshot(w.src.Snapshot(w.feature))
}

func (w *Watch) openLog(id string, attempt int) {
	w.logMode = true
	w.log = pager{task: id, follow: true, height: w.log.height}
	w.log.attempts = w.src.Attempts(w.feature, id)
	if attempt <= 0 && len(w.log.attempts) > 0 {
		attempt = w.log.attempts[len(w.log.attempts)-1]
	}
	w.log.attempt = attempt
	w.log.reload(w.src, w.feature)
}

func (w *Watch) logKey(k Key) bool {
	p := &w.log
	page := max(1, p.height-1)
	switch k {
	case "q", "Q", KeyEsc, "h", KeyLeft:
		w.logMode = false
		w.refreshTail()
	case KeyUp, "k":
		p.scroll(-1)
	case KeyDown, "j":
		p.scroll(1)
	case KeyPageUp, "b":
		p.scroll(-page)
	case KeyPageDown, " ":
		p.scroll(page)
	case KeyHome, "g":
		p.scroll(-len(p.lines))
	case KeyEnd, "G":
		p.scroll(len(p.lines))
	case "[", "]":
		for i, a := range p.attempts {
			if a == p.attempt {
				j := i - 1
				if k == "]" {
					j = i + 1
				}
				if j >= 0 && j < len(p.attempts) {
					w.openLog(p.task, p.attempts[j])
				}
				break
			}
		}
	}
	return false
}

func (p *pager) scroll(d int) {
	last := max(0, len(p.lines)-p.height)
	p.top = min(max(p.top+d, 0), last)
	p.follow = p.top == last
}

// reload reads the log again when it grew: a running task's log is
// followed as it is written.
func (p *pager) reload(src *Source, feature string) {
	if p.attempt <= 0 {
		p.missing = "no output of " + p.task + " on this machine (a task worked on another host keeps its log there)"
		return
	}
	path, ok := src.LogFile(feature, p.task, p.attempt)
	if !ok {
		return
	}
	fi, err := os.Stat(path)
	if err != nil {
		p.missing = "no log: " + err.Error()
		return
	}
	if fi.Size() == p.size && p.lines != nil {
		return
	}
	out, err := src.Output(feature, p.task, p.attempt, 8<<20)
	if err != nil {
		p.missing = err.Error()
		return
	}
	p.size, p.path, p.missing = out.Size, path, ""
	p.lines = strings.Split(strings.TrimRight(out.Text, "\n"), "\n")
	for i := range p.lines {
		p.lines[i] = cleanText(p.lines[i])
	}
	if out.Truncated {
		p.lines = append([]string{"… (earlier output left out)"}, p.lines...)
	}
	if p.follow {
		p.top = max(0, len(p.lines)-p.height)
	}
}

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

// Timing of the live views: the ref is polled often (a file read), the
// screen redrawn at least once a second for elapsed times.
const (
	PollInterval = 250 * time.Millisecond
	tickInterval = time.Second
)

// Run shows the view full-screen on a terminal until q, Ctrl-C or ctx
// ends. in must be the terminal: it is put in raw mode for single keys,
// and restored whatever way Run returns. The outcomes of background syncs
// arrive on syncs (nil without).
func (w *Watch) Run(ctx context.Context, in, out *os.File, syncs <-chan error) error {
	fd := int(in.Fd())
	old, err := term.MakeRaw(fd)
	if err != nil {
		return fmt.Errorf("watch: the terminal refuses raw mode: %w", err)
	}
	defer term.Restore(fd, old)
	// Alternate screen and no cursor while the view runs; the user's
	// screen comes back as it was.
	io.WriteString(out, "\x1b[?1049h\x1b[?25l\x1b[2J")
	defer io.WriteString(out, "\x1b[?25h\x1b[?1049l")

	keys := make(chan []byte, 16)
	go func() {
		// Blocked in a read when Run returns: it ends with the process.
		buf := make([]byte, 256)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				keys <- append([]byte(nil), buf[:n]...)
			}
			if err != nil {
				close(keys)
				return
			}
		}
	}()
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)

	size := func() (int, int) {
		cw, ch, err := term.GetSize(int(out.Fd()))
		if err != nil || cw <= 0 || ch <= 0 {
			return 80, 24
		}
		return cw, ch
	}
	draw := func() error {
		cw, ch := size()
		return renderFrame(out, w.Frame(cw, ch, w.src.Now()))
	}
	poll := time.NewTicker(PollInterval)
	defer poll.Stop()
	tick := time.NewTicker(tickInterval)
	defer tick.Stop()
	tip := ""
	check := func() bool {
		t, err := w.src.Tip(w.feature)
		if err != nil {
			w.SetSnapshot(nil, err)
			return true
		}
		if t == tip && w.snap != nil && w.snap.Feature == w.feature {
			return false
		}
		sn, err := w.src.Snapshot(w.feature)
		if err == nil {
			tip = t
		}
		w.SetSnapshot(sn, err)
		return true
	}
	// A large feature read cold takes a moment: say so meanwhile.
	if err := draw(); err != nil {
		return err
	}
	check()
	if err := draw(); err != nil {
		return err
	}
	for {
		redraw := false
		select {
		case <-ctx.Done():
			return nil
		case b, ok := <-keys:
			if !ok {
				return nil
			}
			for _, k := range parseKeys(b) {
				if w.Key(k) {
					return nil
				}
			}
			redraw = true
		case <-winch:
			redraw = true
		case err := <-syncs:
			w.SetSync(err, w.src.Now())
			redraw = true
		case <-poll.C:
			redraw = check()
		case <-tick.C:
			w.Tick()
			redraw = true
		}
		if redraw {
			if err := draw(); err != nil {
				return err
			}
		}
	}
}

// runPlain prints the snapshot, and again each time the feature's ref
// moves, until ctx ends: watch's output when it is not a terminal.
func runPlain(ctx context.Context, src *Source, feature string, out io.Writer) error {
	first := true
	var failed error
	src.Poll(ctx, feature, PollInterval, func(sn *Snapshot, err error) {
		if err != nil {
			if failed == nil || failed.Error() != err.Error() {
				fmt.Fprintf(out, "%s: %v\n", src.Now().Format("15:04:05"), err)
			}
			failed = err
			return
		}
		failed = nil
		if !first {
			fmt.Fprintln(out)
		}
		first = false
		WriteText(out, sn, src.Now())
	})
	return nil
}

// keyboard is the terminal a watch reads keys from: stdin, else the
// controlling terminal when stdin is redirected; nil without one.
func keyboard(stdin io.Reader) *os.File {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return f
	}
	f, err := os.Open("/dev/tty")
	if err != nil {
		return nil
	}
	if !term.IsTerminal(int(f.Fd())) {
		f.Close()
		return nil
	}
	return f
}
