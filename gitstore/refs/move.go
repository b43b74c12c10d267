package refs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/lazy"
)

// Update is one ref's move in a transaction: to New if it is still at Old
// (zero: if it does not exist).
type Update struct {
	Name     string
	New, Old plumbing.Hash
	Verify   bool // only check that the ref is still at Old
	// Unchecked updates and deletes ignore the old value.
	Unchecked, Delete bool
}

// ErrRace is a lost compare-and-swap (or a held lock): read again and
// retry.
var ErrRace = errors.New("ref moved")

// Move moves refs in one transaction, each only if it is still at its
// old value. git's files backend takes every <ref>.lock first, checks the
// old values, then renames: all or nothing, and respected by every git
// process. With piped, the transaction goes to the repository's
// long-lived `git update-ref --stdin` (Shared.Pipe); else to pre, a
// process StartUpdate began ahead of it (nil: one started now), which
// Move ends.
func (d *DB) Move(ctx context.Context, us []Update, piped bool, pre *gitcmd.Pipe) error {
	var b strings.Builder
	b.WriteString("start\n")
	for _, u := range us {
		old := u.Old.String()
		switch {
		case u.Verify:
			fmt.Fprintf(&b, "verify %s %s\n", u.Name, old)
			continue
		case u.Delete:
			fmt.Fprintf(&b, "delete %s\n", u.Name)
			continue
		case u.Unchecked:
			fmt.Fprintf(&b, "update %s %s\n", u.Name, u.New)
			continue
		}
		fmt.Fprintf(&b, "update %s %s %s\n", u.Name, u.New, old)
	}
	// A deletion makes git take packed-refs.lock for the transaction, which
	// serializes it with a concurrent `git pack-refs`: without it, a
	// pack-refs that packed an older value and then pruned the loose ref
	// can let a compare-and-swap against that older value succeed, losing
	// the update made in between (seen with git 2.39 under a pack-refs loop).
	// The ref deleted never exists.
	b.WriteString("delete " + barrierRef + "\n")
	b.WriteString("prepare\ncommit\n")
	if piped {
		if pre != nil {
			pre.Close() // not used: an empty input ends it
		}
		return d.movePiped(b.String())
	}
	// A short lock timeout makes git wait for a concurrent writer's
	// <ref>.lock instead of failing at once; the compare-and-swap still
	// decides who wins.
	var err error
	if pre != nil {
		if err = pre.Send(b.String()); err != nil {
			pre.Close()
		} else {
			err = pre.Close()
		}
	} else {
		_, err = d.git.RunWith(ctx, gitcmd.Call{Stdin: strings.NewReader(b.String())}, updateRefArgs...)
	}
	if err == nil {
		return nil
	}
	if isRace(err) {
		// Whether the ref moved or its lock was held, the answer is the
		// same: read again and retry.
		d.clearStaleLock(err)
		return fmt.Errorf("%w: %v", ErrRace, err)
	}
	return err
}

// staleLock is the age past which a lock file of the state's refs is taken
// for the leftover of a killed process. git holds a ref lock for one
// transaction, milliseconds, and removes it on any exit but SIGKILL (a
// crash, an OOM kill, kill -9 of a rush): a lock left so would refuse
// every update for good.
const staleLock = 5 * time.Second

var lockExists = &lazy.Value[*regexp.Regexp]{Build: func() *regexp.Regexp { return regexp.MustCompile(`Unable to create '([^']+\.lock)': File exists`) }} // compiled on first use, not at every start

// clearStaleLock removes the lock file a failed update names when it is
// one of ours (under refs/zerg/, or packed-refs.lock, which every
// transaction takes) and stale. Wrongly removing a live one costs its
// holder a retry, nothing more: it can no longer rename its lock into
// place, and every update is a compare-and-swap.
func (d *DB) clearStaleLock(err error) {
	var ge *gitcmd.Error
	if !errors.As(err, &ge) {
		return
	}
	m := lockExists.Get().FindStringSubmatch(ge.Stderr)
	if m == nil {
		return
	}
	path := m[1]
	if !filepath.IsAbs(path) {
		path = filepath.Join(d.git.Dir, path)
	}
	rel, rerr := filepath.Rel(d.commonDir, path)
	if rerr != nil {
		return
	}
	rel = filepath.ToSlash(rel)
	if rel != "packed-refs.lock" && !strings.HasPrefix(rel, "refs/zerg/") {
		return
	}
	if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) > staleLock {
		os.Remove(path)
	}
}

// isRace tells a lost compare-and-swap or a held lock (worth another try)
// from a real failure (worth an error at once).
func isRace(err error) bool {
	var ge *gitcmd.Error
	if !errors.As(err, &ge) || ge.Code <= 0 {
		return false
	}
	for _, s := range []string{"cannot lock ref", "but expected", "already exists", "File exists", "unable to lock", "Unable to create"} {
		if strings.Contains(ge.Stderr, s) {
			return true
		}
	}
	return false
}

// ReflogMessage names git-zerg's own updates in the reflog, for whoever
// reads it to tell them from other moves of the ref.
const ReflogMessage = "git-zerg"

// core.logAllRefUpdates=always: every state update goes into its ref's
// reflog, the record that gitstore's repair checks against.
var updateRefArgs = []string{"-c", "core.filesRefLockTimeout=500", "-c", "core.packedRefsTimeout=2000",
	"-c", "core.logAllRefUpdates=always", "update-ref", "-m", ReflogMessage, "--stdin"}

// barrierRef is never created; deleting it only takes packed-refs.lock.
const barrierRef = "refs/zerg/barrier"

// StartUpdate starts a `git update-ref --stdin` for a Move to come, so
// that git starts while the objects are written.
func (d *DB) StartUpdate() (*gitcmd.Pipe, error) { return d.git.StartPipe(updateRefArgs...) }

// ClosePipe ends the repository's long-lived `git update-ref --stdin`
// (Move with piped), so that no git process outlives the command; a later
// piped Move starts another.
func (d *DB) ClosePipe() error {
	rp := &d.shared.pipe
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if rp.p == nil {
		return nil
	}
	err := rp.p.Close()
	rp.p = nil
	return err
}

// PipeProcess is the long-lived update-ref's command, nil when none runs:
// for tests that see it end.
func (d *DB) PipeProcess() *exec.Cmd {
	rp := &d.shared.pipe
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if rp.p == nil {
		return nil
	}
	return rp.p.Process()
}

// MissingObject tells an update git refused because an object it names
// is gone.
func MissingObject(err error) bool {
	var ge *gitcmd.Error
	return errors.As(err, &ge) && strings.Contains(ge.Stderr, "with nonexistent object")
}

func (d *DB) movePiped(tx string) error {
	rp := &d.shared.pipe
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if rp.p == nil {
		p, err := d.git.StartPipe(updateRefArgs...)
		if err != nil {
			return err
		}
		rp.p = p
	}
	fail := func() error {
		// git ends the session on a failed transaction: its exit says why.
		err := rp.p.Close()
		rp.p = nil
		if isRace(err) {
			d.clearStaleLock(err)
			return fmt.Errorf("%w: %v", ErrRace, err)
		}
		if err == nil {
			err = errors.New("git update-ref --stdin ended")
		}
		return err
	}
	if err := rp.p.Send(tx); err != nil {
		return fail()
	}
	for _, want := range []string{"start: ok", "prepare: ok", "commit: ok"} {
		line, err := rp.p.ReadLine()
		if err != nil || line != want {
			return fail()
		}
	}
	return nil
}
