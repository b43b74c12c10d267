package gitstore

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Layout names the files git-zerg keeps in .git/zerg/: this clone's own,
// beside the shared state under refs/zerg/, never pushed or fetched, and
// shared by the clone's linked worktrees. Every path there is made here,
// so that no two packages spell one file apart, and the table of them in
// docs/layout.md has one place to agree with.
//
// Feature and task names are joined as given: callers pass names that
// levels.ValidFeatureName and levels.ValidID accept (a name from a request
// is checked first), which hold no separator and no "..".
type Layout struct{ dir string }

// LayoutOf is the layout of the repository whose common git directory is
// commonDir.
func LayoutOf(commonDir string) Layout { return Layout{dir: filepath.Join(commonDir, "zerg")} }

// Layout is the layout of the store's repository.
func (s *Store) Layout() Layout { return LayoutOf(s.CommonDir) }

// Dir is .git/zerg itself.
func (l Layout) Dir() string { return l.dir }

func (l Layout) path(parts ...string) string {
	return filepath.Join(append([]string{l.dir}, parts...)...)
}

// Key holds the repository's key, with which state is sealed (0600).
func (l Layout) Key() string { return l.path("gates.key") }

// HostID holds the clone's host identity.
func (l Layout) HostID() string { return l.path("host-id") }

// WriterLock is the file whose lock orders this clone's writers.
func (l Layout) WriterLock() string { return l.path("writer.lock") }

// CurrentFeature names the feature chosen with `use`, or planned last.
func (l Layout) CurrentFeature() string { return l.path("feature") }

// Hooks records whether git-zerg's hooks were installed or uninstalled.
func (l Layout) Hooks() string { return l.path("hooks") }

// GitHooks is git-zerg's own hooks directory, which stands in for a
// relative core.hooksPath in the worktrees whose own setting points at it.
func (l Layout) GitHooks() string { return l.path("githooks") }

// InfoOrig keeps the user's files of .git/info while a rush has its own there.
func (l Layout) InfoOrig() string { return l.path("info.orig") }

// ReflogChecked is how far a ref's reflog was last checked.
func (l Layout) ReflogChecked(ref string) string {
	return l.path("reflog-checked", filepath.FromSlash(ref))
}

// DemoBinary is the copy of git-zerg a demo repository keeps when the
// binary that made it is one `go run` deletes.
func (l Layout) DemoBinary() string { return l.path("bin", "git-zerg") }

// ClaudeSession is the state of a Claude Code session, by a file name
// made safe from its id.
func (l Layout) ClaudeSession(file string) string { return l.path("claude", file) }

// Caches: every file under cache/ can be removed at any time; it is
// rebuilt from the state.

// TaskCache is the feature's tasks, decoded.
func (l Layout) TaskCache(feature string) string { return l.cache(feature + ".tasks") }

// TaskCacheDelta holds the shards changed since TaskCache was written.
func (l Layout) TaskCacheDelta(feature string) string { return l.cache(feature + ".delta.tasks") }

// WorkersCache is the feature's workers, decoded.
func (l Layout) WorkersCache(feature string) string { return l.cache(feature + ".workers") }

// Index is the feature's task index.
func (l Layout) Index(feature string) string { return l.cache(feature + ".index") }

// IndexDelta holds the index changes since Index was written.
func (l Layout) IndexDelta(feature string) string { return l.cache(feature + ".index-delta") }

// TaskJSON is the feature's tasks as `status --json` renders them.
func (l Layout) TaskJSON(feature string) string { return l.cache(feature + ".task-json") }

// LegacyCaches are the feature's cache files of format 1, removed on sight.
func (l Layout) LegacyCaches(feature string) []string {
	return []string{l.cache(feature + ".gob"), l.cache(feature + ".delta.gob"), l.cache(feature + ".workers.json")}
}

// LocksCache is the locks, decoded.
func (l Layout) LocksCache() string { return l.cache("locks") }

// LocksTip is the locks of the last locks tip asked for.
func (l Layout) LocksTip() string { return l.cache("locks-tip") }

func (l Layout) cache(name string) string { return l.path("cache", name) }

// RushDir holds the marker of each feature's running rush.
func (l Layout) RushDir() string { return l.path("rush") }

// Rush is the marker of the feature's running rush: who holds it.
func (l Layout) Rush(feature string) string { return l.path("rush", feature+".json") }

// RunRoot holds what rushes keep of their tasks' runs (0700).
func (l Layout) RunRoot() string { return l.path("run") }

// RunFeature holds the runs of the feature's tasks.
func (l Layout) RunFeature(feature string) string { return l.path("run", feature) }

// RunDir is where a task's rush files are: its prompts, its task file,
// each attempt's log and its worker's note.
func (l Layout) RunDir(feature, task string) string { return l.path("run", feature, task) }

// AttemptLog is the log of a task's attempt n.
func (l Layout) AttemptLog(feature, task string, n int) string {
	return filepath.Join(l.RunDir(feature, task), fmt.Sprintf("attempt-%d.log", n))
}

// AttemptOf is the attempt whose log a file of a run directory is, if it
// is one.
func AttemptOf(file string) (int, bool) {
	n, ok := strings.CutPrefix(file, "attempt-")
	n, ok2 := strings.CutSuffix(n, ".log")
	i, err := strconv.Atoi(n)
	return i, ok && ok2 && err == nil && i > 0
}

// Prompt is the prompt of a task's attempt n.
func (l Layout) Prompt(feature, task string, n int) string {
	return filepath.Join(l.RunDir(feature, task), fmt.Sprintf("prompt-%d.md", n))
}

// TaskFile is the task's spec, as its worker is given it.
func (l Layout) TaskFile(feature, task string) string {
	return filepath.Join(l.RunDir(feature, task), "task.json")
}

// Note is where a task's worker may leave a note for the tasks that
// depend on it.
func (l Layout) Note(feature, task string) string {
	return filepath.Join(l.RunDir(feature, task), "note.md")
}

// ProcessGroup records the process group of a task's worker command.
func (l Layout) ProcessGroup(feature, task string) string {
	return filepath.Join(l.RunDir(feature, task), "pgid")
}

// GateGroup records the process group of the quality gate a rush of the
// feature is running, for a later rush to end it when this one died.
func (l Layout) GateGroup(feature string) string {
	return l.path("run", feature, "gates.pgid")
}

// Seen is the feature's tip as the last fsck saw it.
func (l Layout) Seen(feature string) string { return l.path("seen", feature) }

// Staging is the feature's staging tip as git-zerg last set it.
func (l Layout) Staging(feature string) string { return l.path("staging", feature) }

// Verified records the last pass of a task's verification run here.
func (l Layout) Verified(feature, task string) string { return l.path("verified", feature, task) }

// Trusted lists the feature's task digests this machine trusts.
func (l Layout) Trusted(feature string) string { return l.path("trusted", feature) }

// Accepted keeps the specs the feature's trust was given to; a directory
// of its own, since a feature may be named "x.json".
func (l Layout) Accepted(feature string) string { return l.path("accepted", feature+".json") }

// Checked is the feature's tip as last checked.
func (l Layout) Checked(feature string) string { return l.path("checked", feature) }
