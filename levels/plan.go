package levels

import (
	"fmt"
	"slices"
	"strings"
)

// Plan is a valid graph ordered into levels: every task of a level can run
// in parallel once all earlier levels are done.
type Plan struct {
	Graph *Graph
	// Levels[0] holds the ids of level 1, in file order. A level can be
	// empty when a task's given level skips ahead of its dependencies.
	Levels [][]string
	// Level is the final level of each task.
	Level map[string]int
	// Implied maps a task id to the ids it was ordered after because they
	// would otherwise have written overlapping paths in the same level. An
	// id is left out when the task already waits for it through another
	// (a task ordered after B, which is ordered after A, does not also
	// list A), so that tasks sharing one path form a chain.
	Implied map[string][]string
	// Dependents maps a task id to the ids that depend on it, through hard
	// or implied dependencies, in file order.
	Dependents map[string][]string
	// Warnings are things the plan worked around by itself (a task moved
	// above its given level, an ownership clash), that a caller can work
	// around (a feature name that cannot be a branch name, when the feature
	// is named on the command line), or that do not change the plan (an
	// unknown key, a stale total_tasks). A strict caller treats them as
	// errors.
	Warnings []Problem
}

// compute validates g and orders it into levels. Problems mean the graph
// is invalid and the plan is nil.
func compute(g *Graph) (*Plan, []Problem) {
	errs, warns := validate(g)
	if len(errs) > 0 {
		return nil, errs
	}
	p := build(g)
	p.Warnings = append(warns, p.Warnings...)
	sortProblems(p.Warnings)
	return p, nil
}

// Load parses data and computes its plan; see Check for the warnings of
// an invalid graph.
func Load(data []byte) (*Plan, []Problem) {
	p, errs, _ := Check(data)
	return p, errs
}

// build assumes a validated graph: unique ids, known dependencies, no
// cycles.
//
// Levels are filled in increasing order, each task going to the lowest
// level its hard dependencies and given level allow. Within a level, tasks
// are taken in file order; one whose owned paths overlap a task already
// placed in that level is ordered after it and retried one level up. Every
// task is placed exactly once and only compared against an index of its
// level, so the cost is about (tasks + retries) × path depth rather than
// tasks².
func build(g *Graph) *Plan {
	n := len(g.Tasks)
	deps, rev := edgesOf(g)

	level := make([]int, n) // lower bound until the task is placed
	waiting := make([]int, n)
	var buckets [][]int
	// A bucket's array is reused once its level is filled: when every
	// task clashes with every other, each level passes nearly all tasks
	// on to the next, and fresh arrays would cost tasks² of memory.
	var spare []int
	push := func(l, i int) {
		for len(buckets) <= l {
			buckets = append(buckets, nil)
		}
		if buckets[l] == nil && spare != nil {
			buckets[l], spare = spare, nil
		}
		buckets[l] = append(buckets[l], i)
	}
	for i, t := range g.Tasks {
		level[i] = max(1, t.Level)
		waiting[i] = len(deps[i])
		if waiting[i] == 0 {
			push(level[i], i)
		}
	}
	own := make([][]ownedPath, n)
	for i, t := range g.Tasks {
		own[i] = ownedPaths(t)
	}

	idx := &levelIndex{
		files: make(map[string]slot),
		dirs:  make(map[string]slot),
		under: make(map[string]slot),
	}
	implied := make([][]int, n)
	// stamp marks, for one task at a time, the tasks its new owners wait
	// for already; see below.
	stamp := make([]int, n)
	stamps := 0
	var warns []Problem
	clashes := &clashLog{tasks: n, byPath: map[string]*clashGroup{}}
	var found []clash
	for l := 1; l < len(buckets); l++ {
		b := buckets[l]
		buckets[l] = nil
		slices.Sort(b)
		idx.level = l
		for _, t := range b {
			found = idx.clashes(own[t], found[:0])
			if len(found) > 0 {
				// Waiting for an owner that itself waits for an earlier
				// clash partner orders t after that partner anyway, so
				// the direct edge goes. Without this, tasks that all write
				// one path would each wait for every earlier one: a
				// square number of edges for what is a chain.
				stamps++
				for _, c := range found {
					o := c.owner.task
					for _, e := range implied[o] {
						stamp[e] = stamps
					}
					for _, e := range deps[o] {
						stamp[e] = stamps
					}
				}
				implied[t] = slices.DeleteFunc(implied[t], func(e int) bool { return stamp[e] == stamps })
				for _, c := range found {
					implied[t] = append(implied[t], c.owner.task)
					clashes.add(t, c)
				}
				push(l+1, t)
				continue
			}
			level[t] = l
			for k := range own[t] {
				idx.add(t, &own[t][k])
			}
			for _, d := range rev[t] {
				level[d] = max(level[d], l+1)
				if waiting[d]--; waiting[d] == 0 {
					push(level[d], d)
				}
			}
		}
		spare = b[:0]
	}

	warns = clashes.warnings(g, warns)
	warns = append(warns, movedLevels(g, deps, level)...)
	sortProblems(warns)

	return planOf(g, level, deps, implied, warns)
}

