package engine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-zerg/git-zerg/levels"
)

// GraphError is an invalid task graph. Its problems are the caller's to
// show, one a line with their place, before this one-line error.
type GraphError struct {
	File           string
	Errs, Warnings []levels.Problem
	Strict         bool
	// Misspelt: the errors are all keys that look misspelt, which plan
	// --force takes as they are.
	Misspelt bool
}

func (g *GraphError) Error() string {
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
func (g *GraphError) hint() string {
	if g.Misspelt && !g.Strict {
		return "fix the keys, or plan --force to plan them as they are (not read)"
	}
	return ""
}

// As makes an invalid graph a usage error wherever errors are told apart
// by kind: the graph is the user's input, and nothing was written.
func (g *GraphError) As(target any) bool {
	e, ok := target.(**Error)
	if !ok {
		return false
	}
	*e = &Error{Kind: Usage, What: g.Error(), Hint: g.hint()}
	return true
}

// GraphFile finds the task graph: the file given, else the feature's
// .gsd/specs/<feature>/task-graph.json under base, else the only graph
// under .gsd/specs.
func GraphFile(base, file, feature string) (string, error) {
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
		return "", &Error{Kind: Usage, What: "no task graph given", Why: "none under .gsd/specs/*/task-graph.json",
			Hint: "give the file: git zerg validate FILE"}
	}
	return "", &Error{Kind: Usage, What: "several task graphs under .gsd/specs", Why: strings.Join(found, ", "),
		Hint: "name one with -f FEATURE or give the file"}
}

// GraphName is how messages name the graph file; "-" is standard input.
func GraphName(file string) string {
	if file == "-" {
		return "<stdin>"
	}
	return file
}

// CheckGraph reads a graph file ("-": stdin), validates and levels it. err
// is an unreadable file, or a *GraphError when errs is not empty (or warns,
// when strict). With namesFeature the graph's "feature" must be a usable
// feature name, since no other name will be given.
func CheckGraph(stdin io.Reader, file string, strict, namesFeature, keepMisspelt bool) (plan *levels.Plan, errs, warns []levels.Problem, err error) {
	var data []byte
	if file == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	file = GraphName(file)
	if err != nil {
		why := err.Error()
		if errors.Is(err, fs.ErrNotExist) {
			why = "no such file"
		}
		return nil, nil, nil, &Error{Kind: Usage, What: "cannot read task graph " + file, Why: why}
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
		return plan, errs, warns, &GraphError{File: file, Errs: errs, Warnings: warns, Strict: strict, Misspelt: misspelt}
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

// CheckFeatureName is the usage error for a name levels.ValidFeatureName
// refuses; its message already names the name, so it is said once.
func CheckFeatureName(name string) error {
	err := levels.ValidFeatureName(name)
	if err == nil {
		return nil
	}
	return &Error{Kind: Usage, What: fmt.Sprintf("bad feature name %q", name), Why: nameProblem(err)}
}

// nameProblem is why levels refused a feature name, without the name, for
// a message that names it already. An empty name has nothing to name, so
// its whole sentence is kept.
func nameProblem(err error) string {
	var ne *levels.NameError
	if errors.As(err, &ne) && ne.Name != "" {
		return ne.Problem
	}
	return err.Error()
}
