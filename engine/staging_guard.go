package engine

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/git-zerg/git-zerg/engine/trust"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
	"github.com/git-zerg/git-zerg/worktree"
)

// stagingGuard is the worktree.Guard of a feature: it keeps the tip
// git-zerg last set staging to in <common dir>/zerg/staging/<feature>,
// sealed with the repository's key (a worker can write the file, not the
// seal), and judges any other tip by the facts: every commit between it
// and the known tip must be a merge git-zerg would have made, of a task's
// verified work, with exactly the tree git's merge of its parents gives.
// That holds for a move git-zerg made and had no time to record (a crash)
// and for another host's level merge, and fails for anything else a
// worker or another clone can put there.
type stagingGuard struct {
	g *Engine
	m *worktree.Manager
}

const stagingDomain = "git-zerg staging tip"

// maxStagingWalk bounds the check: a level merge adds one commit per task.
const maxStagingWalk = 10000

// stagingRecordFile is where the tip git-zerg last set is kept.
func stagingRecordFile(s *gitstore.Store, feature string) string {
	return s.Layout().Staging(feature)
}

func (sg *stagingGuard) Known() string {
	s, feature := sg.g.Store, sg.g.Feature
	b, err := os.ReadFile(stagingRecordFile(s, feature))
	if err != nil {
		return ""
	}
	tip, seal, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	if !s.Sealed(seal, stagingDomain, feature, tip) {
		// Not ours: as if there were none, so the tip is taken as it
		// is once. Only a worker that can also read the key gets past.
		return ""
	}
	return tip
}

func (sg *stagingGuard) Moved(tip string) error {
	s, feature := sg.g.Store, sg.g.Feature
	seal, err := s.Seal(stagingDomain, feature, tip)
	if err != nil {
		return err
	}
	return gitstore.WritePrivate(stagingRecordFile(s, feature), []byte(tip+" "+seal+"\n"))
}

func (sg *stagingGuard) Check(ctx context.Context, known, tip string) error {
	err := sg.checkFrom(ctx, known, tip)
	if err == nil {
		return nil
	}
	// A host whose own merge lost the race to another's holds a tip the
	// remote never took; the remote's staging then descends not from it
	// but from where both merges started. Both lines must hold only merges
	// of verified work from there.
	base, berr := sg.m.LineBase(ctx, known, tip, maxStagingWalk)
	if berr != nil || base == "" || base == known || base == tip {
		return err
	}
	if sg.checkFrom(ctx, base, known) != nil {
		return err
	}
	return sg.checkFrom(ctx, base, tip)
}

func (sg *stagingGuard) checkFrom(ctx context.Context, known, tip string) error {
	tx, err := sg.g.Store.View(sg.g.Feature)
	if err != nil {
		return err
	}
	tasks, err := tx.Tasks()
	if err != nil {
		return err
	}
	work := map[string]*state.Task{} // verified commit -> task
	for _, t := range tasks {
		if t.Commit != "" && t.Status.HasWork() {
			work[t.Commit] = t
		}
	}
	cs, more, err := sg.m.FirstParents(ctx, tip, known, maxStagingWalk)
	if err != nil {
		return err
	}
	switch {
	case more:
		return fmt.Errorf("more than %d commits above %s", maxStagingWalk, words.ShortHash(known))
	case len(cs) == 0:
		return fmt.Errorf("it is behind %s: moved back", words.ShortHash(known))
	}
	for _, c := range cs {
		if len(c.Parents) != 2 {
			return fmt.Errorf("commit %s is not a merge of a task's work", words.ShortHash(c.Hash))
		}
		t, ok := work[c.Parents[1]]
		if !ok {
			return fmt.Errorf("commit %s merges %s, which is no task's verified work", words.ShortHash(c.Hash), words.ShortHash(c.Parents[1]))
		}
		id := t.ID()
		tree, clean, err := sg.m.MergeTree(ctx, c.Parents[0], c.Parents[1])
		if err != nil {
			return err
		}
		if !clean || tree != c.Tree {
			return fmt.Errorf("commit %s, a merge of %s, holds other files than the merge of %s's work gives", words.ShortHash(c.Hash), id, id)
		}
	}
	if oldest := cs[len(cs)-1]; oldest.Parents[0] != known {
		return fmt.Errorf("it does not descend from %s", words.ShortHash(known))
	}
	// Merged by another host, or by a process whose record is gone: its
	// verification must have passed here too before anything builds on it.
	g := sg.g
	for _, c := range cs {
		t := work[c.Parents[1]]
		if trust.VerifiedHere(g.Store, g.Feature, t, t.Commit) || g.trustedVerifier(t) {
			continue
		}
		ok, why, err := g.verifyAgain(t, t.Commit)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%s: %s", t.ID(), why)
		}
	}
	return nil
}

func (sg *stagingGuard) Restored(ctx context.Context, found, known string) {
	g := sg.g
	kept := ""
	if ref, err := g.Store.SaveAttempt(ctx, g.Feature, "staging", found, found); err == nil {
		kept = ", the moved commit kept as " + ref
	}
	g.Note("warning: %s was moved outside git-zerg to %s; put back to %s%s", worktree.StagingBranch(g.Feature), words.ShortHash(found), words.ShortHash(known), kept)
}
