package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/printable"
)

// Exit codes: public API, listed in README "Exit codes" and in every
// command's help.
const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	exitRefused = 3
	exitNone    = 4
	// exitInterrupted is a rush stopped by a signal, as a shell reports
	// SIGINT.
	exitInterrupted = 130
)

// cliError is the one error type the CLI prints: one line
// `git-zerg: <what> (<why>)` and, where it helps, a hint line.
type cliError struct {
	code int
	what string
	why  string
	hint string
}

func (e *cliError) Error() string {
	if e.why == "" {
		return e.what
	}
	return e.what + " (" + e.why + ")"
}

func usageErr(what string, args ...any) *cliError {
	return &cliError{code: exitUsage, what: fmt.Sprintf(what, args...)}
}

func failed(what, why string) *cliError {
	return &cliError{code: exitFailed, what: what, why: why}
}

// exitError prints err as one line, `git-zerg: what (why)`, and an
// optional hint line, and returns its code.
// This is the only place where errors become sentences and exit codes.
func exitError(w io.Writer, err error) int {
	var ce *cliError
	if !errors.As(err, &ce) {
		ce = classify(err)
	}
	// Errors quote task ids, reasons and paths that may have come from
	// another machine: one line, and nothing a terminal would act on.
	line := printable.String(strings.ReplaceAll(ce.Error(), "\n", " "))
	fmt.Fprintf(w, "git-zerg: %s\n", line)
	if ce.hint != "" {
		fmt.Fprintf(w, "hint: %s\n", printable.String(ce.hint))
	}
	return ce.code
}

// kindCode is the exit code of each kind of engine error: a switch, not a
// map that every start of the program would build.
func kindCode(k engine.Kind) int {
	switch k {
	case engine.Failed:
		return exitFailed
	case engine.Usage:
		return exitUsage
	case engine.Refused:
		return exitRefused
	case engine.NeedsPerson:
		return exitNone
	case engine.Interrupted:
		return exitInterrupted
	}
	return 0
}

func classify(err error) *cliError {
	ee := engine.Classify(err)
	return &cliError{code: kindCode(ee.Kind), what: ee.What, why: ee.Why, hint: ee.Hint}
}
