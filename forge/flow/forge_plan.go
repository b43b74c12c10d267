package flow

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/git-zerg/git-zerg/engine"
	forgeapi "github.com/git-zerg/git-zerg/forge"
	"github.com/git-zerg/git-zerg/lazy"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/words"
)

// A graph from the forge's open issues (plan --from-issues): each issue is
// a task "issue-N" whose title is the issue's, whose description is its
// body, whose hard dependencies are its "Depends on #N" lines, and whose
// files, verification, level and risk come from a fenced ```zerg block of
// TOML in the body. The graph is then checked like any graph file, each
// problem named by its issue.

// IssueBlock is the ```zerg block of an issue body.
type IssueBlock struct {
	Files struct {
		Create []string `toml:"create"`
		Modify []string `toml:"modify"`
		Read   []string `toml:"read"`
	} `toml:"files"`
	Verification struct {
		Command        string `toml:"command"`
		TimeoutSeconds int    `toml:"timeout_seconds"`
	} `toml:"verification"`
	Level int    `toml:"level"`
	Risk  string `toml:"risk"`
}

var (
	// Compiled on first use, not at every start.
	dependsLine = &lazy.Value[*regexp.Regexp]{Build: func() *regexp.Regexp {
		return regexp.MustCompile(`(?im)^\s*depends\s+on\s*:?\s*(#\d+(?:\s*(?:,|and)?\s*#\d+)*)\s*\.?\s*$`)
	}}
	issueRef = &lazy.Value[*regexp.Regexp]{Build: func() *regexp.Regexp { return regexp.MustCompile(`#(\d+)`) }}
)

// issueTaskID is the task id of issue n.
func issueTaskID(n int) string { return "issue-" + strconv.Itoa(n) }

// IssueProblem is a problem of one issue (Issue 0: of the selection).
type IssueProblem struct {
	Issue int
	Msg   string
}

func (p IssueProblem) String() string {
	if p.Issue == 0 {
		return p.Msg
	}
	return fmt.Sprintf("issue #%d: %s", p.Issue, p.Msg)
}

// parseIssueBody finds the block and the dependencies of an issue body.
func parseIssueBody(body string) (blk IssueBlock, deps []int, probs []string) {
	for _, m := range dependsLine.Get().FindAllStringSubmatch(body, -1) {
		for _, r := range issueRef.Get().FindAllStringSubmatch(m[1], -1) {
			n, _ := strconv.Atoi(r[1])
			deps = append(deps, n)
		}
	}
	lines := strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n")
	var block []string
	found, in := 0, false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case !in && t == "```zerg":
			in = true
			found++
		case in && t == "```":
			in = false
		case in && found == 1:
			block = append(block, l)
		}
	}
	switch {
	case found == 0:
		probs = append(probs, "no ```zerg block (it gives the task's files and verification command)")
		return blk, deps, probs
	case found > 1:
		probs = append(probs, fmt.Sprintf("%d ```zerg blocks; write one", found))
	case in:
		probs = append(probs, "the ```zerg block is not closed")
	}
	md, err := toml.Decode(strings.Join(block, "\n"), &blk)
	if err != nil {
		var pe toml.ParseError
		if ok := asParseError(err, &pe); ok {
			probs = append(probs, fmt.Sprintf("```zerg block, line %d: %s", pe.Position.Line, pe.Message))
		} else {
			probs = append(probs, "```zerg block: "+err.Error())
		}
		return blk, deps, probs
	}
	for _, k := range md.Undecoded() {
		probs = append(probs, fmt.Sprintf("```zerg block: unknown key %s (known: files.create, files.modify, files.read, verification.command, verification.timeout_seconds, level, risk)", k))
	}
	return blk, deps, probs
}

func asParseError(err error, pe *toml.ParseError) bool { return errors.As(err, pe) }

