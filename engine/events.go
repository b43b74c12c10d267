package engine

import (
	"time"

	"github.com/git-zerg/git-zerg/state"
)

// EventType names what an Event reports. The names are stable: they reach
// scripts through notify and --json progress.
type EventType string

const (
	// EvNote is a line of progress that is not a task's transition.
	EvNote EventType = "note"
	// EvTransition is a task moving on (claimed, verified, failed, …).
	EvTransition EventType = "transition"
	// EvLevelStart: a level's tasks are about to run.
	EvLevelStart EventType = "level-start"
	// EvProgress: the state of the running level, for a live view.
	EvProgress EventType = "progress"
	// EvLevelEnd: a level settled (merged, or stopped); Tasks holds them all.
	EvLevelEnd EventType = "level-end"
	// EvLevelMerged: a level's verified work is on staging and passed the
	// gates; Text is the staging commit.
	EvLevelMerged EventType = "level-merged"
	// EvBudget: the agents' reported spending reached the budget.
	EvBudget EventType = "budget-reached"
	// EvRushEnd: the rush is over, whatever way it ended; Text says how.
	EvRushEnd EventType = "rush-end"
)

// Event is what the engine reports as it works. The engine never prints:
// the command line, a live view and notify each render events their way.
type Event struct {
	Type    EventType
	At      time.Time
	Feature string
	Level   int
	Task    string
	Text    string
	// Status and Reason, for a transition: where the task went and why.
	Status state.Status
	Reason string
	// Tasks is the feature's state, for the events that describe a level.
	Tasks []*state.Task
}

// Sink receives events. It is called from the rush's goroutines and must
// be safe for concurrent use.
type Sink func(Event)
