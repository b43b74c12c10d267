package finish

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/engine/rushmarker"
	"github.com/git-zerg/git-zerg/gitstore"
	"github.com/git-zerg/git-zerg/proc"
	"github.com/git-zerg/git-zerg/rush"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/worktree"
)

// CleanupOptions: State also deletes the feature's refs; Force discards
// uncommitted or unmerged worker work.
type CleanupOptions struct {
	State bool
	Force bool
}

// Cleaned is what a cleanup removed, each thing named.
type Cleaned struct {
	Worktrees []string // worker worktree directories
	Branches  []string // worker branches
	Staging   string   // the gates' scratch checkout of staging, when there was one
	Dirs      []string // directories the worktrees were made in, left empty
}

// Cleanup removes the feature's worktrees and worker branches (and with
// o.State its refs), then the directories made to hold them once they are
// empty. Work it kept is an error of kind Refused naming it.
func Cleanup(g *engine.Engine, o CleanupOptions) (*Cleaned, error) {
	if err := endDeadRush(g); err != nil {
		return nil, err
	}
	mgr := g.Manager()
	if o.State && !o.Force {
		if err := refuseUnmerged(g, mgr); err != nil {
			return nil, err
		}
	}
	workers, err := cleanupWorkers(g, mgr)
	if err != nil {
		return nil, err
	}
	var kept []string
	out := &Cleaned{}
	for _, w := range workers {
		why, err := removeWorker(g, mgr, w, o.Force, out)
		if err != nil {
			return nil, err
		}
		if why != "" {
			kept = append(kept, why)
		}
	}
	removeScratch(g, mgr, out)
	if len(kept) > 0 {
		return nil, &engine.Error{Kind: engine.Refused, What: "cleanup kept work that is not merged", Why: strings.Join(kept, "; "),
			Hint: "merge or save it, or run git zerg cleanup --force to discard it"}
	}
	if o.State {
		if err := deleteState(g); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// endDeadRush refuses a cleanup while a rush of the feature runs, and ends
// what a rush of this host killed outright left behind before anything is
// removed.
func endDeadRush(g *engine.Engine) error {
	feature, s := g.Feature, g.Store
	if h, alive := rushmarker.Read(s, feature); h != nil {
		if alive {
			return engine.RefusedError("cleanup refused", fmt.Sprintf("a rush of %s is running (pid %d)", feature, h.PID))
		}
		if h.PID > 0 && s.Host().Holds(&state.Worker{Host: h.Host, Instance: h.Instance}) {
			// A rush killed outright left its workers' groups behind, and
			// its claims: end those before anything is removed.
			if err := rush.StopDeadRush(g, h); err != nil {
				return err
			}
		}
	}
	return nil
}

// refuseUnmerged is cleanup --state's check, before anything is removed,
// that its deletion loses no commit.
func refuseUnmerged(g *engine.Engine, mgr *worktree.Manager) error {
	feature, s := g.Feature, g.Store
	// --state deletes the refs that keep failed attempts and verified
	// work: refuse while they hold commits staging lacks.
	args := []string{"rev-list", "--count"}
	for _, p := range mgr.Saved {
		args = append(args, "--glob="+p+"*")
	}
	if tip, err := s.ReadRef("refs/heads/" + worktree.StagingBranch(feature)); err != nil {
		return err
	} else if !tip.IsZero() {
		args = append(args, "--not", tip.String())
	}
	if n, err := engine.Git(s).Line(g.Context(), args...); err != nil {
		return err
	} else if n != "0" {
		return &engine.Error{Kind: engine.Refused, What: "cleanup --state refused",
			Why:  fmt.Sprintf("%s commits of failed attempts or unmerged work are kept only under %s and %s", n, mgr.Saved[0], mgr.Saved[1]),
			Hint: "git zerg cleanup --state --force deletes them; git branch NAME REF keeps one"}
	}
	return nil
}

// cleanupWorkers is the feature's workers to remove: its worktrees, git's
// records of gone ones pruned first, and the worker branches left without
// a worktree.
func cleanupWorkers(g *engine.Engine, mgr *worktree.Manager) ([]worktree.Worker, error) {
	ctx, feature := g.Context(), g.Feature
	if err := mgr.Prune(ctx); err != nil {
		return nil, err
	}
	workers, err := mgr.List(ctx)
	if err != nil {
		return nil, err
	}
	// Worker branches left without a worktree go too.
	branches, err := engine.Git(g.Store).Fields(ctx, '\n', "for-each-ref", "--format=%(refname:short)", "refs/heads/zerg/"+feature+"/")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, w := range workers {
		seen[w.Branch] = true
	}
	for _, b := range branches {
		if f, n, ok := worktree.ParseWorkerBranch(b); ok && f == feature && !seen[b] {
			workers = append(workers, worktree.Worker{N: n, Name: rush.WorkerName(n), Branch: b})
		}
	}
	return workers, nil
}

// removeWorker removes a worker's worktree, mended or moved aside first
// when broken, and its branch, adding them to out. kept says why it keeps
// them instead: a process runs in the worktree, or it holds work that is
// not merged (without force).
func removeWorker(g *engine.Engine, mgr *worktree.Manager, w worktree.Worker, force bool, out *Cleaned) (kept string, err error) {
	ctx := g.Context()
	if w.Dir != "" && !w.Interrupted {
		// A worktree a worker broke is mended, to be judged like any
		// other (kept with uncommitted changes unless --force); one that
		// cannot be is moved aside with everything in it, and its
		// branch goes on alone.
		rep, err := mgr.Repair(ctx, w)
		if err != nil {
			return "", err
		}
		switch {
		case rep == nil:
		case rep.Gone:
			w.Dir = ""
		case rep.Aside != "":
			g.Note("worktree %s was broken (%s): moved aside to %s, with everything in it, for you to look at", w.Dir, rep.Problem, rep.Aside)
			w.Dir = ""
		default:
			g.Note("worktree %s was broken (%s): mended", w.Dir, rep.Problem)
		}
	}
	if w.Dir != "" {
		if pid := processIn(w.Dir); pid != "" {
			return fmt.Sprintf("%s: process %s runs in it", w.Dir, pid), nil
		}
	}
	if err := mgr.Remove(ctx, w, force); err != nil {
		var we *worktree.Error
		if errors.As(err, &we) {
			return we.Error(), nil
		}
		return "", err
	}
	if w.Dir != "" {
		out.Worktrees = append(out.Worktrees, w.Dir)
		g.Note("removed worktree %s", w.Dir)
	}
	out.Branches = append(out.Branches, w.Branch)
	g.Note("deleted branch %s", w.Branch)
	return "", nil
}

// removeScratch removes, once the workers are gone, the checkouts git-zerg
// made for itself and the directories made for the worktrees when they
// are empty, adding them to out. It fails on nothing: what it cannot
// remove stays.
func removeScratch(g *engine.Engine, mgr *worktree.Manager, out *Cleaned) {
	ctx := g.Context()
	// The gates' scratch checkout holds nothing of anyone's, nor do the
	// verification checkouts a killed rush left.
	if staging, err := mgr.RemoveStaging(ctx); err == nil && staging != "" {
		out.Staging = staging
		g.Note("removed the gates' checkout %s", staging)
	}
	if dirs, err := mgr.RemoveVerifyCheckouts(ctx); err == nil {
		for _, d := range dirs {
			g.Note("removed the verification checkout %s", d)
		}
	}
	out.Dirs = removeEmptyRoots(g, mgr.Root)
	for _, d := range out.Dirs {
		g.Note("removed empty directory %s", d)
	}
}

// removeEmptyRoots removes the feature's root and the directories above it
// that hold worktrees, up to the worktrees root (and, for the default root,
// the .zerg-worktrees directory beside the repository), each only when
// empty: they were made for the worktrees, and another feature's or
// repository's worktrees keep them. The main work tree and the directories
// above it are never removed.
func removeEmptyRoots(g *engine.Engine, featureRoot string) []string {
	stop := g.WorktreesRoot()
	if g.Config == nil || g.Config.Worktrees.Root == "" {
		stop = filepath.Dir(stop)
	}
	top := filepath.Clean(g.Store.Top)
	var removed []string
	for dir := filepath.Clean(featureRoot); within(dir, stop); dir = filepath.Dir(dir) {
		if within(top, dir) {
			break
		}
		if _, err := os.Lstat(dir); err != nil {
			continue // never made (no worktree was ever added), or gone
		}
		if os.Remove(dir) != nil {
			break // not empty
		}
		removed = append(removed, dir)
	}
	return removed
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// deleteState removes the feature's refs and local files, and the locks
// its tasks hold.
func deleteState(g *engine.Engine) error {
	ctx, s, feature := g.Context(), g.Store, g.Feature
	// The feature itself gets a tombstone: deleting its ref would not
	// last, since the next sync with a machine that has it brings it back.
	err := s.Update(ctx, feature, g.Time, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		if !tx.Exists() {
			return nil, nil
		}
		who := g.UserIdentity()
		return &gitstore.Message{Subject: "delete " + feature, Op: state.OpDelete, Worker: who}, tx.Delete("deleted by " + who)
	})
	if err != nil {
		return err
	}
	dropped, err := s.DropWorkRefs(ctx, feature)
	if err != nil {
		return err
	}
	err = s.Update(ctx, "", g.Time, func(tx *gitstore.Tx) (*gitstore.Message, error) {
		locks, err := tx.Locks()
		if err != nil {
			return nil, err
		}
		var keep []state.Lock
		for _, l := range locks {
			if l.Feature != feature {
				keep = append(keep, l)
			}
		}
		if len(keep) == len(locks) {
			return nil, nil
		}
		tx.SetLocks(keep)
		return &gitstore.Message{Subject: "cleanup --state " + feature + ": drop its locks", Op: state.OpUnlock}, nil
	})
	if err != nil {
		return err
	}
	s.DropCache(feature)
	for _, p := range []string{s.Layout().Trusted(feature), s.Layout().Accepted(feature),
		s.Layout().RunFeature(feature)} {
		os.RemoveAll(p)
	}
	if s.CurrentFeature() == feature {
		os.Remove(s.Layout().CurrentFeature())
	}
	g.Note("deleted the state of %s (a tombstone on %s; %d work refs removed)", feature, gitstore.FeatureRef(feature), dropped)
	return nil
}

// processIn names a process whose working directory is dir or below it,
// "" when none is (or when the system does not say).
func processIn(dir string) string {
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return ""
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return ""
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil {
			continue
		}
		if cwd == dir || strings.HasPrefix(cwd, dir+string(filepath.Separator)) {
			if f := proc.StatFields(pid); len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
				continue
			}
			return strconv.Itoa(pid)
		}
	}
	return ""
}
