package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
)

type demoOptions struct {
	dir     string
	workers int
}

func demoCmd(e *env) *cli.Command {
	var o demoOptions
	return &cli.Command{
		Name:      "demo",
		Usage:     "create a sample repository and run a real rush on it with a scripted worker",
		ArgsUsage: "[DIR]",
		Description: "DIR (default: a new directory under the system's temporary directory) must not exist\n" +
			"or be empty. The worker is git-zerg itself (`git zerg demo-worker`), writing the files each\n" +
			"task asks for; one task fails on its first attempt to show a retry. No AI account needed.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "workers", Aliases: []string{"n"}, Value: 3, Usage: "parallel workers", Destination: &o.workers},
		},
		Action: func(c *cli.Context) error {
			a, err := args(c, 0, 1)
			if err != nil {
				return err
			}
			if len(a) == 1 {
				o.dir = a[0]
			}
			return runDemo(e, &o)
		},
	}
}

// demoWorkerCmd is the scripted worker of the demo: it does what the task
// file says (the "demo" key of each task lists the files to write), like a
// well-behaved agent would, and nothing else.
func demoWorkerCmd(e *env) *cli.Command {
	return &cli.Command{
		Name:   "demo-worker",
		Usage:  "the demo's scripted worker (run by rush)",
		Hidden: true,
		Action: func(c *cli.Context) error { return runDemoWorker(e) },
	}
}

type demoTask struct {
	ID           string            `json:"id"`
	Title        string            `json:"title"`
	Description  string            `json:"description"`
	Files        map[string]any    `json:"files"`
	Dependencies []string          `json:"dependencies"`
	Verification map[string]any    `json:"verification"`
	Demo         map[string]string `json:"demo,omitempty"` // path -> content the worker writes
	FlakyOnce    bool              `json:"demo_flaky_once,omitempty"`
}

func demoGraph() map[string]any {
	files := func(create ...string) map[string]any { return map[string]any{"create": create} }
	ver := func(cmd string) map[string]any { return map[string]any{"command": cmd, "timeout_seconds": 30} }
	tasks := []demoTask{
		{ID: "GREET-1", Title: "Greeting library", Description: "A shell function that greets someone.",
			Files: files("lib/greet.sh"), Verification: ver(`sh -c '. lib/greet.sh && test "$(greet Ada)" = "Hello, Ada!"'`),
			Demo: map[string]string{"lib/greet.sh": "greet() { echo \"Hello, $1!\"; }\n"}},
		{ID: "GREET-2", Title: "Farewell library", Description: "A shell function that says goodbye.",
			Files: files("lib/farewell.sh"), Verification: ver(`sh -c '. lib/farewell.sh && test "$(farewell Ada)" = "Goodbye, Ada."'`),
			Demo: map[string]string{"lib/farewell.sh": "farewell() { echo \"Goodbye, $1.\"; }\n"}},
		{ID: "DOCS-1", Title: "Usage notes", Description: "Document the two commands.",
			Files: files("docs/usage.md"), Verification: ver("grep -q hello docs/usage.md"),
			Demo: map[string]string{"docs/usage.md": "# Usage\n\n    bin/hello NAME\n    bin/bye NAME\n"}},
		{ID: "CLI-1", Title: "hello command", Dependencies: []string{"GREET-1"},
			Files: files("bin/hello"), Verification: ver(`test "$(sh bin/hello Bob)" = "Hello, Bob!"`),
			Demo: map[string]string{"bin/hello": ". \"$(dirname \"$0\")/../lib/greet.sh\"\ngreet \"$1\"\n"}},
		{ID: "CLI-2", Title: "bye command", Dependencies: []string{"GREET-2"}, FlakyOnce: true,
			Files: files("bin/bye"), Verification: ver(`test "$(sh bin/bye Bob)" = "Goodbye, Bob."`),
			Demo: map[string]string{"bin/bye": ". \"$(dirname \"$0\")/../lib/farewell.sh\"\nfarewell \"$1\"\n"}},
		{ID: "TEST-1", Title: "End-to-end test", Dependencies: []string{"CLI-1", "CLI-2"},
			Files: files("test.sh"), Verification: ver("sh test.sh"),
			Demo: map[string]string{"test.sh": "set -e\ntest \"$(sh bin/hello Zerg)\" = \"Hello, Zerg!\"\ntest \"$(sh bin/bye Zerg)\" = \"Goodbye, Zerg.\"\necho ok\n"}},
		{ID: "CHECK-1", Title: "Docs mention every command", Dependencies: []string{"TEST-1", "DOCS-1"},
			Files: map[string]any{"read": []string{"docs/usage.md"}}, Verification: ver("grep -q bye docs/usage.md")},
	}
	return map[string]any{"feature": "greeter", "version": "1.0", "tasks": tasks}
}

