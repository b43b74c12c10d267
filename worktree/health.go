package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// errBroken: a worktree's directory, or the .git file that ties it to this
// repository, is gone or leads somewhere else. A worker can do that with
// plain file commands; git then fails in it, or works on another
// repository.
var errBroken = errors.New("worktree is broken")

// commonDir is the repository's common git directory, asked of git once.
func (m *Manager) commonDir(ctx context.Context) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.CommonDir != "" {
		return m.CommonDir, nil
	}
	d, err := m.Git.Line(ctx, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", err
	}
	m.CommonDir = d
	return d, nil
}

// Check tells, without starting git, whether worker w's worktree is still
// a worktree of this repository: its directory there, its .git file naming
// an administrative directory under the repository's worktrees/ that names
// it back and whose commondir is this repository. A worktree that fails is
// an *Error (ErrBroken) saying what is wrong with it.
func (m *Manager) Check(ctx context.Context, w Worker) error {
	common, err := m.commonDir(ctx)
	if err != nil {
		return err
	}
	if problem, _ := health(common, w.Dir); problem != "" {
		return &Error{Dir: w.Dir, Branch: w.Branch, Err: errBroken, Detail: problem}
	}
	return nil
}

// health says what is wrong with the worktree at dir ("" when nothing is)
// and which administrative directory its .git file names.
func health(common, dir string) (problem, admin string) {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "its directory is gone", ""
	case err != nil:
		return err.Error(), ""
	case !fi.IsDir():
		return "it is no longer a directory", ""
	}
	gitFile := filepath.Join(dir, ".git")
	fi, err = os.Lstat(gitFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "its .git file is gone", ""
	case err != nil:
		return err.Error(), ""
	case fi.IsDir():
		return "its .git is a directory, a repository of its own", ""
	case !fi.Mode().IsRegular():
		return "its .git is not a regular file", ""
	}
	admin, ok := readGitFile(gitFile)
	if !ok {
		return "its .git file names no git directory", ""
	}
	if !samePath(filepath.Dir(admin), filepath.Join(common, "worktrees")) {
		return fmt.Sprintf("its .git file points to %s, not into %s", admin, filepath.Join(common, "worktrees")), admin
	}
	if back := readLine(filepath.Join(admin, "gitdir")); back == "" || !samePath(back, gitFile) {
		return fmt.Sprintf("%s does not name it back", admin), admin
	}
	cd := readLine(filepath.Join(admin, "commondir"))
	if cd != "" && !filepath.IsAbs(cd) {
		cd = filepath.Join(admin, cd)
	}
	if cd == "" || !samePath(cd, common) {
		return fmt.Sprintf("%s/commondir does not lead to %s", admin, common), admin
	}
	return "", admin
}

// readGitFile reads a linked worktree's .git file: "gitdir: <dir>".
func readGitFile(path string) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	d, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok || d == "" {
		return "", false
	}
	if !filepath.IsAbs(d) {
		d = filepath.Join(filepath.Dir(path), d)
	}
	return filepath.Clean(d), true
}

func readLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// adminOf finds the administrative directory that git keeps for the
// worktree at dir: the one under worktrees/ whose gitdir names dir/.git.
// What the worktree's own .git file says is not asked: it may be what is
// broken.
func adminOf(common, dir string) string {
	base := filepath.Join(common, "worktrees")
	ents, err := os.ReadDir(base)
	if err != nil {
		return ""
	}
	gitFile := filepath.Join(dir, ".git")
	for _, e := range ents {
		a := filepath.Join(base, e.Name())
		if back := readLine(filepath.Join(a, "gitdir")); back != "" && samePath(back, gitFile) {
			return a
		}
	}
	return ""
}

// Repaired is what Repair did to a broken worktree.
type Repaired struct {
	Problem string // what was wrong, as Check says it
	// Aside is where the worktree's directory was moved, with everything
	// in it, when it could not be mended in place; "" when it was mended.
	Aside string
	// Gone: its directory was gone; git's registration of it is pruned.
	Gone bool
}

// Repair makes a broken worker worktree usable again without losing a file
// of it, and reports what it did (nil when w was not broken). A .git file
// that is gone or leads elsewhere is written again, as git writes it, and
// the administrative directory's commondir too; this is not left to `git
// worktree repair`, which trusts the .git file it is mending and, when that
// names another worktree's directory, rewrites that other one. A worktree
// whose .git is a directory, or that git no longer knows, is moved aside
// whole (see MoveAside). A gone directory only has its registration pruned.
func (m *Manager) Repair(ctx context.Context, w Worker) (*Repaired, error) {
	common, err := m.commonDir(ctx)
	if err != nil {
		return nil, err
	}
	worktreeMu.Lock()
	defer worktreeMu.Unlock()
	return m.repair(ctx, common, w.Dir)
}

