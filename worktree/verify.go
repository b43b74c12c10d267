package worktree

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A verification judges a commit, so it runs where nothing but that commit
// is: not in the worker's worktree, where files the commit lacks (ignored
// ones, untracked ones a worker hid through the repository's shared
// info/exclude) would make it pass for work that staging will not have.

// CheckoutError: a commit could not be checked out for its verification
// (a path the file system refuses, say). The commit is at fault, not the
// tool.
type CheckoutError struct {
	Dir    string
	Commit string
	Err    error
}

func (e *CheckoutError) Error() string {
	return fmt.Sprintf("commit %s cannot be checked out in %s: %v", short(e.Commit), e.Dir, reason(e.Err))
}

func (e *CheckoutError) Unwrap() error { return e.Err }

func short(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// reason is what git said, without the command git-zerg ran.
func reason(err error) string {
	var ge interface{ Reason() string }
	if errors.As(err, &ge) {
		return ge.Reason()
	}
	return err.Error()
}

// verifyCheckout is what a Manager knows of a verification checkout it
// made: the digest of its index as it left it, and what Setup made there.
type verifyCheckout struct {
	index [sha256.Size]byte
	kept  []string // ignored paths that Setup made (slash-separated, "dir/" for a directory)
}

// forced puts before args the settings every reset of a verification
// checkout runs with, whatever the repository's config says (a worker can
// edit it): git compares each file's change time and inode with its
// index, so a file changed with its size and modification time put back is
// still seen; it asks no file system monitor, which could say that nothing
// changed; and it runs no post-checkout hook, which could put files back.
func forced(args ...string) []string {
	return append([]string{"-c", "core.trustctime=true", "-c", "core.checkStat=default",
		"-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "-c", "core.hooksPath=/dev/null"}, args...)
}

// VerifyCheckout gives worker n's verification checkout at commit: a
// detached worktree, <Root>/verify-<n>, that holds exactly the commit's
// files, the files .worktreeinclude names (copied from the main work
// tree, as into worker worktrees) and what Setup made there; nothing that
// a worker, or an earlier verification, left in it.
//
// The first call for a slot in this Manager makes the checkout afresh (one
// left by an earlier process is removed first: what was done to it since is
// unknown) and runs Setup in it. Later calls reuse it, which costs a
// checkout of what differs: `git checkout --force --detach` of the commit
// with the settings of forced, then `git clean -ffdx` of everything but
// what Setup made. An index that is not as this Manager left it (a worker
// could forge one to hide a changed file from git's stat checks), or a
// broken checkout, is made afresh again.
//
// A commit that cannot be checked out is a *CheckoutError. An *IncludeError
// or *SetupError comes with the directory, which is usable as it is.
func (m *Manager) VerifyCheckout(ctx context.Context, n int, commit string) (string, error) {
	if err := m.check(); err != nil {
		return "", err
	}
	common, err := m.commonDir(ctx)
	if err != nil {
		return "", err
	}
	list, err := m.entries(ctx)
	if err != nil {
		return "", err
	}
	root, err := m.root(list)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "verify-"+strconv.Itoa(n))
	m.mu.Lock()
	vc := m.checks[dir]
	m.mu.Unlock()
	if vc != nil && m.reset(ctx, common, dir, commit, vc) == nil {
		return dir, m.copyIncluded(ctx, list, dir)
	}
	vc, err = m.fresh(ctx, common, list, dir, commit, n)
	if vc != nil {
		m.mu.Lock()
		if m.checks == nil {
			m.checks = map[string]*verifyCheckout{}
		}
		m.checks[dir] = vc
		m.mu.Unlock()
	}
	if err != nil && vc == nil {
		return "", err
	}
	return dir, err
}

// reset puts a verification checkout this Manager made back to commit; an
// error means it must be made afresh.
func (m *Manager) reset(ctx context.Context, common, dir, commit string, vc *verifyCheckout) error {
	problem, admin := health(common, dir)
	if problem != "" {
		return errors.New(problem)
	}
	if digest(filepath.Join(admin, "index")) != vc.index {
		return errors.New("its index changed")
	}
	git := m.at(dir)
	if _, err := git.Run(ctx, forced("checkout", "-q", "--force", "--detach", commit)...); err != nil {
		return err
	}
	args := forced("clean", "-q", "-ffdx")
	for _, k := range vc.kept {
		args = append(args, "-e", "/"+escapePattern(k))
	}
	if _, err := git.Run(ctx, args...); err != nil {
		return err
	}
	vc.index = digest(filepath.Join(admin, "index"))
	return nil
}

// fresh makes the verification checkout at dir anew at commit.
func (m *Manager) fresh(ctx context.Context, common string, list []entry, dir, commit string, n int) (*verifyCheckout, error) {
	if err := m.dropCheckout(ctx, common, list, dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	if err := m.addDetached(ctx, dir, commit); err != nil {
		return nil, err
	}
	_, admin := health(common, dir)
	vc := &verifyCheckout{}
	if err := m.copyIncluded(ctx, list, dir); err != nil {
		vc.index = digest(filepath.Join(admin, "index"))
		return vc, err // Setup does not run where files were left out (see Add)
	}
	if m.Setup != "" {
		before, err := m.ignored(ctx, dir)
		if err != nil {
			return nil, err
		}
		serr := m.runSetup(ctx, &Worker{N: n, Name: "worker-" + strconv.Itoa(n), Branch: workerBranch(m.Feature, n), Dir: dir})
		after, err := m.ignored(ctx, dir)
		if err != nil {
			return nil, err
		}
		had := make(map[string]bool, len(before))
		for _, p := range before {
			had[p] = true
		}
		for _, p := range after {
			if !had[p] {
				vc.kept = append(vc.kept, p)
			}
		}
		if serr != nil {
			vc.index = digest(filepath.Join(admin, "index"))
			return vc, serr
		}
	}
	vc.index = digest(filepath.Join(admin, "index"))
	return vc, nil
}

// addDetached adds a detached worktree at dir and checks commit out in it;
// the checkout is a step of its own, so that a commit git cannot check out
// is told apart (*CheckoutError) from a failure of `git worktree add`.
func (m *Manager) addDetached(ctx context.Context, dir, commit string) error {
	worktreeMu.Lock()
	_, err := m.worktreeGit(ctx, "add", "-q", "--detach", "--no-checkout", dir, commit)
	worktreeMu.Unlock()
	if err != nil {
		return err
	}
	if _, err := m.at(dir).Run(ctx, forced("reset", "-q", "--hard", commit)...); err != nil {
		return &CheckoutError{Dir: dir, Commit: commit, Err: err}
	}
	return nil
}

// dropCheckout removes whatever is at a verification checkout's path, when
// it is one: registered as a worktree of this repository, or a directory
// whose .git file names one (left broken). Anything else there is refused
// (ErrOccupied): it may be someone's.
func (m *Manager) dropCheckout(ctx context.Context, common string, list []entry, dir string) error {
	worktreeMu.Lock()
	defer worktreeMu.Unlock()
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		_, err := m.worktreeGit(ctx, "prune")
		return err
	}
	e := find(list, "", dir)
	admin, ours := readGitFile(filepath.Join(dir, ".git"))
	ours = ours && samePath(filepath.Dir(admin), filepath.Join(common, "worktrees"))
	if e == nil && !ours {
		if fi, err := os.Lstat(dir); err == nil && fi.IsDir() {
			if ents, err := os.ReadDir(dir); err == nil && len(ents) == 0 {
				return nil
			}
		}
		return &Error{Dir: dir, Err: ErrOccupied}
	}
	if e != nil && samePath(e.dir, list[0].dir) {
		return fmt.Errorf("worktree: %s is the main worktree", e.dir)
	}
	// A verification checkout holds nothing of anyone's. RemoveAll follows
	// no symbolic link, at dir or below it.
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	_, err := m.worktreeGit(ctx, "prune")
	return err
}

// ignored lists the ignored paths in dir, a directory of them as one.
func (m *Manager) ignored(ctx context.Context, dir string) ([]string, error) {
	return m.at(dir).Fields(ctx, 0, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")
}

// escapePattern makes a path an ignore pattern that matches it alone.
func escapePattern(p string) string {
	var b strings.Builder
	for i, r := range p {
		switch {
		case strings.ContainsRune(`\*?[`, r):
			b.WriteByte('\\')
		case i == 0 && (r == '!' || r == '#'):
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	s := b.String()
	if t := strings.TrimRight(s, " "); len(t) < len(s) {
		s = t + strings.Repeat(`\ `, len(s)-len(t))
	}
	return s
}

func digest(path string) [sha256.Size]byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return [sha256.Size]byte{}
	}
	return sha256.Sum256(b)
}

// TempCheckout makes a checkout of commit for one verification outside any
// slot (`git zerg done`): a detached worktree in a new temporary directory
// with the commit's files, the files .worktreeinclude names and what Setup
// makes there. The user's work tree is not touched. done removes it and its
// registration; it is to be called however the verification ended.
//
// Errors are those of VerifyCheckout; with an *IncludeError or *SetupError
// the directory is usable and done must still be called.
func (m *Manager) TempCheckout(ctx context.Context, commit string) (dir string, done func(), err error) {
	if err := m.check(); err != nil {
		return "", nil, err
	}
	list, err := m.entries(ctx)
	if err != nil {
		return "", nil, err
	}
	dir, err = os.MkdirTemp("", "zerg-verify-")
	if err != nil {
		return "", nil, err
	}
	done = func() {
		ctx := context.WithoutCancel(ctx)
		worktreeMu.Lock()
		defer worktreeMu.Unlock()
		os.RemoveAll(dir)
		m.worktreeGit(ctx, "prune")
	}
	if err := m.addDetached(ctx, dir, commit); err != nil {
		done()
		return "", nil, err
	}
	if err := m.copyIncluded(ctx, list, dir); err != nil {
		return dir, done, err
	}
	if m.Setup != "" {
		if err := m.runSetup(ctx, &Worker{Name: "verification", Dir: dir}); err != nil {
			return dir, done, err
		}
	}
	return dir, done, nil
}

// RemoveVerifyCheckouts removes the feature's verification checkouts
// (<Root>/verify-<n>): they hold nothing of anyone's. It returns the
// directories removed.
func (m *Manager) RemoveVerifyCheckouts(ctx context.Context) ([]string, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	common, err := m.commonDir(ctx)
	if err != nil {
		return nil, err
	}
	list, err := m.entries(ctx)
	if err != nil {
		return nil, err
	}
	root, err := m.root(list)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var removed []string
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), "verify-")
		if n, err := strconv.Atoi(rest); !ok || err != nil || n < 0 || strconv.Itoa(n) != rest {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if err := m.dropCheckout(ctx, common, list, dir); err != nil {
			var we *Error
			if errors.As(err, &we) {
				continue // not ours: left as it is
			}
			return removed, err
		}
		removed = append(removed, dir)
		m.mu.Lock()
		delete(m.checks, dir)
		m.mu.Unlock()
	}
	return removed, nil
}
