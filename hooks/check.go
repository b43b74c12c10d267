package hooks

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gates"
	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/levels"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/worktree"
)

// Identity is who commits or pushes: in a worker worktree the
// worker of its branch, elsewhere ZERG_WORKER when set, else the user. The
// CLI resolves it; Owner is called only when a lock is in the way, because
// finding the user may cost a git process.
type Identity struct {
	// Feature and Worker are set in a worker worktree (branch
	// zerg/<feature>/worker-<n>).
	Feature, Worker string
	// Owner returns the lock owner identity of whoever commits or pushes.
	Owner func() string
	// WorkerOwner returns the lock owner identity of a worker (worker@host).
	WorkerOwner func(worker string) string
}

// Problem is one reason a commit or a push is refused.
type Problem struct {
	Path   string // the path at fault ("" for a ref-level problem)
	Commit string // pre-push: the commit that changes Path
	Ref    string // pre-push: the pushed ref, as "local -> remote"
	What   string // what is wrong, naming the holder and the task
	Hint   string // what to do about it
}

func (p Problem) String() string {
	subject := displayPath(p.Path)
	switch {
	case p.Path == "":
		subject = p.Ref
	case p.Commit != "":
		subject += " (commit " + short(p.Commit) + ")"
	}
	s := subject + ": " + p.What
	if p.Hint != "" {
		s += "; " + p.Hint
	}
	return s
}

// Staged returns the staged paths of the commit being made.
type Staged func() ([]string, error)

// startStaged starts listing the staged paths of dir at once (what `git
// diff-index --cached --name-only -z --no-renames HEAD` prints, computed in
// this process when it can be done exactly, else by git), so that the list
// is made while the state is being read; the Staged it returns waits for
// the answer. Cancel ctx to stop it when PreCommit turns out not to need
// it. A rename is listed as both its paths, a deletion as its path; the
// index is the one git is committing (GIT_INDEX_FILE, a temporary one for
// `git commit PATH...`).
func startStaged(ctx context.Context, dir string) Staged {
	type result struct {
		paths []string
		err   error
	}
	ch := make(chan result, 1)
	go func() {
		if paths, err := stagedInProcess(ctx, dir); err == nil {
			ch <- result{paths, nil}
			return
		}
		git := &gitcmd.Runner{Dir: dir}
		// The plumbing command starts faster than `git diff`; before the
		// first commit there is no HEAD to compare with, and `git diff
		// --cached` compares with the empty tree.
		paths, err := git.Fields(ctx, 0, "diff-index", "--cached", "--name-only", "-z", "--no-renames", "HEAD", "--")
		if err != nil && ctx.Err() == nil {
			if _, herr := git.Run(ctx, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); herr != nil {
				paths, err = git.Fields(ctx, 0, "diff", "--cached", "--name-only", "-z", "--no-renames")
			}
		}
		ch <- result{paths, err}
	}()
	return sync.OnceValues(func() ([]string, error) {
		r := <-ch
		return r.paths, r.err
	})
}

// preCommit checks the staged paths: in a worker worktree (id.Worker set)
// each must belong to the worker's claimed task; anywhere, none may be
// under an active lock of another owner. It reads the locks (through a
// cache keyed by the locks ref tip) and, in a worker worktree, the worker's
// lease and task; nothing else unless it refuses. staged is not called when
// nothing could refuse the commit.
func preCommit(s *gitstore.Store, id Identity, now time.Time, staged Staged) ([]Problem, error) {
	all, err := repoLocks(s)
	if err != nil {
		return nil, err
	}
	locks := active(all, now)
	var c *claim
	if id.Worker != "" {
		if c, err = claimOf(s, id); err != nil {
			return nil, err
		}
	} else if len(locks) == 0 {
		return nil, nil
	}
	paths, err := staged()
	if err != nil || len(paths) == 0 {
		return nil, err
	}
	var out []Problem
	if c != nil {
		out = c.check(id, paths)
		if out, err = frozenProblems(s, id, paths, out); err != nil {
			return nil, err
		}
	}
	for _, cf := range lockConflicts(paths, locks, lazyOwner(id), now) {
		out = append(out, Problem{Path: cf.Path, What: holderText(cf), Hint: commitLockHint(cf, id)})
	}
	sortProblems(out)
	return out, nil
}

