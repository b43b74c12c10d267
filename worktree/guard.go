package worktree

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// A worker can move the staging branch with plain git (`git update-ref`,
// `git branch -f`, `git push . x:zerg/f/staging`), and so can another clone
// on a shared remote. Whatever staging points at is what the next worker
// starts from and what the next merge builds on, so a tip git-zerg did not
// set is never taken as it is: it is judged by the Guard, and a tip that
// fails is put back (locally) or refused (from a remote).

// Guard keeps what git-zerg knows of staging. Its implementation lives with
// the state (it seals its record with the repository's key and knows the
// tasks' verified commits); the Manager asks it at every read and tells it
// of every move.
type Guard interface {
	// Known is the tip git-zerg last set staging to, "" when it has no
	// record of one.
	Known() string
	// Moved records that git-zerg set staging to tip.
	Moved(tip string) error
	// Check returns nil when tip may be built on although git-zerg did not
	// set it: it descends from known by merges of verified work only (a
	// move git-zerg made and had no time to record, or another host's
	// merge).
	Check(ctx context.Context, known, tip string) error
	// Restored reports a foreign tip put back to known.
	Restored(ctx context.Context, found, known string)
}

// ErrForeignStaging: staging is at a tip git-zerg did not set and that
// fails the Guard's check.
var ErrForeignStaging = errors.New("staging was moved outside git-zerg")

// ForeignError names a foreign staging tip.
type ForeignError struct {
	Branch, Found, Known string
	Why                  error
}

func (e *ForeignError) Error() string {
	return fmt.Sprintf("%s is at %s, which git-zerg did not set (it last set %s): %v", e.Branch, abbrev(e.Found), abbrev(e.Known), e.Why)
}

func (e *ForeignError) Unwrap() error { return ErrForeignStaging }

func abbrev(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "nothing"
	}
	return h
}

// EnsureStaging creates the staging branch at from (HEAD when empty) unless
// it exists, and returns the commit to build on. With a Guard, a staging
// tip git-zerg did not set and that fails its check is put back to the
// tip git-zerg last set, by compare-and-swap, and that tip is returned.
func (m *Manager) EnsureStaging(ctx context.Context, from string) (string, error) {
	tip, created, err := m.ensureStaging(ctx, from)
	if err != nil || m.Guard == nil {
		return tip, err
	}
	known := m.Guard.Known()
	switch {
	case tip == known:
		return tip, nil
	case known == "":
		// No record (a staging made before records were kept): taken as
		// it is, and recorded from now on.
		return tip, m.Guard.Moved(tip)
	case created && m.isAncestor(ctx, known, tip):
		// Deleted, and made again from a start that holds all it held
		// (the person finished the feature into the branch it starts
		// from): nothing git-zerg set is lost.
		return tip, m.Guard.Moved(tip)
	}
	if err := m.Guard.Check(ctx, known, tip); err == nil {
		return tip, m.Guard.Moved(tip)
	}
	// The ref moves back only from the foreign tip: should it move again
	// meanwhile, the next read judges that.
	if _, err := m.Git.Run(ctx, "update-ref", "-m", "git-zerg: staging put back to the tip git-zerg set", m.stagingRef(), known, tip); err != nil {
		return "", fmt.Errorf("put back %s: %w", StagingBranch(m.Feature), err)
	}
	m.Guard.Restored(ctx, tip, known)
	return known, nil
}

// LineBase is the newest commit on both a's and b's first-parent lines
// (within max commits of each), "" when there is none: where two lines of
// level merges forked. git merge-base would answer the merged work itself
// when both lines merged the same task.
func (m *Manager) LineBase(ctx context.Context, a, b string, max int) (string, error) {
	line := func(tip string) ([]string, error) {
		out, err := m.Git.Run(ctx, "rev-list", "--first-parent", fmt.Sprintf("--max-count=%d", max), tip)
		if err != nil {
			return nil, err
		}
		return gitcmd.Split(out, '\n'), nil
	}
	la, err := line(a)
	if err != nil {
		return "", err
	}
	lb, err := line(b)
	if err != nil {
		return "", err
	}
	onB := make(map[string]bool, len(lb))
	for _, c := range lb {
		onB[c] = true
	}
	for _, c := range la {
		if onB[c] {
			return c, nil
		}
	}
	return "", nil
}

func (m *Manager) isAncestor(ctx context.Context, a, b string) bool {
	_, err := m.Git.Run(ctx, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

// moved tells the Guard of a move git-zerg made.
func (m *Manager) moved(tip string) error {
	if m.Guard == nil {
		return nil
	}
	return m.Guard.Moved(tip)
}

// Moved records a staging move made outside this package's own moves (the
// in-process merge of disjoint work writes the ref itself).
func (m *Manager) Moved(tip string) error { return m.moved(tip) }

// StagingCommit is one commit of staging's first-parent history, as the
// Guard's check reads it.
type StagingCommit struct {
	Hash, Tree string
	Parents    []string
}

// FirstParents lists staging's first-parent history from tip down to (not
// including) known, newest first, at most max commits; more says the walk
// was cut short. A known tip that is not on that line lists the line to
// its root.
func (m *Manager) FirstParents(ctx context.Context, tip, known string, max int) (cs []StagingCommit, more bool, err error) {
	args := []string{"log", "--first-parent", "--format=%H %T %P", fmt.Sprintf("-n%d", max+1), tip}
	if known != "" {
		args = append(args, "--not", known)
	}
	out, err := m.Git.Run(ctx, args...)
	if err != nil {
		return nil, false, err
	}
	for _, l := range gitcmd.Split(out, '\n') {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		cs = append(cs, StagingCommit{Hash: f[0], Tree: f[1], Parents: f[2:]})
	}
	if len(cs) > max {
		return cs[:max], true, nil
	}
	return cs, false, nil
}

// MergeTree is the tree git's 3-way merge of ours and theirs makes
// (`git merge-tree --write-tree`, the merge git-zerg's level merges make);
// clean is false when they conflict.
func (m *Manager) MergeTree(ctx context.Context, ours, theirs string) (tree string, clean bool, err error) {
	out, err := m.Git.Run(ctx, "merge-tree", "--write-tree", "--no-messages", ours, theirs)
	switch gitcmd.ExitCode(err) {
	case -1:
		if err != nil {
			return "", false, err
		}
		clean = true
	case 1:
	default:
		return "", false, err
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(line), clean, nil
}
