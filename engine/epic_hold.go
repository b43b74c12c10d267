package engine

import (
	"errors"
	"fmt"

	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
)

// EpicHold refuses work on a feature that its epic holds back: one of its
// hard dependencies is not complete. Run on its own, the feature would
// build from HEAD without what the dependency makes; rush --epic starts it
// once they are complete, from their staging. nil for a feature in no
// epic, the usual case, at the cost of a look at refs/zerg/epics.
func EpicHold(s *gitstore.Store, feature string) error {
	ep, err := s.EpicOf(feature)
	if err != nil || ep == nil {
		return err
	}
	for _, d := range ep.Feature(feature).Dependencies {
		done, total, err := featureProgress(s, d)
		if err != nil {
			return err
		}
		if total > 0 && done == total {
			continue
		}
		why := fmt.Sprintf("%d of %s done", done, words.Plural(total, "task"))
		if total < 0 {
			why = d + " is not planned"
		}
		return &Error{Kind: Refused, What: fmt.Sprintf("feature %s depends on %s, which is not complete", feature, d), Why: why,
			Hint: fmt.Sprintf("git zerg rush --epic %s runs %s first, then %s from its staging", ep.Name, d, feature)}
	}
	return nil
}

// featureProgress counts a feature's done tasks, from its task index: a
// claim asks, and must not read every task of the dependency. total is -1
// for a feature that is not planned.
func featureProgress(s *gitstore.Store, feature string) (done, total int, err error) {
	tx, err := s.View(feature)
	if errors.Is(err, gitstore.ErrNotFound) {
		return 0, -1, nil
	}
	if err != nil {
		return 0, 0, err
	}
	if !tx.Exists() {
		return 0, -1, nil
	}
	ix, err := tx.Index()
	if err != nil {
		return 0, 0, err
	}
	return ix.Counts()[string(state.Done)], len(ix.All()), nil
}