// claim is what a worker may commit: the task it holds, or the reason it
// may commit nothing.
type claim struct {
	tx     *gitstore.Tx
	task   *state.Task
	refuse *Problem
}

// claimOf reads the worker's lease and its task, and nothing else.
func claimOf(s *gitstore.Store, id Identity) (*claim, error) {
	tx, err := s.View(id.Feature)
	if errors.Is(err, gitstore.ErrNotFound) {
		return &claim{refuse: &Problem{
			What: fmt.Sprintf("this is a worktree of %s, but feature %s is not planned", id.Worker, id.Feature),
			Hint: "commit on another branch, or plan the feature first"}}, nil
	}
	if err != nil {
		return nil, err
	}
	ws, err := tx.Workers()
	if err != nil {
		return nil, err
	}
	lease, ok := ws[id.Worker]
	if !ok {
		return &claim{refuse: &Problem{
			What: fmt.Sprintf("%s holds no claimed task in feature %s", id.Worker, id.Feature),
			Hint: fmt.Sprintf("claim one first: git zerg claim --worker %s", id.Worker)}}, nil
	}
	t, err := tx.Task(lease.Task)
	if err != nil {
		return nil, err
	}
	if err := gates.Holder(t, "commit", id.Worker); err != nil {
		why := err.Error()
		var r *gates.Refusal
		if errors.As(err, &r) {
			why = strings.Join(r.Reasons, "; ")
		}
		return &claim{refuse: &Problem{
			What: fmt.Sprintf("%s's lease names %s, but %s", id.Worker, t.ID(), why),
			Hint: fmt.Sprintf("claim a task again: git zerg claim --worker %s", id.Worker)}}, nil
	}
	return &claim{tx: tx, task: t}, nil
}

// check lists the staged paths the claimed task does not own.
func (c *claim) check(id Identity, staged []string) []Problem {
	var out []Problem
	if c.refuse != nil {
		for _, p := range staged {
			q := *c.refuse
			q.Path = p
			out = append(out, q)
		}
		return out
	}
	t := c.task
	unowned := gates.Unowned(t.Spec, staged)
	if len(unowned) == 0 {
		return nil
	}
	// Who owns them instead is worth reading the other tasks for, but only
	// now that the commit is refused anyway.
	tasks, _ := c.tx.Tasks()
	for _, p := range unowned {
		what := fmt.Sprintf("not owned by %s (held by %s in %s)", t.ID(), id.Worker, id.Feature)
		if len(t.Spec.Owned()) == 0 {
			what = fmt.Sprintf("%s is a check-only task and may not change files (held by %s in %s)", t.ID(), id.Worker, id.Feature)
		}
		if others := ownersOf(tasks, p, t.ID()); len(others) > 0 {
			what += "; it belongs to " + strings.Join(others, ", ")
		}
		out = append(out, Problem{Path: p, What: what,
			Hint: "leave it out of this commit: git restore --staged -- " + shellQuoteIfNeeded(p)})
	}
	return out
}

func ownersOf(tasks []*state.Task, path, except string) []string {
	var out []string
	for _, t := range tasks {
		if t.ID() == except {
			continue
		}
		for _, pat := range t.Spec.Owned() {
			if levels.Match(pat, path) {
				out = append(out, t.ID())
				break
			}
		}
	}
	return out
}

// lazyOwner resolves the identity once, the first time a lock needs it.
func lazyOwner(id Identity) func() string {
	var owner string
	done := false
	return func() string {
		if !done {
			if id.Worker != "" && id.WorkerOwner != nil {
				owner = id.WorkerOwner(id.Worker)
			} else if id.Owner != nil {
				owner = id.Owner()
			}
			done = true
		}
		return owner
	}
}

// lockConflicts is gates.LockConflicts with the owner asked only when some
// active lock covers a path at all.
func lockConflicts(paths []string, locks []state.Lock, owner func() string, now time.Time) []gates.Conflict {
	if len(locks) == 0 {
		return nil
	}
	// No lock has an empty owner: this lists every covering lock.
	cands := gates.LockConflicts(paths, locks, "", now)
	if len(cands) == 0 {
		return nil
	}
	me := owner()
	var out []gates.Conflict
	for _, c := range cands {
		if c.Lock.Owner != me {
			out = append(out, c)
		}
	}
	return out
}

