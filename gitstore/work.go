package gitstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// Refs that keep work reachable, besides the state itself. Every name
// under refs/zerg/ is spelled here and nowhere else.
const (
	// WorkPrefix: a verified task's commit, pinned until the level merge
	// (refs/zerg/work/<feature>/<task>).
	WorkPrefix = ZergPrefix + "work/"
	// AttemptsPrefix: failed attempts and rescued leftovers
	// (refs/zerg/attempts/<feature>/<task or worker>/<n or commit>).
	AttemptsPrefix = ZergPrefix + "attempts/"
	// GatesPrefix: a tree that passed the quality gates
	// (refs/zerg/gates/<tree>); GatesFailedPrefix: the last failed run.
	GatesPrefix       = ZergPrefix + "gates/"
	GatesFailedPrefix = ZergPrefix + "gates-failed/"
)

// WorkRef is where a verified task's commit is pinned.
func WorkRef(feature, task string) string { return WorkPrefix + feature + "/" + task }

// GatesRef is the record of a tree that passed the gates.
func GatesRef(tree string) string { return GatesPrefix + tree }

// GatesFailedRef is the record of a tree's last failed gate run.
func GatesFailedRef(tree string) string { return GatesFailedPrefix + tree }

// SavedPrefixes are the refs that keep a feature's work outside the worker
// branches: verified work until merged, failed attempts and leftovers.
func SavedPrefixes(feature string) []string {
	return []string{WorkPrefix + feature + "/", AttemptsPrefix + feature + "/"}
}

// SaveAttempt keeps commit reachable under refs/zerg/attempts/<feature>/<name>/<id>,
// so that nothing a worker made is lost when its branch moves on. It
// returns the ref.
func (s *Store) SaveAttempt(ctx context.Context, feature, name, id, commit string) (string, error) {
	ref := AttemptsPrefix + feature + "/" + name + "/" + id
	if !plumbing.IsHash(commit) {
		return "", fmt.Errorf("save attempt %s: %q is not a commit id", ref, commit)
	}
	return ref, s.updateRefs(ctx, []refUpdate{{Name: ref, New: plumbing.NewHash(commit), Unchecked: true}})
}

// SavedCommit names a ref under the feature's saved prefixes that keeps
// commit (or a descendant of it), "" when none does.
func (s *Store) SavedCommit(ctx context.Context, feature, commit string) (string, error) {
	return s.git.Line(ctx, append([]string{"for-each-ref", "--count=1", "--format=%(refname)", "--contains", commit}, SavedPrefixes(feature)...)...)
}

// DropWorkRefs deletes the feature's pinned work and saved attempts, in
// one transaction, and returns how many refs it deleted.
func (s *Store) DropWorkRefs(ctx context.Context, feature string) (int, error) {
	refs, err := s.git.Fields(ctx, '\n', append([]string{"for-each-ref", "--format=%(refname)"}, SavedPrefixes(feature)...)...)
	if err != nil {
		return 0, err
	}
	var us []refUpdate
	for _, r := range refs {
		if strings.HasPrefix(r, ZergPrefix) {
			us = append(us, refUpdate{Name: r, Delete: true})
		}
	}
	if len(us) == 0 {
		return 0, nil
	}
	return len(us), s.updateRefs(ctx, us)
}
