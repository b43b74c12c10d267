package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/cmdline"
)

// runAsked runs git-zerg as Main does, but as if stdin were a terminal
// holding answer.
func runAsked(dir, answer string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	e := &env{ctx: context.Background(), stdin: strings.NewReader(answer), stdout: &out, stderr: &errb,
		now: time.Now, inTTY: true}
	app := newApp(e)
	err := app.RunContext(e.ctx, cmdline.Reorder(app, append([]string{"git-zerg", "-C", dir}, args...)))
	if err != nil {
		return exitError(&errb, err), out.String(), errb.String()
	}
	return exitOK, out.String(), errb.String()
}

// On a terminal, plan --accept shows the tasks and trusts them only on a
// yes.
func TestAcceptAsksOnTerminal(t *testing.T) {
	dir := t.TempDir()
	for _, kv := range gitEnv(dir)[len(os.Environ()):] {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("HOME", dir)
	env := gitEnv(dir)
	repo := filepath.Join(dir, "r")
	run(t, dir, env, "git", "init", "-q", "-b", "main", repo)
	run(t, repo, env, "git", "commit", "-q", "--allow-empty", "-m", "initial")
	graph := filepath.Join(dir, "graph.json")
	checkOnlyGraph(t, graph, "f", 2)
	if code, _, errs := zergIn(repo, "plan", "--graph", graph); code != 0 {
		t.Fatal(errs)
	}
	trustFile := filepath.Join(repo, ".git", "zerg", "trusted", "f")
	if err := os.Remove(trustFile); err != nil {
		t.Fatal(err)
	}
	for _, answer := range []string{"", "n\n", "no\n", "yess\n"} {
		code, out, errs := runAsked(repo, answer, "plan", "--accept", "f")
		if code != exitRefused || !strings.Contains(errs, "[y/N]") || !strings.Contains(out, "T0000: new here") || strings.Contains(out, "accepted") {
			t.Fatalf("answer %q: exit %d\n%s%s", answer, code, out, errs)
		}
		if _, err := os.Stat(trustFile); err == nil {
			t.Fatalf("answer %q: the commands were trusted", answer)
		}
	}
	code, out, errs := runAsked(repo, "y\n", "plan", "--accept", "f")
	if code != exitOK || !strings.Contains(out, "accepted 2 tasks (0 changed, 2 new) of f") {
		t.Fatalf("yes: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(trustFile); err != nil {
		t.Fatal(err)
	}
}