func holderText(c gates.Conflict) string {
	l := c.Lock
	s := "locked by " + l.Owner
	if c.Path != l.Path {
		s = "under lock " + l.Path + " held by " + l.Owner
	}
	switch {
	case l.Task != "":
		s += " for task " + l.Feature + "/" + l.Task
	case l.Reason != "":
		s += " (" + l.Reason + ")"
	}
	return s + ", until " + l.Expires.UTC().Format("2006-01-02 15:04Z")
}

// commitLockHint is lockHint for a commit. In a shared checkout the holder
// may be the very agent committing, who forgot to say which worker it is:
// then waiting for its own task would wait forever, so the hint names the
// worker to commit as, when that worker runs on this host.
func commitLockHint(c gates.Conflict, id Identity) string {
	l := c.Lock
	if l.Task == "" || id.Worker != "" || id.WorkerOwner == nil || os.Getenv("ZERG_WORKER") != "" {
		return lockHint(c, true)
	}
	at := strings.LastIndexByte(l.Owner, '@')
	if at <= 0 || id.WorkerOwner(l.Owner[:at]) != l.Owner {
		return lockHint(c, true)
	}
	w := l.Owner[:at]
	return "if this is " + w + "'s work on " + l.Task + ", commit as that worker: ZERG_WORKER=" + w +
		" git commit ...; otherwise " + lockHint(c, true)
}

func lockHint(c gates.Conflict, commit bool) string {
	l := c.Lock
	var wait string
	if l.Task != "" {
		wait = "wait until " + l.Task + " is done"
	} else {
		wait = "ask " + l.Owner + " to run git zerg unlock " + shellQuoteIfNeeded(l.Path)
	}
	if commit {
		return wait + ", or leave it out: git restore --staged -- " + shellQuoteIfNeeded(c.Path)
	}
	return wait + ", then push again"
}

func active(locks []state.Lock, now time.Time) []state.Lock {
	var out []state.Lock
	for _, l := range locks {
		if l.Active(now) {
			out = append(out, l)
		}
	}
	return out
}

func sortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Ref != ps[j].Ref {
			return ps[i].Ref < ps[j].Ref
		}
		return ps[i].Path < ps[j].Path
	})
}

// PushLine is one line git writes to a pre-push hook's stdin.
type PushLine struct {
	LocalRef, LocalSHA, RemoteRef, RemoteSHA string
}

// Deletion: the push deletes RemoteRef; no commit is sent.
func (l PushLine) Deletion() bool { return isZeroID(l.LocalSHA) }

// NewRef: RemoteRef does not exist on the remote yet.
func (l PushLine) NewRef() bool { return isZeroID(l.RemoteSHA) }

func isZeroID(s string) bool { return s != "" && strings.Trim(s, "0") == "" }

// parsePush reads the lines git gives a pre-push hook on stdin, once.
func parsePush(r io.Reader) ([]PushLine, error) {
	var out []PushLine
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" {
			continue
		}
		f := strings.Split(line, " ")
		if len(f) != 4 {
			return nil, fmt.Errorf("pre-push: bad input line %q (want <local ref> <local sha> <remote ref> <remote sha>)", line)
		}
		out = append(out, PushLine{f[0], f[1], f[2], f[3]})
	}
	return out, sc.Err()
}

