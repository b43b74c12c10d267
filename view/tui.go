package view

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/git-zerg/git-zerg/state"
)

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
