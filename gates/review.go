package gates

import (
	"fmt"

	"github.com/git-zerg/git-zerg/state"
)

// Review on a forge (forge.review): a verified task goes to review in a
// pull request (op "ship", verified → verified, the PR recorded), and
// becomes done only once that PR is merged into the base branch with its
// work (op "land"). What the forge and git say is gathered by the engine
// and handed in here.

// ShipFacts are what the ship gate needs.
type ShipFacts struct {
	Task *state.Task
	// PerTask: forge.review = "task", one branch and PR per task, named
	// after its issue.
	PerTask bool
	// Branch is the branch pushed for review; Pushed says the remote's
	// branch holds the task's work.
	Branch string
	Pushed bool
	// PR is the pull request opened or updated for the branch.
	PR int
}

// Ship checks verified → verified with a pull request recorded.
func Ship(f ShipFacts) error {
	t := f.Task
	var why []string
	if t.Status != state.Verified {
		why = append(why, fmt.Sprintf("task is %s, not verified", t.Status))
	}
	if f.PerTask && t.Spec.Issue == 0 {
		why = append(why, "the task has no issue to name its review branch after")
	}
	if f.Branch == "" || !f.Pushed {
		why = append(why, fmt.Sprintf("its work %s is not on the remote's %s", short(t.Commit), orWord(f.Branch, "review branch")))
	}
	if f.PR <= 0 {
		why = append(why, "no pull request")
	}
	if len(why) > 0 {
		return refuse(t, state.OpShip, why...)
	}
	return nil
}

// LandFacts are what the land gate needs.
type LandFacts struct {
	Task *state.Task
	// Merged: the task's PR is merged; MergeCommit is its merge commit.
	Merged      bool
	MergeCommit string
	// Base is the base branch; OnBase: the merge commit is on it, as
	// fetched from the remote; HasWork: the merge commit contains the
	// task's verified commit.
	Base    string
	OnBase  bool
	HasWork bool
	// Head is what the merge commit brought in (its second parent, as git
	// says, not as the forge does); HeadVerified: Head is work the tool
	// verified, the task's verified commit itself (a pull request per task)
	// or a commit of staging (per feature). A commit pushed onto the
	// review branch after ship would otherwise ride in on the task's done.
	Head         string
	HeadVerified bool
	// IssueClosed: the task's issue is closed (or it has none).
	IssueClosed bool
}

// Land checks verified (in review) → done.
func Land(f LandFacts) error {
	t := f.Task
	var why []string
	switch {
	case t.Status != state.Verified:
		why = append(why, fmt.Sprintf("task is %s, not verified", t.Status))
	case t.PR == 0:
		why = append(why, "the task is not in review: no pull request recorded (git zerg ship)")
	case !f.Merged:
		why = append(why, fmt.Sprintf("pull request #%d is not merged", t.PR))
	case f.MergeCommit == "" || !f.OnBase:
		why = append(why, fmt.Sprintf("merge commit %s of pull request #%d is not on %s", short(f.MergeCommit), t.PR, f.Base))
	case !f.HasWork:
		why = append(why, fmt.Sprintf("merge commit %s of pull request #%d does not contain the task's work %s", short(f.MergeCommit), t.PR, short(t.Commit)))
	case !f.HeadVerified:
		why = append(why, fmt.Sprintf("merge commit %s of pull request #%d merged %s, not the work verified (%s)", short(f.MergeCommit), t.PR, short(f.Head), short(t.Commit)))
	case !f.IssueClosed:
		why = append(why, fmt.Sprintf("issue #%d is still open", t.Spec.Issue))
	}
	if len(why) > 0 {
		return refuse(t, state.OpLand, why...)
	}
	return nil
}

func orWord(s, w string) string {
	if s == "" {
		return w
	}
	return s
}

// IssueFacts are what the forge says of a task's issue, for sync --forge.
type IssueFacts struct {
	Task *state.Task
	// Open: the issue is open on the forge now.
	Open bool
	// KnownClosed: the task's history says the issue was closed (its last
	// land or close).
	KnownClosed bool
}

// Reopen checks done → blocked: the issue of a done task, known closed,
// was reopened on the forge.
func Reopen(f IssueFacts) error {
	t := f.Task
	var why []string
	if t.Status != state.Done {
		why = append(why, fmt.Sprintf("task is %s, not done", t.Status))
	}
	if t.Spec.Issue == 0 || !f.Open || !f.KnownClosed {
		why = append(why, "its issue was not reopened")
	}
	if len(why) > 0 {
		return refuse(t, state.OpReopen, why...)
	}
	return nil
}

// Close checks → blocked for a task whose issue was closed on the forge
// before its work was done: whoever can close the issue (its author, say)
// takes the task out of the rush, and its dependents wait, for closing an
// issue is no fact about the work. A claimed task is left to its worker,
// and a task in review to its pull request.
func Close(f IssueFacts) error {
	t := f.Task
	var why []string
	switch {
	case !state.OpClose.Legal(t.Status, state.Blocked):
		why = append(why, fmt.Sprintf("task is %s", t.Status))
	case t.PR != 0:
		why = append(why, fmt.Sprintf("the task is in review: pull request #%d decides", t.PR))
	}
	if t.Spec.Issue == 0 || f.Open {
		why = append(why, "its issue is not closed")
	}
	if len(why) > 0 {
		return refuse(t, state.OpClose, why...)
	}
	return nil
}