// repair is Repair with worktreeMu held.
func (m *Manager) repair(ctx context.Context, common, dir string) (*Repaired, error) {
	problem, _ := health(common, dir)
	if problem == "" {
		return nil, nil
	}
	rep := &Repaired{Problem: problem}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		rep.Gone = true
		_, err := m.worktreeGit(ctx, "prune")
		return rep, err
	}
	if admin := adminOf(common, dir); admin != "" && mendable(dir) {
		if err := mend(dir, admin, common); err != nil {
			return nil, err
		}
		if p, _ := health(common, dir); p == "" {
			return rep, nil
		}
	}
	aside, err := m.moveAside(ctx, dir)
	if err != nil {
		return nil, err
	}
	rep.Aside = aside
	return rep, nil
}

// mendable: what is at dir/.git can be replaced without losing anything
// (nothing, a file, a symbolic link); a directory there may be a
// repository a worker made, with commits of its own.
func mendable(dir string) bool {
	fi, err := os.Lstat(filepath.Join(dir, ".git"))
	return errors.Is(err, fs.ErrNotExist) || err == nil && !fi.IsDir()
}

// mend writes dir's .git file and admin's commondir as `git worktree add`
// wrote them.
func mend(dir, admin, common string) error {
	gitFile := filepath.Join(dir, ".git")
	if fi, err := os.Lstat(gitFile); err == nil && !fi.Mode().IsRegular() {
		if err := os.Remove(gitFile); err != nil { // a symbolic link: WriteFile would refuse it
			return err
		}
	}
	if err := WriteFile(dir, ".git", []byte("gitdir: "+admin+"\n"), 0o644); err != nil {
		return err
	}
	cd := filepath.Join(admin, "commondir")
	if got := readLine(cd); got != "" {
		if !filepath.IsAbs(got) {
			got = filepath.Join(admin, got)
		}
		if samePath(got, common) {
			return nil
		}
	}
	rel, err := filepath.Rel(admin, common)
	if err != nil {
		rel = common
	}
	os.Remove(cd) // a symbolic link must not be written through
	return os.WriteFile(cd, []byte(rel+"\n"), 0o644)
}

// MoveAside moves worker w's worktree directory, with everything in it, to
// a free name beside it (<dir>.broken, <dir>.broken-2, …) for a person to
// look at, and drops git's registration of it, so that the slot can be made
// again at its path. It returns where the directory went ("" when there was
// none). For a worktree that is healthy to the eye but in which git fails
// (an index a worker corrupted, say).
func (m *Manager) MoveAside(ctx context.Context, w Worker) (string, error) {
	worktreeMu.Lock()
	defer worktreeMu.Unlock()
	return m.moveAside(ctx, w.Dir)
}

func (m *Manager) moveAside(ctx context.Context, dir string) (string, error) {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		_, err := m.worktreeGit(ctx, "prune")
		return "", err
	}
	aside := ""
	for i := 1; ; i++ {
		aside = dir + ".broken"
		if i > 1 {
			aside += "-" + strconv.Itoa(i)
		}
		if _, err := os.Lstat(aside); errors.Is(err, fs.ErrNotExist) {
			break
		}
		if i == 1000 {
			return "", fmt.Errorf("worktree %s: no free name to move it aside to", dir)
		}
	}
	if err := os.Rename(dir, aside); err != nil {
		return "", err
	}
	// The registration now names a path that is gone: prune drops it.
	// Its branch stays, with whatever the worker committed on it.
	if _, err := m.worktreeGit(ctx, "prune"); err != nil {
		return aside, err
	}
	return aside, nil
}

// repairFound mends the worktree that add found for worker w (e; nil for
// none), or moves it aside, and says so in w.Repaired. A directory at w's
// path that git no longer knows but that was a worktree of this repository
// is moved aside too, rather than refused as ErrOccupied. It returns the
// entry to go on with: nil once the worktree is no longer registered.
func (m *Manager) repairFound(ctx context.Context, w *Worker, e *entry, list []entry) (*entry, error) {
	common, err := m.commonDir(ctx)
	if err != nil {
		return nil, err
	}
	if e != nil && !samePath(e.dir, list[0].dir) {
		rep, err := m.repair(ctx, common, e.dir)
		if err != nil || rep == nil {
			return e, err
		}
		w.Repaired = rep
		if rep.Gone || rep.Aside != "" {
			return nil, nil
		}
		return e, nil // mended in place
	}
	if e == nil && orphan(common, w.Dir) {
		aside, err := m.moveAside(ctx, w.Dir)
		if err != nil {
			return nil, err
		}
		w.Repaired = &Repaired{Problem: "git no longer knows it as a worktree", Aside: aside}
	}
	return e, nil
}

// orphan: dir was a worktree of this repository that git no longer knows
// (its registration was deleted or made to name another place): its .git
// file names a directory under worktrees/ that does not name it back.
func orphan(common, dir string) bool {
	admin, ok := readGitFile(filepath.Join(dir, ".git"))
	return ok && samePath(filepath.Dir(admin), filepath.Join(common, "worktrees")) && adminOf(common, dir) == ""
}