// prePush checks what a push would send to remote (git's first argument:
// a remote name, or the URL when there is none; url is the second): no
// pushed commit may change a path under an active lock of another owner,
// and nothing goes to a non-zerg branch that carries staging work whose
// tree the quality gates of gateSet (GateSet of the configuration) did not
// pass here: neither a feature's staging branch by name, nor any commit
// that holds a merge git-zerg made into staging (see pushgate.go).
//
// Pushes of state (refs/zerg/*) and deletions are not checked. The commits
// checked are those of each local sha that are neither on the remote's
// tracking refs (refs/remotes/<remote>/*; every remote's when remote is a
// URL) nor behind any remote sha being replaced. A commit that the lock
// holder's task was claimed on top of is not a conflict: that task already
// builds on it.
func prePush(ctx context.Context, s *gitstore.Store, remote, url string, lines []PushLine, id Identity, gateSet string, now time.Time) ([]Problem, error) {
	var out []Problem
	var sending []PushLine
	staging := sync.OnceValues(func() (bool, error) { return stagingInUse(s) })
	for _, l := range lines {
		// State refs carry no work: their trees are git-zerg's own files,
		// and plain pushes of refs/zerg/* are how some users sync.
		if l.Deletion() || strings.HasPrefix(l.LocalRef, "refs/zerg/") || strings.HasPrefix(l.RemoteRef, "refs/zerg/") {
			continue
		}
		sending = append(sending, l)
		if strings.HasPrefix(l.RemoteRef, "refs/heads/zerg/") {
			continue
		}
		if f, ok := stagingBranch(l.LocalRef); ok {
			if ok, why := gatesPassed(s, l.LocalSHA, gateSet); !ok {
				if why != "" {
					why = ": " + why
				}
				out = append(out, Problem{Ref: refPair(l),
					What: fmt.Sprintf("the quality gates have not passed on %s (commit %s of feature %s's staging)%s", shortRef(l.LocalRef), short(l.LocalSHA), f, why),
					Hint: "run git zerg gates run on it and push again once they pass"})
				continue
			}
		}
		// Whatever the branch's name: see pushgate.go.
		if in, err := staging(); err != nil {
			return nil, err
		} else if in {
			ps, err := ungatedStaging(ctx, s, remote, url, l, gateSet)
			if err != nil {
				return nil, err
			}
			out = append(out, ps...)
		}
	}
	if len(sending) == 0 {
		return out, nil
	}
	all, err := repoLocks(s)
	if err != nil {
		return nil, err
	}
	locks := active(all, now)
	if len(locks) == 0 {
		sortProblems(out)
		return out, nil
	}
	// Only the locked paths matter, so git log is limited to them: the
	// history of a big first push is walked, but its diffs are not listed.
	specs := lockPathspecs(locks)
	excl := []string{"--not"}
	if remote == url || remote == "" {
		excl = append(excl, "--remotes")
	} else {
		excl = append(excl, "--remotes="+remote)
	}
	for _, l := range lines {
		if !l.NewRef() && hasObject(s, l.RemoteSHA) {
			excl = append(excl, l.RemoteSHA)
		}
	}
	bases := baseCache{s: s}
	userOwner := lazyOwner(id)
	for _, l := range sending {
		owner := userOwner
		if _, w, ok := workerBranch(strings.TrimPrefix(l.LocalRef, "refs/heads/")); ok && id.WorkerOwner != nil {
			o := id.WorkerOwner(w)
			owner = func() string { return o }
		}
		args := []string{"--full-history", "--cc", l.LocalSHA}
		args = append(args, excl...)
		args = append(args, "--")
		args = append(args, specs...)
		commits, err := (&gitcmd.Runner{Dir: s.Dir()}).LogFiles(ctx, args...)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for _, cp := range commitPaths(commits) {
			for _, c := range lockConflicts([]string{cp.path}, locks, owner, now) {
				key := c.Path + "\x00" + c.Lock.Path
				if seen[key] {
					continue
				}
				if ok, err := bases.builtOn(ctx, c.Lock, cp.commit); err != nil {
					return nil, err
				} else if ok {
					continue
				}
				seen[key] = true
				out = append(out, Problem{Path: c.Path, Commit: cp.commit, Ref: refPair(l),
					What: "changes a path " + holderText(c), Hint: lockHint(c, false)})
			}
		}
	}
	sortProblems(out)
	return out, nil
}

type commitPath struct{ commit, path string }

// commitPaths flattens a log into (commit, path) pairs.
func commitPaths(commits []gitcmd.CommitFiles) []commitPath {
	var out []commitPath
	for _, c := range commits {
		for _, p := range c.Files {
			out = append(out, commitPath{c.Commit, p})
		}
	}
	return out
}

// lockPathspecs limits a git command to the paths the locks cover, each
// taken literally: a directory lock as its directory, a glob lock as its
// literal directory prefix (conservative: more paths are checked, never
// fewer). A lock on the whole repository means no limit at all.
func lockPathspecs(locks []state.Lock) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range locks {
		p := l.Path
		if i := strings.IndexAny(p, "*?["); i >= 0 {
			p = p[:strings.LastIndexByte(p[:i], '/')+1]
		}
		p = strings.TrimSuffix(p, "/")
		if p == "" {
			return nil
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, ":(literal)"+p)
		}
	}
	return out
}

