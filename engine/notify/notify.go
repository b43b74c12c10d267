// Package notify runs notify.command on the events of a rush people want
// to hear of. It takes engine's events as a sink, so engine, which only
// emits them, knows nothing of it.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/proc"
	"github.com/git-zerg/git-zerg/state"
)

// Notification is what notify.command gets on stdin, one JSON object per
// run. The event names are stable: task-blocked, escalation, level-merged,
// budget-reached, rush-ended.
type Notification struct {
	Event   string    `json:"event"`
	At      time.Time `json:"at"`
	Feature string    `json:"feature"`
	Task    string    `json:"task,omitempty"`
	Level   int       `json:"level,omitempty"`
	Reason  string    `json:"reason,omitempty"`
	Text    string    `json:"text,omitempty"`
}

// notification is the notify event of an engine event, if it has one.
func notification(ev engine.Event) (Notification, bool) {
	n := Notification{At: ev.At.UTC(), Feature: ev.Feature, Task: ev.Task, Level: ev.Level, Reason: ev.Reason, Text: ev.Text}
	switch {
	case ev.Type == engine.EvTransition && ev.Status == state.Blocked && strings.HasPrefix(ev.Reason, "escalation"):
		n.Event = "escalation"
	case ev.Type == engine.EvTransition && ev.Status == state.Blocked:
		n.Event = "task-blocked"
	case ev.Type == engine.EvLevelMerged:
		n.Event = "level-merged"
	case ev.Type == engine.EvBudget:
		n.Event = "budget-reached"
	case ev.Type == engine.EvRushEnd:
		n.Event = "rush-ended"
	default:
		return n, false
	}
	return n, true
}

// notifyTimeout bounds one run of notify.command: a hook that hangs must
// not hold the rush.
const notifyTimeout = 30 * time.Second

// Notifier runs command for the events people want to hear of, in the
// order they happen, without holding up whoever emits them. Wait, at the
// end, lets the last ones finish (each bounded by notifyTimeout).
type Notifier struct {
	command string
	mu      sync.Mutex
	queue   []Notification
	running bool
	idle    *sync.Cond
	// Failed is told of a notification that could not be delivered.
	Failed func(n Notification, why string)
}

// New is a notifier for command; nil when command is empty.
func New(command string) *Notifier {
	if strings.TrimSpace(command) == "" {
		return nil
	}
	n := &Notifier{command: command}
	n.idle = sync.NewCond(&n.mu)
	return n
}

// Sink wraps next: every event goes on to next, and those worth a
// notification are queued.
func (n *Notifier) Sink(next engine.Sink) engine.Sink {
	return func(ev engine.Event) {
		if next != nil {
			next(ev)
		}
		if note, ok := notification(ev); ok {
			n.mu.Lock()
			n.queue = append(n.queue, note)
			if !n.running {
				n.running = true
				go n.drain()
			}
			n.mu.Unlock()
		}
	}
}

func (n *Notifier) drain() {
	n.mu.Lock()
	for len(n.queue) > 0 {
		note := n.queue[0]
		n.queue = n.queue[1:]
		n.mu.Unlock()
		n.deliver(note)
		n.mu.Lock()
	}
	n.running = false
	n.idle.Broadcast()
	n.mu.Unlock()
}

func (n *Notifier) deliver(note Notification) {
	b, _ := json.Marshal(note)
	res, err := proc.Run(context.Background(), proc.Spec{Command: n.command, Stdin: bytes.NewReader(append(b, '\n')),
		Timeout: notifyTimeout, Env: []string{"ZERG_EVENT=" + note.Event, "ZERG_FEATURE=" + note.Feature}})
	why := ""
	switch {
	case err != nil:
		why = err.Error()
	case res.TimedOut:
		why = "timed out"
	case res.ExitCode != 0:
		why = "exit " + strconv.Itoa(res.ExitCode) + ": " + proc.LastLines(res.Tail, 2)
	}
	if why != "" && n.Failed != nil {
		n.Failed(note, why)
	}
}

// Wait returns once every queued notification was delivered.
func (n *Notifier) Wait() {
	if n == nil {
		return
	}
	n.mu.Lock()
	for n.running {
		n.idle.Wait()
	}
	n.mu.Unlock()
}
