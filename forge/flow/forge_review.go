package flow

import (
	"fmt"
	"strings"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
	"github.com/git-zerg/git-zerg/worktree"
)

// Review on a forge: ship pushes verified work for review and records each
// task's pull request; a task in review (verified, with a PR) becomes done
// only when its PR is merged with its work on the base branch, and its
// issue is closed.

// ShipResult says what one ship did, task by task.
type ShipResult struct {
	Feature string
	Shipped []Shipped // tasks whose PR was opened or updated and recorded
	Landed  []Shipped // tasks in review whose PR was merged: now done
	Waiting []Shipped // tasks in review whose PR is not merged yet
	Refused []string  // why a task could not move, one line each
}

// Verdict refuses a ship that left tasks behind, each named in Refused.
func (r *ShipResult) Verdict() error {
	if len(r.Refused) > 0 {
		return engine.RefusedError("ship refused for "+words.Plural(len(r.Refused), "task"), "each named above")
	}
	return nil
}

// Shipped is one task and its pull request.
type Shipped struct {
	Task   string `json:"task"`
	Issue  int    `json:"issue,omitempty"`
	PR     int    `json:"pr"`
	Branch string `json:"branch,omitempty"`
	Opened bool   `json:"opened,omitempty"`
}

// reviewBranch is the branch a task's work is reviewed on
// (forge.review = "task"): named after its issue.
func reviewBranch(feature string, issue int) string {
	return fmt.Sprintf("zerg/%s/issue-%d", feature, issue)
}

func baseBranch(g *engine.Engine) string {
	if g.Config != nil && g.Config.Forge.Base != "" {
		return g.Config.Forge.Base
	}
	return "main"
}

// Ship first lands the tasks in review whose PR was merged, then pushes
// every verified task not yet in review and opens (or updates) its PR.
func Ship(g *engine.Engine) (*ShipResult, error) {
	mode := g.ReviewMode()
	if mode == "" {
		return nil, &engine.Error{Kind: engine.Usage, What: "no review configured", Why: "forge.review is not set",
			Hint: `set [forge] review = "task" (a pull request per task) or "feature" in .zerg/config.toml`}
	}
	c, tasks, err := forgeTasks(g)
	if err != nil {
		return nil, err
	}
	res := &ShipResult{Feature: g.Feature}
	git := engine.Git(g.Store)
	remote := forgeRemote(g)
	base := baseBranch(g)

	// In review first: a merged PR lands its tasks.
	if err := landMerged(g, tasks, res); err != nil {
		return res, err
	}
	tx, err := g.View()
	if err != nil {
		return res, err
	}
	if tasks, err = tx.Tasks(); err != nil {
		return res, err
	}
	var ready []*state.Task
	for _, t := range tasks {
		if t.Status == state.Verified && t.PR == 0 {
			ready = append(ready, t)
		}
	}
	if mode == config.ReviewFeature {
		return res, shipFeature(g, ready, res)
	}
	for _, t := range ready {
		if t.Spec.Issue == 0 {
			// The gate says why, with the task named; nothing is pushed.
			res.Refused = append(res.Refused, gates.Ship(gates.ShipFacts{Task: t, PerTask: true}).Error())
			continue
		}
		branch := reviewBranch(g.Feature, t.Spec.Issue)
		if _, err := git.Run(g.Context(), "push", "-q", "--force", remote, t.Commit+":refs/heads/"+branch); err != nil {
			return res, &engine.Error{Kind: engine.Failed, What: "cannot push " + branch + " to " + remote, Why: gitErr(err)}
		}
		pushed := remoteHas(g, remote, branch, t.Commit)
		title := fmt.Sprintf("%s (%s)", t.Spec.Title, t.ID())
		body := fmt.Sprintf("Task %s of feature %s, verified by git zerg.\n\n%s", t.ID(), g.Feature, closesLines([]int{t.Spec.Issue}))
		pr, opened, err := c.OpenOrUpdatePR(g.Context(), branch, base, title, body)
		if err != nil {
			return res, forgeErr(err)
		}
		facts := gates.ShipFacts{Task: t, PerTask: true, Branch: branch, Pushed: pushed, PR: pr.Number}
		if err := g.RecordShip(facts); err != nil {
			return res, err
		}
		res.Shipped = append(res.Shipped, Shipped{Task: t.ID(), Issue: t.Spec.Issue, PR: pr.Number, Branch: branch, Opened: opened})
	}
	return res, nil
}

