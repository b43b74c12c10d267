package cmdline

import (
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Pager sends what a command prints to the terminal stdout is through the
// pager git would use in dir (`git var GIT_PAGER`: GIT_PAGER, core.pager,
// PAGER, else less), as git's own log does, with git's LESS=FRX and
// LV=-c when unset: short output prints as it is. With the pager "cat",
// or none that starts, it is stdout itself. done waits for the pager.
func Pager(ctx context.Context, dir string, stdout, stderr io.Writer) (w io.Writer, done func()) {
	nothing := func() {}
	git := exec.CommandContext(ctx, "git", "var", "GIT_PAGER")
	git.Dir = dir
	out, err := git.Output()
	pager := strings.TrimSpace(string(out))
	if err != nil || pager == "" || pager == "cat" {
		return stdout, nothing
	}
	// sh -c, as git runs its pager: the setting is a shell command.
	cmd := exec.Command("sh", "-c", pager)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, stdout, stderr
	cmd.Env = os.Environ()
	for _, kv := range []string{"LESS=FRX", "LV=-c"} {
		if name, _, _ := strings.Cut(kv, "="); os.Getenv(name) == "" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return stdout, nothing
	}
	if err := cmd.Start(); err != nil {
		return stdout, nothing
	}
	return in, func() {
		in.Close()
		cmd.Wait()
	}
}
