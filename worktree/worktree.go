// Package worktree gives each worker of a rush its own linked worktree and
// branch, and merges a finished level into the feature's staging branch
// without touching the user's checkout.
//
// go-git v5 has no linked worktrees and no 3-way merge, so everything here
// runs the git binary, always through a gitcmd.Runner.
//
// Names, for a feature f:
//
//	zerg/<f>/staging        the staging branch (refs/heads/zerg/<f>/staging)
//	zerg/<f>/worker-<n>     worker n's branch, checked out in <Root>/worker-<n>
//	<Root>/staging          a detached worktree at the staging tip, for gates
//	<Root>/verify-<n>       worker n's verification checkout (see VerifyCheckout)
//
// Nothing here ever deletes work: a worktree with uncommitted changes or a
// branch with commits that staging lacks is refused with an *Error
// (ErrDirty, ErrUnmerged) unless the caller forces a removal, and a broken
// worker worktree that cannot be mended in place is moved aside whole
// (Repair). Verification checkouts hold nothing of anyone's: they are
// cleaned and removed at will.
package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// Errors. Refusals about one worktree come wrapped in an *Error that names it.
var (
	// ErrDirty: the worktree has uncommitted changes (untracked files count
	// for worker worktrees; ignored files never count).
	ErrDirty = errors.New("worktree has uncommitted changes")
	// ErrUnmerged: the branch or worktree HEAD has commits staging lacks.
	ErrUnmerged = errors.New("branch has commits not in staging")
	// ErrOccupied: the worktree's path exists but is not a worktree of
	// this repository.
	ErrOccupied = errors.New("path exists and is not a worktree of this repository")
	// ErrNoStaging: the feature's staging branch does not exist.
	ErrNoStaging = errors.New("staging branch does not exist")
	// ErrStagingMoved: the staging branch is not at the commit the caller
	// (or the merge) started from; nothing was written.
	ErrStagingMoved = errors.New("staging branch moved")
	// ErrCheckedOut: the staging branch is checked out in some worktree, so
	// moving it would change that checkout under its user.
	ErrCheckedOut = errors.New("staging branch is checked out")
	// ErrBadRevision: a revision does not name a commit.
	ErrBadRevision = errors.New("not a commit")
)

// Error is a refusal about one worktree or worker branch.
type Error struct {
	Dir     string   // the worktree (empty when only the branch exists)
	Branch  string   // its branch, short form, when known
	Err     error    // ErrDirty, ErrUnmerged, ErrOccupied or ErrBroken
	Paths   []string // ErrDirty: the changed paths
	Commits int      // ErrUnmerged: how many commits staging lacks
	Detail  string   // ErrBroken: what is wrong with it
}

func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.Dir != "" && e.Branch != "":
		fmt.Fprintf(&b, "worktree %s (branch %s)", e.Dir, e.Branch)
	case e.Dir != "":
		fmt.Fprintf(&b, "worktree %s", e.Dir)
	default:
		fmt.Fprintf(&b, "branch %s", e.Branch)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	if e.Detail != "" {
		fmt.Fprintf(&b, ": %s", e.Detail)
	}
	if e.Commits > 0 {
		fmt.Fprintf(&b, " (%d commits)", e.Commits)
	}
	if len(e.Paths) > 0 {
		const show = 5
		p := e.Paths
		if len(p) > show {
			p = p[:show]
		}
		fmt.Fprintf(&b, ": %s", strings.Join(p, ", "))
		if n := len(e.Paths) - show; n > 0 {
			fmt.Fprintf(&b, " and %d more", n)
		}
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// SetupError is a failed Manager.Setup command. The worktree exists.
type SetupError struct {
	Dir     string
	Command string
	Output  string // combined stdout and stderr
	Err     error
}

func (e *SetupError) Error() string {
	msg := strings.TrimSpace(e.Output)
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
		msg = msg[i+1:]
	}
	if msg != "" {
		return fmt.Sprintf("setup in %s: %v: %s", e.Dir, e.Err, msg)
	}
	return fmt.Sprintf("setup in %s: %v", e.Dir, e.Err)
}

func (e *SetupError) Unwrap() error { return e.Err }

// portRange is the number of ports reserved for each worker, starting at
// PortBase(n).
const portRange = 100

