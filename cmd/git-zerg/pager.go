package main

import (
	"io"
	"os"
	"os/exec"
	"strings"
)

// pager sends what a command prints to a terminal through the pager git
// would use (`git var GIT_PAGER`: GIT_PAGER, core.pager, PAGER, else less),
// as git's own log does, with git's LESS=FRX and LV=-c when unset: short
// output prints as it is. Not on a terminal, or with the pager "cat", it
// is stdout itself. done waits for the pager to end.
func (e *env) pager() (w io.Writer, done func()) {
	nothing := func() {}
	if !e.isTTY {
		return e.stdout, nothing
	}
	git := exec.CommandContext(e.ctx, "git", "var", "GIT_PAGER")
	git.Dir = e.dir
	out, err := git.Output()
	pager := strings.TrimSpace(string(out))
	if err != nil || pager == "" || pager == "cat" {
		return e.stdout, nothing
	}
	// sh -c, as git runs its pager: the setting is a shell command.
	cmd := exec.Command("sh", "-c", pager)
	cmd.Dir, cmd.Stdout, cmd.Stderr = e.dir, e.stdout, e.stderr
	cmd.Env = os.Environ()
	for _, kv := range []string{"LESS=FRX", "LV=-c"} {
		if name, _, _ := strings.Cut(kv, "="); os.Getenv(name) == "" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return e.stdout, nothing
	}
	if err := cmd.Start(); err != nil {
		return e.stdout, nothing
	}
	return in, func() {
		in.Close()
		cmd.Wait()
	}
}