// edgesOf is the graph's hard dependencies by task index, each once and
// none on itself (deps), and who depends on each task (rev). Each shares
// one backing array rather than one per task.
func edgesOf(g *Graph) (deps, rev [][]int) {
	n := len(g.Tasks)
	pos := make(map[string]int, n)
	for i, t := range g.Tasks {
		pos[t.ID] = i
	}
	edges := 0
	for _, t := range g.Tasks {
		edges += len(t.Dependencies)
	}
	deps = make([][]int, n)
	flat := make([]int, 0, edges)
	mark := make([]int, n) // mark[k] == i+1: k is already in deps[i]
	nrev := make([]int, n)
	for i, t := range g.Tasks {
		start := len(flat)
		for _, id := range t.Dependencies {
			k := pos[id]
			if k == i || mark[k] == i+1 {
				continue
			}
			mark[k] = i + 1
			flat = append(flat, k)
			nrev[k]++
		}
		deps[i] = flat[start:len(flat):len(flat)]
	}
	rev = make([][]int, n)
	revFlat := make([]int, len(flat))
	off := 0
	for k := range n {
		rev[k] = revFlat[off : off : off+nrev[k]]
		off += nrev[k]
	}
	for i := range n {
		for _, k := range deps[i] {
			rev[k] = append(rev[k], i)
		}
	}

	return deps, rev
}

// movedLevels warns of each task the graph gives a level below what its
// dependencies need.
func movedLevels(g *Graph, deps [][]int, level []int) []Problem {
	var warns []Problem
	for i, t := range g.Tasks {
		if t.Level == 0 {
			continue
		}
		need, by := 0, -1
		for _, k := range deps[i] {
			if level[k]+1 > need {
				need, by = level[k]+1, k
			}
		}
		if need > t.Level {
			warns = append(warns, Problem{
				Place: at(i, ".level"),
				Msg: fmt.Sprintf("%s is level %d in the graph but depends on %s (level %d); moved to level %d",
					t.ID, t.Level, g.Tasks[by].ID, level[by], level[i]),
			})
		}
	}
	return warns
}

// planOf is the plan of the levels found: each task's level, the levels'
// tasks, the order clashes implied and every task's dependents.
func planOf(g *Graph, level []int, deps, implied [][]int, warns []Problem) *Plan {
	n := len(g.Tasks)
	p := &Plan{
		Graph:      g,
		Level:      make(map[string]int, n),
		Implied:    make(map[string][]string),
		Dependents: make(map[string][]string),
		Warnings:   warns,
	}
	top := 0
	for i, t := range g.Tasks {
		p.Level[t.ID] = level[i]
		top = max(top, level[i])
	}
	p.Levels = make([][]string, top)
	// Collected by index first: appending to map entries one id at a time
	// costs a hash lookup per edge.
	dependents := make([][]string, n)
	for i, t := range g.Tasks {
		p.Levels[level[i]-1] = append(p.Levels[level[i]-1], t.ID)
		if len(implied[i]) > 0 {
			ids := make([]string, len(implied[i]))
			for j, k := range implied[i] {
				ids[j] = g.Tasks[k].ID
			}
			p.Implied[t.ID] = ids
		}
		// A hard dependency is always on a lower level than the task was
		// ever tried at, so it never repeats as an implied one.
		for _, k := range deps[i] {
			dependents[k] = append(dependents[k], t.ID)
		}
		for _, k := range implied[i] {
			dependents[k] = append(dependents[k], t.ID)
		}
	}
	for k, ids := range dependents {
		if len(ids) > 0 {
			p.Dependents[g.Tasks[k].ID] = ids
		}
	}
	return p
}