const firstPort = 20000

// PortBase is the first of the PortRange ports reserved for worker n
// (ZERG_PORT_BASE): 20000 + 100*n, so worker n owns [PortBase(n),
// PortBase(n)+99]. Worker numbers 0 to 454 stay below 65536.
func PortBase(n int) int { return firstPort + portRange*n }

// StagingBranch is the short name of a feature's staging branch.
func StagingBranch(feature string) string { return "zerg/" + feature + "/staging" }

// workerBranch is the short name of worker n's branch.
func workerBranch(feature string, n int) string {
	return "zerg/" + feature + "/worker-" + strconv.Itoa(n)
}

// ParseWorkerBranch splits a worker branch name (short, or under
// refs/heads/) into its feature and worker number.
func ParseWorkerBranch(branch string) (feature string, n int, ok bool) {
	branch = strings.TrimPrefix(branch, "refs/heads/")
	rest, ok := strings.CutPrefix(branch, "zerg/")
	if !ok {
		return "", 0, false
	}
	i := strings.LastIndex(rest, "/worker-")
	if i <= 0 {
		return "", 0, false
	}
	num := rest[i+len("/worker-"):]
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || strconv.Itoa(n) != num {
		return "", 0, false
	}
	return rest[:i], n, true
}

// WorkerOf returns the feature and worker name ("worker-<n>") of a worker
// branch, short or full.
func WorkerOf(branch string) (feature, worker string, ok bool) {
	f, n, ok := ParseWorkerBranch(branch)
	if !ok {
		return "", "", false
	}
	return f, fmt.Sprintf("worker-%d", n), true
}

// defaultRoot is where a feature's worktrees go by default: next to the main
// work tree top, outside it, so tools scanning the repository (and git's
// own untracked-file walk) never see them:
// <parent of top>/.zerg-worktrees/<repo name>/<feature>.
func defaultRoot(top, feature string) string {
	return filepath.Join(DefaultBase(top), filepath.FromSlash(feature))
}

// DefaultBase is the directory of DefaultRoot that holds every feature's
// root: <parent>/.zerg-worktrees/<name of the repository>.
func DefaultBase(top string) string {
	top = filepath.Clean(top)
	return filepath.Join(filepath.Dir(top), ".zerg-worktrees", filepath.Base(top))
}

// Manager manages one feature's worktrees and staging branch.
type Manager struct {
	Git     *gitcmd.Runner // the main repository
	Root    string         // where the feature's worktrees go; DefaultRoot when empty
	Feature string
	// Setup, when set, runs with `sh -c` in each newly created worker
	// worktree (not in a reused one), with ZERG_FEATURE, ZERG_WORKTREE,
	// ZERG_BRANCH and ZERG_PORT_BASE in its environment.
	Setup string
	// SetupUnset names variables Setup does not get (forge credentials):
	// it runs what the checkout holds, written by workers.
	SetupUnset []string
	// ReadRef, when set, answers what a full ref name points at ("" for
	// nothing) without starting git: staging is looked up at every level.
	ReadRef func(name string) string
	// Saved lists ref prefixes (refs/zerg/attempts/<feature>/, say) whose
	// commits count as kept: a worker branch whose work is saved there is
	// not unmerged work.
	Saved []string
	// Guard, when set, judges staging tips git-zerg did not set itself
	// (see guard.go).
	Guard Guard
	// CommonDir is the repository's common git directory; asked of git
	// when empty.
	CommonDir string
	// HooksPath, when set, is the core.hooksPath each worker worktree gets
	// as its own setting (extensions.worktreeConfig is on): the hooks
	// directory that stands in for a relative one, which git would resolve
	// in each worktree on its own.
	HooksPath string

	mu     sync.Mutex
	checks map[string]*verifyCheckout // verification checkouts set up by this Manager, by directory
}

// Worker is one worker's worktree.
type Worker struct {
	N      int
	Name   string // "worker-<n>"
	Branch string // "zerg/<feature>/worker-<n>"
	Dir    string
	Head   string // the commit checked out, when known
	// Interrupted: left half-made by a killed `git worktree add`; Add
	// rebuilds it, Remove removes it.
	Interrupted bool
	// Repaired: Add found the worktree broken and mended it, or moved it
	// aside and made it again (see Repair).
	Repaired *Repaired
}