const demoConfig = `# The demo's configuration: see git zerg init for every key.
[workers]
count = %d
command = "%s demo-worker"
timeout = "2m"

[retry]
max_attempts = 3
backoff = "200ms"

[[gates]]
name = "test"
command = "test ! -f test.sh || sh test.sh"

# Inside the demo's directory (and ignored), so that the demo keeps
# everything in one place; by default worktrees go beside the repository.
[worktrees]
root = ".zerg-worktrees"
`

func runDemo(e *env, o *demoOptions) error {
	if o.workers < 1 {
		return usageErr("demo: --workers must be at least 1")
	}
	dir := o.dir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "zerg-demo-"); err != nil {
			return err
		}
	} else if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return usageErr("demo: %s is not empty", dir)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// Under `go run` this binary is deleted when the demo ends: the demo
	// repository keeps a copy, so that its rush can be run again.
	var keep string
	if strings.Contains(self, string(filepath.Separator)+"go-build") {
		keep, self = self, filepath.Join(dir, ".git", "zerg", "bin", "git-zerg")
	}
	graph, _ := json.MarshalIndent(demoGraph(), "", "  ")
	files := map[string]string{
		"README.md":                          "# greeter\n\nA sample repository for the git-zerg demo.\n",
		".gitignore":                         ".zerg-worktrees/\n",
		".gsd/specs/greeter/task-graph.json": string(graph) + "\n",
		".zerg/config.toml":                  fmt.Sprintf(demoConfig, o.workers, strconv.Quote(self)[1:len(strconv.Quote(self))-1]),
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	// The sample repository gets an identity of its own, so the demo runs
	// on a machine where git was never configured.
	for _, a := range [][]string{
		{"init", "-q", "-b", "main"},
		{"config", "user.name", "git-zerg demo"},
		{"config", "user.email", "demo@git-zerg.invalid"},
		{"add", "-A"},
		{"commit", "-q", "-m", "greeter: task graph and configuration"},
	} {
		cmd := exec.Command("git", a...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", strings.Join(a, " "), err, out)
		}
	}
	if keep != "" {
		if err := copyExecutable(keep, self); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.stderr, "demo repository: %s\n\n", dir)
	sub := func(args ...string) int {
		return Main(append([]string{"git-zerg", "-C", dir}, args...), e.stdin, e.stdout, e.stderr)
	}
	if code := sub("plan"); code != 0 {
		return &cliError{code: code, what: "demo: plan failed"}
	}
	fmt.Fprintln(e.stderr)
	code := sub("rush", "--workers", strconv.Itoa(o.workers))
	fmt.Fprintln(e.stdout)
	sub("dag")
	fmt.Fprintf(e.stdout, "\nEverything is in git:\n")
	for _, c := range []string{
		"git log --oneline --graph zerg/greeter/staging",
		"git zerg log",
		"git log --format='%h %s' refs/zerg/features/greeter",
		"git show refs/zerg/features/greeter:tasks/",
	} {
		fmt.Fprintf(e.stdout, "  (cd %s && %s)\n", dir, c)
	}
	if code != 0 {
		return &cliError{code: code, what: "demo: the rush did not complete"}
	}
	return nil
}

func copyExecutable(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}

func runDemoWorker(e *env) error {
	b, err := os.ReadFile(os.Getenv("ZERG_TASK_FILE"))
	if err != nil {
		return usageErr("demo-worker runs under git zerg rush (ZERG_TASK_FILE: %v)", err)
	}
	var t demoTask
	if err := json.Unmarshal(b, &t); err != nil {
		return err
	}
	// Look busy for a moment, as a real worker would, so the parallelism shows.
	time.Sleep(time.Duration(150+rand.IntN(350)) * time.Millisecond)
	if t.FlakyOnce && os.Getenv("ZERG_ATTEMPT") == "1" {
		fmt.Fprintf(e.stderr, "%s: flaky on purpose: the first attempt fails\n", t.ID)
		return failed(t.ID+": simulated failure", "")
	}
	for path, content := range t.Demo {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	// Half the tasks commit their own work; the other half leave it for the
	// tool to commit, as real agents sometimes do.
	if len(t.Demo) > 0 && len(t.ID)%2 == 0 {
		cmd := exec.Command("git", "add", "-A")
		if err := cmd.Run(); err != nil {
			return err
		}
		cmd = exec.Command("git", "commit", "-q", "-m", t.ID+": "+t.Title)
		cmd.Stdout, cmd.Stderr = e.stderr, e.stderr
		if err := cmd.Run(); err != nil {
			return err
		}
	}
	return nil
}