// baseCache answers whether a lock's task was claimed on top of a commit.
type baseCache struct {
	s     *gitstore.Store
	bases map[string]string
}

func (b *baseCache) builtOn(ctx context.Context, l state.Lock, commit string) (bool, error) {
	if l.Task == "" || l.Feature == "" {
		return false, nil
	}
	key := l.Feature + "/" + l.Task
	if b.bases == nil {
		b.bases = map[string]string{}
	}
	base, ok := b.bases[key]
	if !ok {
		if tx, err := b.s.View(l.Feature); err == nil {
			if t, err := tx.Task(l.Task); err == nil {
				base = t.Base
			}
		}
		b.bases[key] = base
	}
	if base == "" {
		return false, nil
	}
	if base == commit {
		return true, nil
	}
	_, err := (&gitcmd.Runner{Dir: b.s.Dir()}).Run(ctx, "merge-base", "--is-ancestor", commit, base)
	return err == nil, nil
}

// gatesRef is where the gate result of a tree is recorded, one ref per tree:
// refs/zerg/gates/<tree id> is a commit of that tree whose message names
// the gate set and each gate's result, signed with SignGateRecord; it
// counts as a pass only when ReadGateRecord verifies it and says so. Keyed
// by tree, because gates see only content: a tree that passed never needs
// the gates again, whichever commit carries it.
func gatesRef(tree string) string { return gitstore.GatesRef(tree) }

// gatesPassed reports whether the quality gates of set passed here on a
// commit (its tree) or a tree; when they did not, why says more if there
// is more to say than that no record counts.
func gatesPassed(s *gitstore.Store, commitOrTree, set string) (ok bool, why string) {
	if !plumbing.IsHash(commitOrTree) {
		return false, ""
	}
	h := plumbing.NewHash(commitOrTree)
	typ, err := s.ObjectType(h)
	if err != nil {
		return false, ""
	}
	tree := h
	switch typ {
	case plumbing.CommitObject:
		c, err := s.ReadCommit(h)
		if err != nil {
			return false, ""
		}
		tree = c.TreeHash
	case plumbing.TreeObject:
	default:
		return false, ""
	}
	got, err := s.ReadRef(gatesRef(tree.String()))
	if err != nil || got.IsZero() {
		return false, ""
	}
	rec, verified := ReadGateRecord(s, got, tree.String())
	switch {
	case !verified:
		return false, "its gate record was not made in this repository"
	case !rec.Passed:
		return false, ""
	case rec.Set != set:
		return false, "they passed, but the configured gates changed since"
	}
	return true, ""
}

func hasObject(s *gitstore.Store, id string) bool {
	if !plumbing.IsHash(id) {
		return false
	}
	return s.HasObject(plumbing.NewHash(id))
}

// workerBranch parses zerg/<feature>/worker-<n>.
func workerBranch(branch string) (feature, worker string, ok bool) { return worktree.WorkerOf(branch) }

// stagingBranch parses refs/heads/zerg/<feature>/staging.
func stagingBranch(ref string) (feature string, ok bool) {
	rest, ok := strings.CutPrefix(ref, "refs/heads/zerg/")
	if !ok {
		return "", false
	}
	feature, ok = strings.CutSuffix(rest, "/staging")
	return feature, ok && feature != "" && !strings.Contains(feature, "/")
}

func refPair(l PushLine) string { return shortRef(l.LocalRef) + " -> " + shortRef(l.RemoteRef) }

func shortRef(r string) string { return strings.TrimPrefix(r, "refs/heads/") }

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// displayPath prints a path as it is, unless control characters would
// garble the line: then Go-quoted.
func displayPath(p string) string {
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '\uFFFD' {
			return fmt.Sprintf("%q", p)
		}
	}
	return p
}

// shellQuoteIfNeeded quotes a path for a command line in a hint.
func shellQuoteIfNeeded(p string) string {
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:@,", r)) {
			return shellQuote(p)
		}
	}
	return p
}