// shipFeature pushes staging and opens (or updates) one PR listing every
// verified task whose work staging holds.
func shipFeature(g *engine.Engine, ready []*state.Task, res *ShipResult) error {
	c, err := forgeClient(g)
	if err != nil {
		return err
	}
	git := engine.Git(g.Store)
	remote, base := forgeRemote(g), baseBranch(g)
	branch := worktree.StagingBranch(g.Feature)
	tip, err := git.Line(g.Context(), "rev-parse", "--verify", "-q", "refs/heads/"+branch)
	if err != nil || tip == "" {
		return &engine.Error{Kind: engine.Refused, What: "ship refused", Why: branch + " does not exist: nothing merged to review"}
	}
	var in []*state.Task
	var issues []int
	var lines []string
	for _, t := range ready {
		if !isAncestor(g, t.Commit, tip) {
			res.Refused = append(res.Refused, fmt.Sprintf("ship %s refused (its work %s is not on %s yet)", t.ID(), short(t.Commit), branch))
			continue
		}
		in = append(in, t)
		line := fmt.Sprintf("- %s: %s", t.ID(), t.Spec.Title)
		if t.Spec.Issue != 0 {
			issues = append(issues, t.Spec.Issue)
			line += fmt.Sprintf(" (#%d)", t.Spec.Issue)
		}
		lines = append(lines, line)
	}
	if len(in) == 0 {
		return nil
	}
	if _, err := git.Run(g.Context(), "push", "-q", "--force", remote, tip+":refs/heads/"+branch); err != nil {
		return &engine.Error{Kind: engine.Failed, What: "cannot push " + branch + " to " + remote, Why: gitErr(err)}
	}
	body := fmt.Sprintf("Feature %s, verified by git zerg:\n\n%s\n\n%s", g.Feature, strings.Join(lines, "\n"), closesLines(issues))
	pr, opened, err := c.OpenOrUpdatePR(g.Context(), branch, base, "feature "+g.Feature, body)
	if err != nil {
		return forgeErr(err)
	}
	for _, t := range in {
		pushed := remoteHasWork(g, remote, branch, t.Commit)
		if err := g.RecordShip(gates.ShipFacts{Task: t, Branch: branch, Pushed: pushed, PR: pr.Number}); err != nil {
			return err
		}
		res.Shipped = append(res.Shipped, Shipped{Task: t.ID(), Issue: t.Spec.Issue, PR: pr.Number, Branch: branch, Opened: opened})
	}
	return nil
}

// landFacts gathers what the land gate needs about a task in review: the
// PR from the forge, its merge commit against the base branch as fetched
// from the remote now, and the issue (closed here when the rest holds).
func landFacts(g *engine.Engine, t *state.Task) (gates.LandFacts, bool, error) {
	f := gates.LandFacts{Task: t, Base: baseBranch(g), IssueClosed: t.Spec.Issue == 0}
	if t.PR == 0 {
		return f, false, nil
	}
	c, err := forgeClient(g)
	if err != nil {
		return f, false, err
	}
	pr, err := c.PR(g.Context(), t.PR)
	if err != nil {
		return f, false, forgeErr(err)
	}
	f.Merged, f.MergeCommit = pr.Merged, pr.MergeCommit
	closedUnmerged := !pr.Open && !pr.Merged
	if !f.Merged || f.MergeCommit == "" {
		return f, closedUnmerged, nil
	}
	tip, err := fetchBase(g)
	if err != nil {
		return f, false, err
	}
	f.OnBase = isAncestor(g, f.MergeCommit, tip)
	f.HasWork = f.OnBase && isAncestor(g, t.Commit, f.MergeCommit)
	if f.HasWork {
		f.Head, f.HeadVerified = mergedHead(g, t, f.MergeCommit)
	}
	if f.OnBase && f.HasWork && f.HeadVerified && t.Spec.Issue != 0 {
		is, err := c.Issue(g.Context(), t.Spec.Issue)
		if err != nil {
			return f, false, forgeErr(err)
		}
		if is.Open {
			if err := c.CloseIssue(g.Context(), t.Spec.Issue); err != nil {
				return f, false, forgeErr(err)
			}
		}
		f.IssueClosed = true
	}
	return f, false, nil
}