func clashPlace(t int, op *ownedPath) string {
	return fmt.Sprintf("tasks[%d].files.%s[%d]", t, op.list, op.idx)
}

func ownershipWarning(g *Graph, t int, c clash) Problem {
	me, other := g.Tasks[t].ID, g.Tasks[c.owner.task].ID
	place := clashPlace(t, c.mine)
	if c.mine.path == c.owner.op.path {
		return Problem{Place: place, Msg: fmt.Sprintf("%s and %s both write %q; %s now runs after %s",
			me, other, c.mine.path, me, other)}
	}
	return Problem{Place: place, Msg: fmt.Sprintf("%s writes %q, which overlaps %q written by %s; %s now runs after %s",
		me, c.mine.path, c.owner.op.path, other, me, other)}
}

// maxClashWarnings is how many clashes over one path are told one by one.
// Tasks that all write one path clash pairwise, so a warning per clash
// grows with the square of the tasks (3,000 tasks writing "**/*.go" made
// 4.5 million lines); past this many, a path's clashes become one line.
const maxClashWarnings = 3

// maxNamed is how many tasks a grouped warning names before "and N more".
const maxNamed = 3

// clashGroup gathers the clashes of tasks that moved because of one path
// they write, in the order they were found.
type clashGroup struct {
	path    string
	firstOp *ownedPath // where the first clash was, for the warning's place
	first   []clash    // up to maxClashWarnings, told one by one
	moved   []int      // the moving task of each clash in first
	n       int
	// Once there are too many clashes to tell one by one, the tasks on
	// either side are counted, each once, and the first few named. A
	// moving task is seen through its ownedPath (a task lists a path
	// once), an earlier one through a bit set: this runs once per clash,
	// which can be millions of times.
	afterSeen          []uint64
	nMoved, nAfter     int
	movedIDs, afterIDs []int
}

type clashLog struct {
	tasks  int
	byPath map[string]*clashGroup
	groups []*clashGroup
}

func (l *clashLog) add(t int, c clash) {
	gr := c.mine.group
	if gr == nil {
		if gr = l.byPath[c.mine.path]; gr == nil {
			gr = &clashGroup{path: c.mine.path, firstOp: c.mine}
			l.byPath[c.mine.path] = gr
			l.groups = append(l.groups, gr)
		}
		c.mine.group = gr
	}
	gr.n++
	if gr.n <= maxClashWarnings {
		gr.first = append(gr.first, c)
		gr.moved = append(gr.moved, t)
		return
	}
	if gr.afterSeen == nil {
		gr.afterSeen = make([]uint64, (l.tasks+63)/64)
		for i, c := range gr.first {
			gr.note(gr.moved[i], c)
		}
	}
	gr.note(t, c)
}

func (gr *clashGroup) note(moved int, c clash) {
	if !c.mine.counted {
		c.mine.counted = true
		if gr.nMoved++; len(gr.movedIDs) < maxNamed {
			gr.movedIDs = append(gr.movedIDs, moved)
		}
	}
	after := c.owner.task
	if w, bit := after/64, uint64(1)<<(after%64); gr.afterSeen[w]&bit == 0 {
		gr.afterSeen[w] |= bit
		if gr.nAfter++; len(gr.afterIDs) < maxNamed {
			gr.afterIDs = append(gr.afterIDs, after)
		}
	}
}

