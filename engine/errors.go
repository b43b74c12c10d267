package engine

import "fmt"

// Kind says what sort of failure an Error is; the command line turns each
// kind into its exit code, and nothing below it knows about exit codes.
type Kind int

const (
	// Failed: the operation ran and failed (a verification, a gate, a rush
	// that ended with blocked tasks).
	Failed Kind = iota + 1
	// Usage: bad input; nothing was written.
	Usage
	// Refused: an illegal transition, a lock held by another owner, a
	// closed gate, a claim lost.
	Refused
	// NeedsPerson: nothing to claim now, or a person must act (an
	// escalation, a budget reached).
	NeedsPerson
	// Interrupted: a rush stopped by a signal, its work saved.
	Interrupted
)

// Error is an engine error meant for people: what happened, why, and what
// to do about it.
type Error struct {
	Kind Kind
	What string
	Why  string
	Hint string
	// Err is the error this one stands for, when callers may look for it.
	Err error
}

func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	if e.Why == "" {
		return e.What
	}
	return e.What + " (" + e.Why + ")"
}

func usageErr(what string, args ...any) *Error {
	return &Error{Kind: Usage, What: fmt.Sprintf(what, args...)}
}

func refused(what, why string) *Error { return &Error{Kind: Refused, What: what, Why: why} }

func failed(what, why string) *Error { return &Error{Kind: Failed, What: what, Why: why} }

// NotPlanned is the error for a feature that has no state.
func NotPlanned(feature string) error {
	return &Error{Kind: Usage, What: fmt.Sprintf("feature %q is not planned", feature), Hint: "git zerg features lists the planned ones"}
}

// NoTask is the error for a task id the feature does not have.
func NoTask(feature, id string) error { return usageErr("no task %q in feature %s", id, feature) }
