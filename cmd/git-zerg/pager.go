package main

import (
	"io"

	"github.com/git-zerg/git-zerg/cmdline"
)

// pager is where a long text goes: git's pager on a terminal, else stdout.
func (e *env) pager() (w io.Writer, done func()) {
	if !e.isTTY {
		return e.stdout, func() {}
	}
	return cmdline.Pager(e.ctx, e.dir, e.stdout, e.stderr)
}
