// Package demo is git-zerg's built-in demo: a sample repository with a
// small task graph, and the scripted worker that does what each task asks,
// like a well-behaved agent would, so that a real rush runs with no agent
// to set up.
package demo

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gitstore"
)

// Feature is the demo graph's feature.
const Feature = "greeter"

// task is a task of the demo graph, with what the scripted worker does.
type task struct {
	ID           string            `json:"id"`
	Title        string            `json:"title"`
	Description  string            `json:"description"`
	Files        map[string]any    `json:"files"`
	Dependencies []string          `json:"dependencies"`
	Verification map[string]any    `json:"verification"`
	Demo         map[string]string `json:"demo,omitempty"` // path -> content the worker writes
	FlakyOnce    bool              `json:"demo_flaky_once,omitempty"`
}

// Graph is the demo's task graph: two small shell libraries, the commands
// that use them, docs and tests, on three levels; CLI-2 fails its first
// attempt to show a retry.
func Graph() map[string]any {
	files := func(create ...string) map[string]any { return map[string]any{"create": create} }
	ver := func(cmd string) map[string]any { return map[string]any{"command": cmd, "timeout_seconds": 30} }
	tasks := []task{
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
	return map[string]any{"feature": Feature, "version": "1.0", "tasks": tasks}
}

const config = `# The demo's configuration: see git zerg init for every key.
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

// Explore are the commands that show what the demo left in git, to run in
// its repository.
var Explore = []string{
	"git log --oneline --graph zerg/greeter/staging",
	"git zerg log",
	"git log --format='%h %s' refs/zerg/features/greeter",
	"git show refs/zerg/features/greeter:tasks/",
}

// Setup creates the sample repository in dir (a new temporary directory
// when ""), which must not exist or be empty, for a rush of workers
// workers, and returns its absolute path. Its workers are this executable
// run as `demo-worker`.
func Setup(dir string, workers int) (string, error) {
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "zerg-demo-"); err != nil {
			return "", err
		}
	} else if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return "", &engine.Error{Kind: engine.Usage, What: fmt.Sprintf("demo: %s is not empty", dir)}
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	// Under `go run` this binary is deleted when the demo ends: the demo
	// repository keeps a copy, so that its rush can be run again.
	var keep string
	if strings.Contains(self, string(filepath.Separator)+"go-build") {
		keep, self = self, gitstore.LayoutOf(filepath.Join(dir, ".git")).DemoBinary()
	}
	graph, _ := json.MarshalIndent(Graph(), "", "  ")
	quoted := strconv.Quote(self)
	files := map[string]string{
		"README.md":  "# greeter\n\nA sample repository for the git-zerg demo.\n",
		".gitignore": ".zerg-worktrees/\n",
		".gsd/specs/" + Feature + "/task-graph.json": string(graph) + "\n",
		".zerg/config.toml":                          fmt.Sprintf(config, workers, quoted[1:len(quoted)-1]),
	}
	for name, content := range files {
		if err := writeFile(filepath.Join(dir, name), content, 0o644); err != nil {
			return "", err
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
			return "", fmt.Errorf("git %s: %v: %s", strings.Join(a, " "), err, out)
		}
	}
	if keep != "" {
		b, err := os.ReadFile(keep)
		if err != nil {
			return "", err
		}
		if err := writeFile(self, string(b), 0o755); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func writeFile(path, content string, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), mode)
}