func (l *clashLog) warnings(g *Graph, warns []Problem) []Problem {
	for _, gr := range l.groups {
		if gr.n <= maxClashWarnings {
			for i, c := range gr.first {
				warns = append(warns, ownershipWarning(g, gr.moved[i], c))
			}
			continue
		}
		verb := "write"
		if gr.nMoved == 1 {
			verb = "writes"
		}
		warns = append(warns, Problem{
			Place: clashPlace(gr.moved[0], gr.firstOp),
			Msg: fmt.Sprintf("%s %s %q, which overlaps what %s write; each now runs after the tasks it overlaps (%d overlaps in all)",
				named(g, gr.movedIDs, gr.nMoved), verb, gr.path, named(g, gr.afterIDs, gr.nAfter), gr.n),
		})
	}
	return warns
}

// named lists the ids of the first tasks of n, then how many are left out.
func named(g *Graph, tasks []int, n int) string {
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i] = g.Tasks[t].ID
	}
	switch {
	case n > len(ids):
		return fmt.Sprintf("%s and %d more", strings.Join(ids, ", "), n-len(ids))
	case len(ids) == 1:
		return ids[0]
	}
	return strings.Join(ids[:len(ids)-1], ", ") + " and " + ids[len(ids)-1]
}

// slot records who owns a key in the level being filled. Entries of
// earlier levels are left in the maps and told apart by level, which is
// cheaper than clearing maps once per level.
type slot struct {
	level int
	task  int
	op    *ownedPath
}

type clash struct {
	mine  *ownedPath
	owner slot
}

// levelIndex holds the paths owned in one level, arranged so that the
// owners overlapping a path (in the sense of Overlap) are found with one
// lookup per directory level of the path:
//   - files: plain files by path;
//   - dirs: directory and glob owners by their directory prefix;
//   - under: for each directory prefix, one owner at or below it.
type levelIndex struct {
	level              int
	files, dirs, under map[string]slot
}

func (x *levelIndex) get(m map[string]slot, k string) (slot, bool) {
	s, ok := m[k]
	return s, ok && s.level == x.level
}

func (x *levelIndex) setOnce(m map[string]slot, k string, s slot) {
	if _, ok := x.get(m, k); !ok {
		m[k] = s
	}
}

// find returns an owner in this level that overlaps op.
func (x *levelIndex) find(op *ownedPath) (slot, bool) {
	k := op.key
	if !op.dir {
		if s, ok := x.get(x.files, k); ok {
			return s, true
		}
	}
	// Directory owners at or above op. For a file these are its proper
	// prefixes; for a directory the loop reaches the directory itself.
	if s, ok := x.get(x.dirs, ""); ok {
		return s, true
	}
	for i := 0; i < len(k); i++ {
		if k[i] == '/' {
			if s, ok := x.get(x.dirs, k[:i+1]); ok {
				return s, true
			}
		}
	}
	if op.dir {
		// Anything below a directory overlaps it.
		return x.get(x.under, k)
	}
	return slot{}, false
}

func (x *levelIndex) add(task int, op *ownedPath) {
	s := slot{level: x.level, task: task, op: op}
	k := op.key
	if op.dir {
		x.setOnce(x.dirs, k, s)
	} else {
		x.setOnce(x.files, k, s)
	}
	x.setOnce(x.under, "", s)
	for i := 0; i < len(k); i++ {
		if k[i] == '/' {
			x.setOnce(x.under, k[:i+1], s)
		}
	}
}

// clashes appends to buf one clash per task in this level that overlaps
// any of own.
func (x *levelIndex) clashes(own []ownedPath, buf []clash) []clash {
	for k := range own {
		s, ok := x.find(&own[k])
		if !ok || slices.ContainsFunc(buf, func(c clash) bool { return c.owner.task == s.task }) {
			continue
		}
		buf = append(buf, clash{mine: &own[k], owner: s})
	}
	return buf
}
