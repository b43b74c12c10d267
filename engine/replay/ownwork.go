package replay

import (
	"context"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
)

// OwnWork is the task's own work between base and commit on a shared
// branch (see gates.OwnWork); tasks gives the feature's tasks, read only
// when some commit touches paths the task does not own. done's gate goes
// by it; fsck replays shared-mode done with it too.
func OwnWork(ctx context.Context, s *gitstore.Store, t *state.Task, base, commit string, tasks func() ([]*state.Task, error)) (touched []string, own bool, err error) {
	log, err := (&gitcmd.Runner{Dir: s.Dir()}).LogFiles(ctx, base+".."+commit, "--")
	if err != nil {
		return nil, false, err
	}
	commits := make([]gates.CommitFiles, 0, len(log))
	all := true
	for _, c := range log {
		commits = append(commits, gates.CommitFiles{Commit: c.Commit, Files: c.Files})
		all = all && len(gates.Unowned(t.Spec, c.Files)) == 0
	}
	var others []*state.Task
	if !all {
		all, err := tasks()
		if err != nil {
			return nil, false, err
		}
		for _, o := range all {
			if o.ID() != t.ID() && o.Status.Begun() {
				others = append(others, o)
			}
		}
	}
	touched, n := gates.OwnWork(commits, func(p string) bool {
		for _, o := range others {
			if len(gates.Unowned(o.Spec, []string{p})) == 0 {
				return true
			}
		}
		return false
	})
	return touched, n > 0, nil
}