// IssueGraph builds feature's graph from the open issues with the label and
// milestone given. It returns the problems of every issue at once; with
// any, the graph is nil. Warnings are the graph's own.
func IssueGraph(g *engine.Engine, feature, label, milestone string) (*levels.Plan, []IssueProblem, []IssueProblem, error) {
	c, err := forgeClient(g)
	if err != nil {
		return nil, nil, nil, err
	}
	issues, err := c.OpenIssues(g.Context(), label, milestone)
	if err != nil {
		return nil, nil, nil, forgeErr(err)
	}
	if len(issues) == 0 {
		what := "no open issues in " + c.Repo().String()
		var sel []string
		if label != "" {
			sel = append(sel, "label "+label)
		}
		if milestone != "" {
			sel = append(sel, "milestone "+milestone)
		}
		if len(sel) > 0 {
			what += " with " + strings.Join(sel, " and ")
		}
		return nil, nil, nil, &engine.Error{Kind: engine.Usage, What: what, Why: "nothing to plan"}
	}
	open := map[int]bool{}
	for _, i := range issues {
		open[i.Number] = true
	}
	var probs []IssueProblem
	add := func(n int, format string, args ...any) {
		probs = append(probs, IssueProblem{n, fmt.Sprintf(format, args...)})
	}
	type parsed struct {
		blk  IssueBlock
		deps []int
	}
	bodies := make([]parsed, len(issues))
	// An issue whose block is missing or broken has no files or command to
	// check: the graph's own "required" would say the same again.
	badBlock := map[int]bool{}
	var outside []int
	for k, is := range issues {
		blk, deps, ps := parseIssueBody(is.Body)
		for _, p := range ps {
			add(is.Number, "%s", p)
			badBlock[is.Number] = true
		}
		bodies[k] = parsed{blk, dedupe(deps)}
		for _, d := range bodies[k].deps {
			if !open[d] {
				outside = append(outside, d)
			}
		}
	}
	known, err := dependencyStates(g, c, dedupe(outside))
	if err != nil {
		return nil, nil, nil, err
	}
	graph := &levels.Graph{Feature: feature}
	for k, is := range issues {
		blk := bodies[k].blk
		t := &levels.Task{ID: issueTaskID(is.Number), Title: is.Title, Description: is.Body, Issue: is.Number,
			Level: blk.Level, Risk: blk.Risk}
		t.Files.Create, t.Files.Modify, t.Files.Read = blk.Files.Create, blk.Files.Modify, blk.Files.Read
		t.Verification.Command, t.Verification.TimeoutSeconds = blk.Verification.Command, blk.Verification.TimeoutSeconds
		for _, d := range bodies[k].deps {
			// An issue depended on but not selected: closed is done, so the
			// dependency holds; open but outside the selection cannot be
			// waited for.
			switch st, found := known[d]; {
			case open[d]:
				t.Dependencies = append(t.Dependencies, issueTaskID(d))
			case !found:
				add(is.Number, "depends on #%d, which does not exist", d)
			case st.Open:
				add(is.Number, "depends on #%d, which is open but not selected (label or milestone)", d)
			}
		}
		graph.Tasks = append(graph.Tasks, t)
	}
	data, err := json.Marshal(graph)
	if err != nil {
		return nil, nil, nil, err
	}
	plan, errs, warns := levels.Check(data)
	byTask := func(ps []levels.Problem) []IssueProblem {
		var out []IssueProblem
		for _, p := range ps {
			out = append(out, issueProblem(issues, p))
		}
		return out
	}
	for _, p := range byTask(errs) {
		if !badBlock[p.Issue] {
			probs = append(probs, p)
		}
	}
	sort.SliceStable(probs, func(i, j int) bool { return probs[i].Issue < probs[j].Issue })
	if len(probs) > 0 {
		return nil, probs, byTask(warns), nil
	}
	return plan, nil, byTask(warns), nil
}

func asForgeError(err error, fe **forgeapi.Error) bool { return errors.As(err, fe) }

// maxDepLookups bounds the issues outside the selection that "Depends on"
// lines make plan read one by one; past it, one listing of every issue
// (bounded like any listing) answers for all of them at once.
const maxDepLookups = 100

// dependencyStates is what the forge says of each issue in nums, by
// number; an issue that does not exist is absent.
func dependencyStates(g *engine.Engine, c *forgeapi.Client, nums []int) (map[int]forgeapi.Issue, error) {
	out := map[int]forgeapi.Issue{}
	if len(nums) > maxDepLookups {
		all, err := c.AllIssues(g.Context())
		if err != nil {
			return nil, forgeErr(err)
		}
		want := map[int]bool{}
		for _, n := range nums {
			want[n] = true
		}
		for _, is := range all {
			if want[is.Number] {
				out[is.Number] = is
			}
		}
		return out, nil
	}
	for _, n := range nums {
		is, err := c.Issue(g.Context(), n)
		var fe *forgeapi.Error
		switch {
		case err == nil:
			out[n] = is
		case asForgeError(err, &fe) && fe.Kind == forgeapi.NotFound:
		default:
			return nil, forgeErr(err)
		}
	}
	return out, nil
}

// dedupe is ns without repeats, in first-seen order.
func dedupe(ns []int) []int {
	seen := map[int]bool{}
	var out []int
	for _, n := range ns {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// issueProblem renames a graph problem's place tasks[i].x as issue #N: x.
func issueProblem(issues []forgeapi.Issue, p levels.Problem) IssueProblem {
	if !strings.HasPrefix(p.Place, "tasks[") {
		return IssueProblem{0, p.String()}
	}
	end := strings.IndexByte(p.Place, ']')
	i, err := strconv.Atoi(p.Place[len("tasks["):end])
	if err != nil || i < 0 || i >= len(issues) {
		return IssueProblem{0, p.String()}
	}
	rest := strings.TrimPrefix(p.Place[end+1:], ".")
	msg := p.Msg
	if rest != "" {
		msg = rest + ": " + msg
	}
	// The graph's words for an issue's parts: ids are issue-N.
	return IssueProblem{issues[i].Number, msg}
}

// IssuesFeature is the feature planned from issues: the name given, else
// the label, else the milestone.
func IssuesFeature(name, label, milestone string) (string, error) {
	for _, n := range []string{label, milestone} {
		if name == "" {
			name = n
		}
	}
	if name == "" {
		return "", engine.UsageError("plan --from-issues: name the feature (plan --from-issues FEATURE, or --label / --milestone)")
	}
	return name, engine.CheckFeatureName(name)
}

// IssuesVerdict refuses a graph built from issues that have problems, or
// warnings under strict: nothing is planned then.
func IssuesVerdict(name string, probs, warns []IssueProblem, strict bool) error {
	if len(probs) > 0 {
		return engine.UsageError("cannot plan %s from issues (%s)", name, words.Plural(len(probs), "problem"))
	}
	if strict && len(warns) > 0 {
		return engine.UsageError("cannot plan %s from issues (%s under --strict)", name, words.Plural(len(warns), "warning"))
	}
	return nil
}
