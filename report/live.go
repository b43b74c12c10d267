package report

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/printable"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
)

// Live prints a rush as it goes: a line per transition and a table per
// level. On a terminal (tty), a live line under them shows the level's
// progress bar, what is running and for how long; it is redrawn in place
// and never reaches a log file.
type Live struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	start time.Time
	live  string // the live line currently drawn, "" when none
}

// NewLive prints a rush's progress on w, a terminal when tty.
func NewLive(w io.Writer, tty bool) *Live {
	return &Live{w: w, tty: tty, start: time.Now()}
}

func (p *Live) stamp() string {
	return fmt.Sprintf("[%6.1fs]", time.Since(p.start).Seconds())
}

// println prints a line above the live line.
func (p *Live) println(line string) {
	if p.live != "" {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintln(p.w, printable.String(line))
	if p.live != "" {
		fmt.Fprint(p.w, p.live)
	}
}

func (p *Live) transition(task, what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.println(fmt.Sprintf("%s %s %s", p.stamp(), task, what))
}

func (p *Live) Note(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.println(fmt.Sprintf("%s %s", p.stamp(), fmt.Sprintf(format, args...)))
}

// update redraws the live line (on a terminal only).
func (p *Live) update(level int, tasks []*state.Task) {
	if !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	total, settled := 0, 0
	var running []string
	now := time.Now()
	for _, t := range tasks {
		if level != 0 && t.Level != level {
			continue // level 0: the whole feature, as a flow rush runs it
		}
		total++
		switch {
		case t.Status.AtRest():
			settled++
		case t.Status == state.Claimed:
			since := now
			if n := len(t.History); n > 0 {
				since = t.History[n-1].At
			}
			running = append(running, fmt.Sprintf("%s %s", t.ID(), words.Duration(now.Sub(since))))
		}
	}
	const width = 20
	filled := 0
	if total > 0 {
		filled = settled * width / total
	}
	bar := strings.Repeat("█", filled) + strings.Repeat("░", width-filled)
	what := fmt.Sprintf("level %d", level)
	if level == 0 {
		what = "tasks"
	}
	line := fmt.Sprintf("%s %s %d/%d", what, bar, settled, total)
	if len(running) > 0 {
		line += " · running: " + strings.Join(running, ", ")
	}
	if r := []rune(line); len(r) > 120 {
		line = string(r[:117]) + "..."
	}
	fmt.Fprint(p.w, "\r\033[K"+line)
	p.live = line
}

// clearLive removes the live line, before a table or the final summary.
func (p *Live) clearLive() {
	if p.live != "" {
		fmt.Fprint(p.w, "\r\033[K")
		p.live = ""
	}
}

func (p *Live) levelTable(level int, tasks []*state.Task) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLive()
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "level %d\tstatus\tattempts\tcommit\n", level)
	for _, t := range tasks {
		if t.Level != level {
			continue
		}
		extra := words.ShortHash(t.Commit)
		if t.Status.Stopped() {
			extra = printable.String(t.Reason)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\n", printable.String(t.ID()), printable.String(string(t.Status)), t.Attempts, extra)
	}
	tw.Flush()
}

// Event renders one of the engine's events.
func (p *Live) Event(ev engine.Event) {
	switch ev.Type {
	case engine.EvTransition:
		p.transition(ev.Task, ev.Text)
	case engine.EvProgress:
		p.update(ev.Level, ev.Tasks)
	case engine.EvLevelEnd:
		p.levelTable(ev.Level, ev.Tasks)
	case engine.EvLevelMerged:
		p.Note("level %d merged: staging at %s", ev.Level, words.ShortHash(ev.Text))
	case engine.EvRushEnd:
		p.mu.Lock()
		p.clearLive()
		p.mu.Unlock()
	default:
		p.Note("%s", ev.Text)
	}
}