func (m *Manager) stagingRef() string { return "refs/heads/" + StagingBranch(m.Feature) }

func (m *Manager) check() error {
	if m.Git == nil {
		return errors.New("worktree: Manager.Git is nil")
	}
	if m.Feature == "" {
		return errors.New("worktree: Manager.Feature is empty")
	}
	return nil
}

// at is a runner for another worktree of the same repository.
func (m *Manager) at(dir string) *gitcmd.Runner {
	return &gitcmd.Runner{Dir: dir, Env: m.Git.Env}
}

// resolve turns revisions into commit ids with one git process; a revision
// that names no commit gives "". Revisions go through stdin, so one that
// starts with "-" cannot become an option.
func (m *Manager) resolve(ctx context.Context, revs ...string) ([]string, error) {
	var in strings.Builder
	for _, r := range revs {
		if r == "" || strings.ContainsAny(r, "\n\x00") {
			return nil, fmt.Errorf("revision %q: %w", r, ErrBadRevision)
		}
		in.WriteString(r + "^{commit}\n")
	}
	out, err := m.Git.RunWith(ctx, gitcmd.Call{Stdin: strings.NewReader(in.String())},
		"cat-file", "--batch-check=%(objectname)")
	if err != nil {
		return nil, err
	}
	lines := gitcmd.Split(out, '\n')
	if len(lines) != len(revs) {
		return nil, fmt.Errorf("git cat-file --batch-check: %d answers for %d revisions", len(lines), len(revs))
	}
	for i, l := range lines {
		if strings.ContainsRune(l, ' ') { // "<rev> missing" / "<rev> ambiguous"
			lines[i] = ""
		}
	}
	return lines, nil
}

func (m *Manager) resolve1(ctx context.Context, rev string) (string, error) {
	c, err := m.resolve(ctx, rev)
	if err != nil {
		return "", err
	}
	return c[0], nil
}

// ensureStaging creates the staging branch at from (HEAD when empty) unless
// it exists, and returns its commit. The creation is a compare-and-swap
// against "no such ref", so two racing callers agree on one commit.
func (m *Manager) ensureStaging(ctx context.Context, from string) (tip string, created bool, err error) {
	if err := m.check(); err != nil {
		return "", false, err
	}
	ref := m.stagingRef()
	if m.ReadRef != nil {
		if tip := m.ReadRef(ref); tip != "" {
			return tip, false, nil
		}
	}
	if from == "" {
		from = "HEAD"
	}
	c, err := m.resolve(ctx, ref, from)
	if err != nil {
		return "", false, err
	}
	if c[0] != "" {
		return c[0], false, nil
	}
	if c[1] == "" {
		return "", false, fmt.Errorf("staging start %q: %w", from, ErrBadRevision)
	}
	// An empty old value means "must not exist yet", whatever the hash.
	_, err = m.Git.Run(ctx, "update-ref", "-m", "git-zerg: create staging", ref, c[1], "")
	if err != nil {
		if cur, rerr := m.resolve1(ctx, ref); rerr == nil && cur != "" {
			return cur, false, nil // lost the race to another creator: take theirs
		}
		return "", false, err
	}
	return c[1], true, nil
}

// entry is one record of `git worktree list --porcelain -z`.
type entry struct {
	dir, head, branch string // branch is a full ref name, "" when detached
	bare, detached    bool
	locked, prunable  bool
	lockReason        string
}

// interrupted: git locks a worktree "initializing" while `worktree add`
// builds it and unlocks it at the end, so this lock means an add that was
// killed half-way (kill -9 of a rush): nothing in it was ever handed to a
// worker, and git itself refuses to remove it without a double force.
func (e *entry) interrupted() bool { return e.locked && e.lockReason == "initializing" }

// removeInterrupted removes the worktree of an add that was killed
// half-way. git refuses to, even with a double force, when the kill came
// before it wrote the worktree's .git file ("validation failed ... is not
// a .git file"); its directory is then removed here first, after which
// git drops what it keeps of it. Nothing is lost: a worktree still locked
// "initializing" was never handed to a worker.
func (m *Manager) removeInterrupted(ctx context.Context, dir string) error {
	_, err := m.worktreeGit(ctx, "remove", "--force", "--force", dir)
	if err == nil || !strings.Contains(err.Error(), "validation failed") {
		return err
	}
	if rerr := os.RemoveAll(dir); rerr != nil {
		return err
	}
	_, err = m.worktreeGit(ctx, "remove", "--force", "--force", dir)
	return err
}

