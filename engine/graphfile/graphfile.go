// Package graphfile finds the task graph a command is given, reads it and
// checks it: every problem with its place, and the one-line error of an
// invalid graph, a usage error wherever errors are told apart by kind.
package graphfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/levels"
)

// Error is an invalid task graph. Its problems are the caller's to
// show, one a line with their place, before this one-line error.
type Error struct {
	File           string
	Errs, Warnings []levels.Problem
	Strict         bool
	// Misspelt: the errors are all keys that look misspelt, which plan
	// --force takes as they are.
	Misspelt bool
}

func (g *Error) Error() string {
	n := len(g.Errs)
	what := "errors"
	if n == 1 {
		what = "error"
	}
	if g.Strict && len(g.Warnings) > 0 {
		return fmt.Sprintf("invalid task graph %s (%d %s, %d warnings under --strict)", g.File, n, what, len(g.Warnings))
	}
	return fmt.Sprintf("invalid task graph %s (%d %s)", g.File, n, what)
}

// hint is what to do about a graph refused for misspelt keys.
func (g *Error) hint() string {
	if g.Misspelt && !g.Strict {
		return "fix the keys, or plan --force to plan them as they are (not read)"
	}
	return ""
}

// As makes an invalid graph a usage error wherever errors are told apart
// by kind: the graph is the user's input, and nothing was written.
func (g *Error) As(target any) bool {
	e, ok := target.(**engine.Error)
	if !ok {
		return false
	}
	*e = &engine.Error{Kind: engine.Usage, What: g.Error(), Hint: g.hint()}
	return true
}

// Find finds the task graph: the file given, else the feature's
// .gsd/specs/<feature>/task-graph.json under base, else the only graph
// under .gsd/specs.
func Find(base, file, feature string) (string, error) {
	if file != "" {
		return file, nil
	}
	if feature != "" {
		return filepath.Join(base, ".gsd", "specs", feature, "task-graph.json"), nil
	}
	found, _ := filepath.Glob(filepath.Join(base, ".gsd", "specs", "*", "task-graph.json"))
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", &engine.Error{Kind: engine.Usage, What: "no task graph given", Why: "none under .gsd/specs/*/task-graph.json",
			Hint: "give the file: git zerg validate FILE"}
	}
	return "", &engine.Error{Kind: engine.Usage, What: "several task graphs under .gsd/specs", Why: strings.Join(found, ", "),
		Hint: "name one with -f FEATURE or give the file"}
}

// Name is how messages name the graph file; "-" is standard input.
func Name(file string) string {
	if file == "-" {
		return "<stdin>"
	}
	return file
}

// Check reads a graph file ("-": stdin), validates and levels it. err
// is an unreadable file, or an *Error when errs is not empty (or warns,
// when strict). With namesFeature the graph's "feature" must be a usable
// feature name, since no other name will be given.
func Check(stdin io.Reader, file string, strict, namesFeature, keepMisspelt bool) (plan *levels.Plan, errs, warns []levels.Problem, err error) {
	var data []byte
	if file == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	file = Name(file)
	if err != nil {
		why := err.Error()
		if errors.Is(err, fs.ErrNotExist) {
			why = "no such file"
		}
		return nil, nil, nil, &engine.Error{Kind: engine.Usage, What: "cannot read task graph " + file, Why: why}
	}
	plan, errs, warns = levels.Check(data)
	if namesFeature {
		errs, warns = featureNameError(errs, warns)
	}
	misspelt := false
	if !keepMisspelt {
		n := len(errs)
		errs, warns = levels.MisspeltErrors(errs, warns)
		misspelt = n == 0 && len(errs) > 0
	}
	if len(errs) > 0 || (strict && len(warns) > 0) {
		return plan, errs, warns, &Error{File: file, Errs: errs, Warnings: warns, Strict: strict, Misspelt: misspelt}
	}
	return plan, errs, warns, nil
}

// featureNameError makes the warning about an unusable feature name an
// error. levels warns only, because plan FEATURE can name it otherwise.
func featureNameError(errs, warnings []levels.Problem) ([]levels.Problem, []levels.Problem) {
	keep := warnings[:0:0]
	var moved []levels.Problem
	for _, w := range warnings {
		if w.Place == "feature" {
			moved = append(moved, w)
		} else {
			keep = append(keep, w)
		}
	}
	if len(moved) == 0 {
		return errs, warnings
	}
	// Top-level problems come first, as levels orders them.
	return append(moved, errs...), keep
}
