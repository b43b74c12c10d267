// Package prompt renders what a worker is told about its task. The default
// template says everything a worker needs and nothing it could take as a
// permission: which files it may change, what the tool will run to check
// it, and how to hand the work back. `.zerg/prompt.tmpl` overrides it.
package prompt

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"text/template"

	"github.com/git-zerg/git-zerg/levels"
)

//go:embed default.tmpl
var defaultTemplate string

// Data is what a template sees.
type Data struct {
	Feature  string
	Worker   string
	Level    int
	Attempt  int
	Mode     string // "worktree" (rush) or "shared" (task mode: one checkout)
	Worktree string
	Branch   string
	Task     *levels.Task
	// Done is what the task's finished dependencies did: their commits,
	// the files they changed and the notes their workers left.
	Done []Dep
	// NoteFile is where the worker may leave a note for the tasks that
	// depend on its task ("" when notes are not kept).
	NoteFile string
	// NoCommit: the worker's agent cannot commit where it runs (Codex's
	// sandbox), so it is not asked to; git-zerg commits what it leaves.
	NoCommit bool
}

// Dep is a finished dependency, as the prompt tells it.
type Dep struct {
	ID, Title string
	Subjects  []string // its commits' subjects
	Files     []string // the files it changed
	Note      string   // what its worker left for the tasks after it
}

// Template is a parsed prompt template.
type Template struct{ t *template.Template }

// builtIn returns the built-in template.
func builtIn() *Template {
	return &Template{template.Must(template.New("prompt").Parse(defaultTemplate))}
}

// Load returns the template at path, or the default when the file does not
// exist.
func Load(path string) (*Template, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return builtIn(), nil
	}
	if err != nil {
		return nil, err
	}
	t, err := template.New("prompt").Option("missingkey=error").Parse(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Template{t}, nil
}

// Render renders the prompt for one task.
func (t *Template) Render(d Data) (string, error) {
	var buf bytes.Buffer
	if err := t.t.Execute(&buf, d); err != nil {
		return "", err
	}
	return buf.String(), nil
}