func (m *Manager) entries(ctx context.Context) ([]entry, error) {
	out, err := m.worktreeGit(ctx, "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	var list []entry
	var e *entry
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" {
			e = nil
			continue
		}
		key, val, _ := strings.Cut(f, " ")
		if key == "worktree" {
			list = append(list, entry{dir: val})
			e = &list[len(list)-1]
			continue
		}
		if e == nil {
			continue
		}
		switch key {
		case "HEAD":
			e.head = val
		case "branch":
			e.branch = val
		case "bare":
			e.bare = true
		case "detached":
			e.detached = true
		case "locked":
			e.locked, e.lockReason = true, val
		case "prunable":
			e.prunable = true
		}
	}
	return list, nil
}

// samePath reports whether two paths name the same directory.
func samePath(a, b string) bool {
	a, b = filepath.Clean(a), filepath.Clean(b)
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

func (m *Manager) root(list []entry) (string, error) {
	if m.Root != "" {
		return m.Root, nil
	}
	if len(list) == 0 {
		return "", errors.New("worktree: no main worktree listed")
	}
	return defaultRoot(list[0].dir, m.Feature), nil
}

// List returns this feature's worker worktrees, by worker number.
func (m *Manager) List(ctx context.Context) ([]Worker, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	list, err := m.entries(ctx)
	if err != nil {
		return nil, err
	}
	var ws []Worker
	for _, e := range list {
		f, n, ok := ParseWorkerBranch(e.branch)
		if !ok || f != m.Feature || !strings.HasPrefix(e.branch, "refs/heads/") {
			continue
		}
		ws = append(ws, Worker{N: n, Name: "worker-" + strconv.Itoa(n),
			Branch: workerBranch(f, n), Dir: e.dir, Head: e.head, Interrupted: e.interrupted()})
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].N < ws[j].N })
	return ws, nil
}

// Dirty reports whether the worktree at dir has uncommitted changes,
// untracked files included (ignored files never count).
func (m *Manager) Dirty(ctx context.Context, dir string) (bool, error) {
	p, err := m.changes(ctx, dir, true)
	return len(p) > 0, err
}

// changes lists the paths `git status` reports in dir.
func (m *Manager) changes(ctx context.Context, dir string, untracked bool) ([]string, error) {
	args := []string{"status", "--porcelain", "-z"}
	if !untracked {
		args = append(args, "--untracked-files=no")
	}
	fields, err := m.at(dir).Fields(ctx, 0, args...)
	if err != nil {
		return nil, err
	}
	var paths []string
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		paths = append(paths, f[3:])
		if f[0] == 'R' || f[0] == 'C' { // "XY new\0old"
			i++
		}
	}
	return paths, nil
}

// unmerged counts the commits reachable from tips but from none of bases.
func (m *Manager) unmerged(ctx context.Context, tips, bases []string) (int, error) {
	args := []string{"rev-list", "--count"}
	n := 0
	for _, t := range tips {
		if t != "" {
			args = append(args, t)
			n++
		}
	}
	if n == 0 {
		return 0, nil
	}
	args = append(args, "--not")
	for _, b := range bases {
		if b != "" {
			args = append(args, b)
		}
	}
	for _, p := range m.Saved {
		args = append(args, "--glob="+p+"*")
	}
	s, err := m.Git.Line(ctx, args...)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(s)
}

// find returns the worktree that has branch ref checked out, else the one
// at dir.
func find(list []entry, ref, dir string) *entry {
	for i := range list {
		if ref != "" && list[i].branch == ref {
			return &list[i]
		}
	}
	for i := range list {
		if dir != "" && samePath(list[i].dir, dir) {
			return &list[i]
		}
	}
	return nil
}

// occupied refuses a path that exists and is not an empty directory.
func occupied(dir, branch string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		if ents, err := os.ReadDir(dir); err == nil && len(ents) == 0 {
			return nil
		}
	}
	return &Error{Dir: dir, Branch: branch, Err: ErrOccupied}
}
