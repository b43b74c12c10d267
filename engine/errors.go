package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/gitstore/remotes"
	"github.com/git-zerg/git-zerg/hooks"
)

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

// UsageError is an error of kind Usage whose What is formatted.
func UsageError(what string, args ...any) *Error {
	return &Error{Kind: Usage, What: fmt.Sprintf(what, args...)}
}

// RefusedError is an error of kind Refused.
func RefusedError(what, why string) *Error { return &Error{Kind: Refused, What: what, Why: why} }

// FailedError is an error of kind Failed.
func FailedError(what, why string) *Error { return &Error{Kind: Failed, What: what, Why: why} }

// NotPlanned is the error for a feature that has no state.
func NotPlanned(feature string) error {
	return &Error{Kind: Usage, What: fmt.Sprintf("feature %q is not planned", feature), Hint: "git zerg features lists the planned ones"}
}

// noTask is the error for a task id the feature does not have.
func noTask(feature, id string) error { return UsageError("no task %q in feature %s", id, feature) }

// Classify is err as an Error for people: itself when it is one, else by
// what it is (a gate's refusal, a hook's, a state error, a git failure),
// else a failure saying err.
func Classify(err error) *Error {
	var ref *gates.Refusal
	var ge *gitcmd.Error
	var ee *Error
	var hr *hooks.Refusal
	var hi *hooks.InputError
	var re *remotes.RemoteError
	var de *gitstore.DamagedError
	switch {
	case errors.As(err, &ee):
		return ee
	case errors.As(err, &de):
		return &Error{Kind: Failed, What: de.What(), Why: de.Why(), Hint: de.Hint()}
	case errors.Is(err, gitstore.ErrMissingObject):
		return &Error{Kind: Failed, What: err.Error(), Why: "an object is missing from the repository",
			Hint: "git zerg fsck says which state is damaged and how to restore it"}
	case errors.As(err, &hi):
		return &Error{Kind: Usage, What: err.Error()}
	case errors.As(err, &hr):
		return &Error{Kind: Failed, What: hr.What, Why: hr.Why, Hint: hr.Hint}
	case errors.As(err, &ref):
		what := ref.Op
		if ref.Task != "" {
			what += " " + ref.Task
		}
		return &Error{Kind: Refused, What: what + " refused", Why: strings.Join(ref.Reasons, "; ")}
	case errors.Is(err, gitstore.ErrNotRepo):
		return &Error{Kind: Usage, What: "not in a git repository", Why: err.Error()}
	case errors.Is(err, gitstore.ErrNotFound):
		return &Error{Kind: Usage, What: err.Error()}
	case errors.Is(err, gitstore.ErrExists):
		return &Error{Kind: Refused, What: err.Error(), Hint: "use --force to replace it"}
	case errors.Is(err, gitstore.ErrContention):
		return &Error{Kind: Refused, What: "state update lost", Why: err.Error()}
	case errors.As(err, &re):
		return &Error{Kind: Failed, What: re.What(), Why: re.Reason()}
	case errors.As(err, &ge):
		return &Error{Kind: Failed, What: "git failed", Why: ge.Error()}
	}
	return &Error{Kind: Failed, What: err.Error()}
}

// OpenStore opens the repository around dir; outside one it is a usage
// error that says where to run.
func OpenStore(ctx context.Context, dir string) (*gitstore.Store, error) {
	s, err := gitstore.Open(ctx, dir)
	if errors.Is(err, gitstore.ErrNotRepo) {
		return nil, &Error{Kind: Usage, What: "not in a git repository", Why: dir,
			Hint: "run git zerg inside a repository, or give -C DIR", Err: err}
	}
	return s, err
}

// CheckWorkTree refuses a bare repository to the command named, which
// works in a work tree.
func CheckWorkTree(s *gitstore.Store, name string) error {
	if s.Top != "" {
		return nil
	}
	return &Error{Kind: Usage, What: name + " needs a work tree (this is a bare repository)",
		Hint: "run it in a clone: git clone " + s.GitDir + " DIR"}
}