// mergedHead is the commit a pull request's merge commit brought in (its
// second parent: GitHub's merge button merges the PR's head into its
// base), read from git rather than taken from the forge, and whether it is
// work the tool verified: under a pull request per task the task's
// verified commit itself, under one per feature a commit of staging.
func mergedHead(g *engine.Engine, t *state.Task, merge string) (string, bool) {
	head, err := engine.Git(g.Store).Line(g.Context(), "rev-parse", "--verify", "-q", merge+"^2")
	if err != nil || head == "" {
		return "", false
	}
	if g.ReviewMode() != config.ReviewFeature {
		return head, head == t.Commit
	}
	staging, err := engine.Git(g.Store).Line(g.Context(), "rev-parse", "--verify", "-q", "refs/heads/"+worktree.StagingBranch(g.Feature))
	return head, err == nil && isAncestor(g, head, staging)
}

// landMerged moves each task in review on by its PR: merged with its work
// on the base branch → done; closed unmerged → blocked; else it waits.
func landMerged(g *engine.Engine, tasks []*state.Task, res *ShipResult) error {
	for _, t := range tasks {
		if t.Status != state.Verified || t.PR == 0 {
			continue
		}
		f, rejected, err := landFacts(g, t)
		if err != nil {
			return err
		}
		switch {
		case rejected:
			if err := g.RecordReject(t.ID(), t.PR); err != nil {
				return err
			}
			res.Refused = append(res.Refused, fmt.Sprintf("%s blocked (pull request #%d closed without merge)", t.ID(), t.PR))
		case !f.Merged:
			res.Waiting = append(res.Waiting, Shipped{Task: t.ID(), Issue: t.Spec.Issue, PR: t.PR})
		default:
			if err := g.RecordLand(f); err != nil {
				res.Refused = append(res.Refused, err.Error())
				continue
			}
			res.Landed = append(res.Landed, Shipped{Task: t.ID(), Issue: t.Spec.Issue, PR: t.PR})
		}
	}
	return nil
}

// fetchBase fetches the remote's base branch and returns its tip: what
// "on the base branch" is checked against, never a local branch that may
// be behind or ahead.
func fetchBase(g *engine.Engine) (string, error) {
	git := engine.Git(g.Store)
	remote, base := forgeRemote(g), baseBranch(g)
	if _, err := git.Run(g.Context(), "fetch", "-q", "--no-tags", remote, "refs/heads/"+base); err != nil {
		return "", &engine.Error{Kind: engine.Failed, What: "cannot fetch " + base + " from " + remote, Why: gitErr(err)}
	}
	tip, err := git.Line(g.Context(), "rev-parse", "--verify", "FETCH_HEAD^{commit}")
	if err != nil {
		return "", err
	}
	return tip, nil
}

func isAncestor(g *engine.Engine, a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	_, err := engine.Git(g.Store).Run(g.Context(), "merge-base", "--is-ancestor", a, b)
	return err == nil
}

// remoteHas says whether the remote's branch is exactly commit.
func remoteHas(g *engine.Engine, remote, branch, commit string) bool {
	out, err := engine.Git(g.Store).Line(g.Context(), "ls-remote", remote, "refs/heads/"+branch)
	return err == nil && strings.HasPrefix(out, commit)
}

// remoteHasWork says whether the remote's branch contains commit.
func remoteHasWork(g *engine.Engine, remote, branch, commit string) bool {
	out, err := engine.Git(g.Store).Line(g.Context(), "ls-remote", remote, "refs/heads/"+branch)
	if err != nil || len(out) < 40 {
		return false
	}
	return isAncestor(g, commit, out[:40])
}

func gitErr(err error) string {
	if ge, ok := err.(*gitcmd.Error); ok {
		return strings.TrimSpace(ge.Error())
	}
	return err.Error()
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "none"
	}
	return h
}
