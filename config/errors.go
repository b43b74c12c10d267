package config

import (
	"strconv"
	"strings"
)

// Error is one problem in a configuration file.
type Error struct {
	File string
	Line int    // 0 when unknown
	Key  string // e.g. "workers.count" or "gates[1].name"; "" when none applies
	Msg  string
}

// Error reads "FILE:LINE: KEY: MSG", the form editors and terminals turn
// into a link to the offending line.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":")
		b.WriteString(strconv.Itoa(e.Line))
	}
	if e.Key != "" {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
		b.WriteString(e.Key)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in one file, so that a user fixes them all
// in one round rather than one per run.
type Errors []*Error

func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "; ")
}

// Unwrap lets errors.As reach the individual *Error values.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}
