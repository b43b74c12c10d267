package levels

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// idPattern and idNotPattern document what ValidID accepts (with at most
// 64 characters); ValidID itself checks bytes directly because it runs
// for every id and every dependency. The schema carries both patterns, so
// editors apply the same rule. Ids and feature names become components of
// git ref and branch names, hence the rules of git check-ref-format: no
// "..", no "." at either end, no ".lock" at the end.
const (
	idPattern    = `^[A-Za-z0-9](?:[A-Za-z0-9_-]|\.[A-Za-z0-9_-])*$`
	idNotPattern = `\.lock$`
)

const (
	maxIDLen = 64
	// maxLevel bounds a given level so that a typo like 100000000 cannot
	// make the plan allocate that many empty levels.
	maxLevel = 100000
	// maxCycles bounds the cycles listed; past a few the user has to
	// rethink the graph anyway.
	maxCycles = 20
)

var risks = []string{"low", "medium", "high", "critical"}

// ValidID reports whether id is usable as a task id (or worker name): at
// most 64 letters, digits, '.', '_' and '-', starting with a letter or
// digit, and usable as one component of a git ref name.
func ValidID(id string) bool {
	return validChars(id) && refProblem(id) == ""
}

func validChars(id string) bool {
	if id == "" || len(id) > maxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// refProblem says why s, made of valid characters, still cannot be one
// component of a git ref name, or "". A task id that git refuses would
// only fail once the rush tries to make its branch.
func refProblem(s string) string {
	switch {
	case strings.Contains(s, ".."):
		return `must not contain ".." (git refs cannot)`
	case strings.HasSuffix(s, ".lock"):
		return `must not end in ".lock" (git refs cannot)`
	case strings.HasSuffix(s, "."):
		return `must not end in "." (git refs cannot)`
	}
	return ""
}

// NameError is a name that cannot serve as a feature name. Problem is
// what follows the name in the message ("is too long (...)"), so that a
// caller that has named it already, or names it as something else (an
// epic's name), words the sentence itself instead of editing this one.
type NameError struct {
	Name    string
	Problem string
}

func (e *NameError) Error() string { return e.Describe("feature name") }

// Describe is the message with the name called what ("epic name"). An empty
// name has nothing to quote, so it reads "<what> is empty".
func (e *NameError) Describe(what string) string {
	if e.Name == "" {
		return what + " " + e.Problem
	}
	return fmt.Sprintf("%s %q %s", what, e.Name, e.Problem)
}

// ValidFeatureName checks that name can serve as a feature name: the
// character set of task ids, at most 64 characters, and usable as one
// component of a git ref name, since feature names end up in branch names.
// Its error is a *NameError.
func ValidFeatureName(name string) error {
	if p := featureNameProblem(name); p != "" {
		return &NameError{Name: name, Problem: p}
	}
	return nil
}

func featureNameProblem(name string) string {
	switch {
	case name == "":
		return "is empty"
	case len(name) > maxIDLen:
		return fmt.Sprintf("is too long (%d characters, at most %d)", len(name), maxIDLen)
	case name == "@" || strings.Contains(name, "@{"):
		return "is not allowed in a git ref (\"@\" or \"@{\")"
	case refProblem(name) != "":
		return refProblem(name)
	case !validChars(name):
		return "may only contain letters, digits, '.', '_' and '-', and must start with a letter or digit"
	}
	return ""
}

// commandProblem says why a verification command cannot be run as given,
// or "". A NUL cannot reach a shell at all (the command would fail only
// when a task is done, without a failure recorded), and other control
// characters can rewrite the terminal when the command is shown; tab and
// newline are ordinary in shell scripts.
func commandProblem(cmd string) string {
	for i := 0; i < len(cmd); i++ {
		switch c := cmd[i]; {
		case c == 0:
			return fmt.Sprintf("contains a NUL byte (at byte %d), which no command can hold", i)
		case c == '\t' || c == '\n':
		case c < 0x20 || c == 0x7f:
			return fmt.Sprintf("contains the control character %U (at byte %d); write it as an escape the shell understands, e.g. printf '\\033'", rune(c), i)
		}
	}
	return ""
}

type problems []Problem

func (ps *problems) add(place, format string, args ...any) {
	*ps = append(*ps, Problem{Place: place, Msg: fmt.Sprintf(format, args...)})
}

// validate checks every rule that does not need the JSON text, so that it
// serves both Parse and graphs built in code. Warnings are what does not
// stop a plan: metadata that disagrees with the tasks (ZERG writes counts
// it never checks, and they go stale as a graph is edited) and a feature
// name the caller may replace.
func validate(g *Graph) (errs, warns []Problem) {
	if g == nil {
		return []Problem{{Msg: "no graph"}}, nil
	}
	var ps, ws problems
	// A feature name that cannot be a branch name is only a warning (see
	// build): the caller may name the feature itself.
	if strings.TrimSpace(g.Feature) == "" {
		ps.add("feature", "required")
	} else if err := ValidFeatureName(g.Feature); err != nil {
		ws.add("feature", "%v", err)
	}
	if len(g.Tasks) == 0 {
		ps.add("tasks", "must be a non-empty array of tasks")
	}
	d := &decoder{}
	if raw, ok := g.Extra["total_tasks"]; ok {
		if n, ok := d.integer(raw, "total_tasks"); ok && n != len(g.Tasks) {
			ws.add("total_tasks", "is %d but the graph has %d tasks", n, len(g.Tasks))
		}
	}
	if raw, ok := g.Extra["max_parallelization"]; ok {
		switch n, ok := d.integer(raw, "max_parallelization"); {
		case !ok:
		case n < 1:
			ps.add("max_parallelization", "must be at least 1, got %d", n)
		case n > len(g.Tasks):
			ws.add("max_parallelization", "is %d but the graph has %d tasks", n, len(g.Tasks))
		}
	}
	ps = append(ps, d.probs...)

	first := make(map[string]int, len(g.Tasks))
	for i, t := range g.Tasks {
		if t == nil {
			ps.add(at(i, ""), "missing task")
			continue
		}
		switch {
		case t.ID == "":
			ps.add(at(i, ".id"), "required")
		case len(t.ID) > maxIDLen:
			ps.add(at(i, ".id"), "id %q is too long (%d characters, at most %d)", t.ID, len(t.ID), maxIDLen)
		case !validChars(t.ID):
			ps.add(at(i, ".id"), "invalid id %q: use letters, digits, '.', '_' and '-', starting with a letter or digit", t.ID)
		case refProblem(t.ID) != "":
			ps.add(at(i, ".id"), "invalid id %q: %s", t.ID, refProblem(t.ID))
		}
		if t.ID == "" {
			continue
		}
		if j, dup := first[t.ID]; dup {
			ps.add(at(i, ".id"), "duplicate id %q (first at tasks[%d])", t.ID, j)
		} else {
			first[t.ID] = i
		}
	}

	// Places are built only for problems: a valid graph of 10,000 tasks
	// should not cost 100,000 strings.
	var issues map[int]int // issue number → first task carrying it
	for i, t := range g.Tasks {
		if t == nil {
			continue
		}
		if strings.TrimSpace(t.Title) == "" {
			ps.add(at(i, ".title"), "required")
		}
		if t.Level < 0 {
			ps.add(at(i, ".level"), "must be at least 1, got %d", t.Level)
		} else if t.Level > maxLevel {
			ps.add(at(i, ".level"), "level %d is too high (at most %d)", t.Level, maxLevel)
		}
		checkPaths(&ps, i, "create", t.Files.Create)
		checkPaths(&ps, i, "modify", t.Files.Modify)
		checkPaths(&ps, i, "read", t.Files.Read)
		checkDeps(&ps, i, "dependencies", t.ID, t.Dependencies, first)
		checkDeps(&ps, i, "soft_dependencies", t.ID, t.SoftDependencies, first)
		if t.Risk != "" && !slices.Contains(risks, t.Risk) {
			ps.add(at(i, ".risk"), "invalid risk %q (want low, medium, high or critical)", t.Risk)
		}
		switch {
		case t.Issue < 0:
			ps.add(at(i, ".issue"), "must be an issue number, at least 1, got %d", t.Issue)
		case t.Issue > 0:
			// One issue, one task: the issue names the task's review
			// branch and its "Closes #N" line.
			if issues == nil {
				issues = map[int]int{}
			}
			if j, dup := issues[t.Issue]; dup {
				ps.add(at(i, ".issue"), "issue #%d is already tasks[%d]'s", t.Issue, j)
			} else {
				issues[t.Issue] = i
			}
		}
		if strings.TrimSpace(t.Verification.Command) == "" {
			ps.add(at(i, ".verification.command"), "required")
		} else if msg := commandProblem(t.Verification.Command); msg != "" {
			ps.add(at(i, ".verification.command"), "%s", msg)
		}
		if t.Verification.TimeoutSeconds < 0 {
			ps.add(at(i, ".verification.timeout_seconds"), "must be a positive number of seconds, got %d", t.Verification.TimeoutSeconds)
		}
	}

	ps = append(ps, cycles(g, first)...)
	sortProblems(ps)
	sortProblems(ws)
	return ps, ws
}

// at names a place inside tasks[i].
func at(i int, rest string) string {
	return "tasks[" + strconv.Itoa(i) + "]" + rest
}

func checkPaths(ps *problems, i int, list string, paths []string) {
	for j, p := range paths {
		if msg := checkPath(p); msg != "" {
			ps.add(index(at(i, ".files."+list), j), "%s", msg)
		}
	}
}

func checkDeps(ps *problems, i int, field, self string, deps []string, first map[string]int) {
	for j, dep := range deps {
		switch _, ok := first[dep]; {
		case dep == self && self != "":
			ps.add(index(at(i, "."+field), j), "task depends on itself")
		case !ok:
			ps.add(index(at(i, "."+field), j), "unknown task %q", dep)
		}
	}
}

// cycles reports cycles through hard dependencies, each once, named as the
// path a reader can follow through the file. Every back edge of a depth
// first search closes one cycle, which finds every strongly connected
// tangle without enumerating all of its (possibly exponentially many)
// cycles.
func cycles(g *Graph, first map[string]int) []Problem {
	n := len(g.Tasks)
	adj := make([][]int, n)
	edges := 0
	for _, t := range g.Tasks {
		if t != nil {
			edges += len(t.Dependencies)
		}
	}
	// One backing array for all edges instead of one per task.
	flat := make([]int, 0, edges)
	for i, t := range g.Tasks {
		if t == nil {
			continue
		}
		start := len(flat)
		for _, dep := range t.Dependencies {
			if k, ok := first[dep]; ok && k != i {
				flat = append(flat, k)
			}
		}
		adj[i] = flat[start:len(flat):len(flat)]
	}
	const (
		unseen = iota
		onPath
		done
	)
	state := make([]uint8, n)
	pos := make([]int, n) // index in path while onPath
	type frame struct{ v, next int }
	var (
		path    []frame
		out     []Problem
		seen    = map[string]bool{}
		omitted int
	)
	for s := range n {
		if state[s] != unseen {
			continue
		}
		path = append(path[:0], frame{v: s})
		state[s], pos[s] = onPath, 0
		for len(path) > 0 {
			f := &path[len(path)-1]
			if f.next == len(adj[f.v]) {
				state[f.v] = done
				path = path[:len(path)-1]
				continue
			}
			w := adj[f.v][f.next]
			f.next++
			switch state[w] {
			case unseen:
				state[w], pos[w] = onPath, len(path)
				path = append(path, frame{v: w})
			case onPath:
				cyc := make([]int, 0, len(path)-pos[w])
				for _, fr := range path[pos[w]:] {
					cyc = append(cyc, fr.v)
				}
				// Start at the member that comes first in the file so the
				// same cycle found from elsewhere gets the same name.
				m := slices.Index(cyc, slices.Min(cyc))
				cyc = slices.Concat(cyc[m:], cyc[:m])
				var key, msg strings.Builder
				msg.WriteString("cycle: ")
				for _, v := range cyc {
					key.WriteString(strconv.Itoa(v))
					key.WriteByte(',')
					msg.WriteString(g.Tasks[v].ID)
					msg.WriteString(" -> ")
				}
				msg.WriteString(g.Tasks[cyc[0]].ID)
				if seen[key.String()] {
					continue
				}
				seen[key.String()] = true
				if len(out) == maxCycles {
					omitted++
					continue
				}
				out = append(out, Problem{Place: at(cyc[0], ".dependencies"), Msg: msg.String()})
			}
		}
	}
	if omitted > 0 {
		out = append(out, Problem{Place: "tasks", Msg: fmt.Sprintf("%d more dependency cycles not shown", omitted)})
	}
	return out
}

// taskOf returns the task index a place refers to, or -1 for places
// outside the tasks array.
func taskOf(place string) int {
	rest, ok := strings.CutPrefix(place, "tasks[")
	if !ok {
		return -1
	}
	end := strings.IndexByte(rest, ']')
	if end < 0 {
		return -1
	}
	i, err := strconv.Atoi(rest[:end])
	if err != nil {
		return -1
	}
	return i
}

// sortProblems groups problems by task, top-level ones first, keeping the
// order of discovery within a group.
func sortProblems(ps []Problem) {
	slices.SortStableFunc(ps, func(a, b Problem) int {
		return taskOf(a.Place) - taskOf(b.Place)
	})
}

// parseGraph decodes a task graph and checks every rule. A non-empty problem
// list means the graph is invalid. The graph is nil when data is not a
// JSON object; otherwise it holds whatever could be decoded, so that a
// caller can still show it.
func parseGraph(data []byte) (*Graph, []Problem) {
	g, errs, _ := parse(data)
	return g, errs
}

// Check is Load that also returns the warnings of an invalid graph, so
// that a user fixing its errors sees everything else that is wrong too.
// For a valid graph the warnings are the plan's.
func Check(data []byte) (plan *Plan, errs, warns []Problem) {
	g, errs, warns := parse(data)
	if len(errs) > 0 {
		return nil, errs, warns
	}
	plan = build(g)
	plan.Warnings = append(warns, plan.Warnings...)
	sortProblems(plan.Warnings)
	return plan, nil, plan.Warnings
}

func parse(data []byte) (*Graph, []Problem, []Problem) {
	g, probs, warns := decodeGraph(data)
	if g == nil {
		return nil, probs, nil
	}
	// A field of the wrong type is left empty; do not also complain that
	// it is missing.
	bad := make(map[string]bool, len(probs))
	for _, p := range probs {
		bad[p.Place] = true
	}
	errs, vwarns := validate(g)
	for _, p := range errs {
		if !within(p.Place, bad) {
			probs = append(probs, p)
		}
	}
	warns = append(warns, vwarns...)
	sortProblems(probs)
	sortProblems(warns)
	nameTasks(g, probs)
	nameTasks(g, warns)
	return g, probs, warns
}

// nameTasks gives each problem inside a task the task's id, when it has a
// valid one that no other task has.
func nameTasks(g *Graph, ps []Problem) {
	n := make(map[string]int, len(g.Tasks))
	for _, t := range g.Tasks {
		if t != nil {
			n[t.ID]++
		}
	}
	for k := range ps {
		if i := taskOf(ps[k].Place); i >= 0 && i < len(g.Tasks) && g.Tasks[i] != nil {
			if id := g.Tasks[i].ID; ValidID(id) && n[id] == 1 {
				ps[k].Task = id
			}
		}
	}
}

// within reports whether place is, or lies inside, one of the places.
func within(place string, places map[string]bool) bool {
	if len(places) == 0 {
		return false
	}
	for {
		if places[place] {
			return true
		}
		i := strings.LastIndexAny(place, ".[")
		if i <= 0 {
			return false
		}
		place = place[:i]
	}
}

// MissingIssues lists every task that carries no issue, for a repository
// whose configuration requires one (forge.require_issue).
func MissingIssues(g *Graph) []Problem {
	var ps problems
	for i, t := range g.Tasks {
		if t != nil && t.Issue == 0 {
			ps.add(at(i, ".issue"), "task %s has no issue (forge.require_issue is set)", t.ID)
		}
	}
	return ps
}
