package hooks

import (
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/state"
)

// repoLocks returns every lock of the repository (expired ones included),
// through gitstore's cache of the locks ref: during a rush the ref holds a
// few hundred blobs, by far the largest cost of a pre-commit hook.
func repoLocks(s *gitstore.Store) ([]state.Lock, error) {
	tip, err := s.ReadRef(gitstore.LocksRef)
	if err != nil || tip.IsZero() {
		return nil, err
	}
	return s.LocksAt(tip)
}
