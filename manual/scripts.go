package manual

import (
	"embed"
	"slices"
	"strings"
	"text/template"
)

// shells are the shells Script writes for.
var shells = []string{"bash", "fish", "zsh"}

//go:embed scripts
var scripts embed.FS

// Script is the completion script of shell for the git subcommand name
// (git-NAME, run as `git NAME`); ok is false for a shell it does not know.
func Script(shell, name string) (script string, ok bool) {
	if !slices.Contains(shells, shell) {
		return "", false
	}
	t, err := template.ParseFS(scripts, "scripts/"+shell)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	if err := t.Execute(&b, name); err != nil {
		return "", false
	}
	return b.String(), true
}
