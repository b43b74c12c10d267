package engine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-zerg/git-zerg/gitstore"
)

// State can arrive without sync: a plain `git fetch` of refs/zerg/* moves
// the state refs to whatever the remote holds, and nothing would replay it.
// So before anything acts on a feature's state, its tip must be one this
// repository wrote or checked. The last tip that passed is kept in
// <common dir>/zerg/checked/<feature>; a tip that moved since is accepted
// cheaply when every new commit is a single-parent commit the store wrote
// here (its reflog says so), and otherwise the new commits are replayed
// with the gates, as sync replays what it fetches (CheckIncoming).

// CheckedFile is where the last checked tip of a feature is kept.
func CheckedFile(s *gitstore.Store, feature string) string {
	return filepath.Join(s.ZergDir(), "checked", feature)
}

// CheckState checks the feature's state as it is now (see CheckStateAt).
func (g *Engine) CheckState() error {
	tip, err := g.Store.ReadRef(gitstore.FeatureRef(g.Feature))
	if err != nil {
		return err
	}
	return CheckStateAt(g.ctx(), g.Store, g.Feature, tip)
}

// CheckStateAt refuses (kind Refused) a state tip that holds transitions
// the gates would have refused and that this repository neither wrote nor
// checked before. A tip that passes is remembered, so each commit is
// replayed at most once.
func CheckStateAt(ctx context.Context, s *gitstore.Store, feature string, tip plumbing.Hash) error {
	if tip.IsZero() {
		return nil
	}
	file := CheckedFile(s, feature)
	var last plumbing.Hash
	if b, err := os.ReadFile(file); err == nil {
		if v := strings.TrimSpace(string(b)); plumbing.IsHash(v) {
			last = plumbing.NewHash(v)
		}
	}
	if tip == last {
		return nil
	}
	if !last.IsZero() {
		// A last tip gone from the repository (gc'd after a rewrite)
		// cannot bound the replay: replay everything.
		if _, err := s.ReadCommit(last); err != nil {
			last = plumbing.ZeroHash
		}
	}
	walked, ok := writtenHere(s, feature, tip, last)
	if ok && walked < rememberAfter {
		// Commits written here are taken again next time at the cost of
		// walking them, which is less than writing the file each time.
		return nil
	}
	if !ok {
		bad, err := illegalSince(ctx, s, feature, tip, last)
		if err != nil {
			return s.Damaged(ctx, gitstore.FeatureRef(feature), tip, err)
		}
		if len(bad) > 0 {
			hint := "git zerg fsck lists them; whoever wrote that state must repair it"
			if good := lastGood(s, feature, tip, last); !good.IsZero() {
				hint = fmt.Sprintf("git zerg fsck lists them; git update-ref %s %s puts back the last state checked here",
					gitstore.FeatureRef(feature), good)
			}
			return &Error{Kind: Refused,
				What: fmt.Sprintf("the state of %s was changed outside git-zerg (a plain git fetch of refs/zerg/*?) and holds %d illegal transition(s)", feature, len(bad)),
				Why:  strings.Join(firstFew(bad, 3), "; "), Hint: hint}
		}
	}
	// Racing writers may leave an older checked tip here: that only makes
	// the next check replay a little more.
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp := file + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, []byte(tip.String()+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}

// maxWalk bounds the cheap path: past it, the replay is no dearer.
// rememberAfter is the walk past which the tip is written down.
const (
	maxWalk       = 256
	rememberAfter = 32
)

// writtenHere reports whether tip descends from last (or from nothing,
// when last is zero) by single-parent commits that the store itself moved
// the ref to: each a transition made here, walked commits in all. A merge,
// a commit that arrived by fetch or by push, or anything the reflog's tail
// does not cover, says no, and the caller replays instead.
func writtenHere(s *gitstore.Store, feature string, tip, last plumbing.Hash) (walked int, ok bool) {
	ours, whole := storeWrites(s, gitstore.FeatureRef(feature), reflogTail)
	h := tip
	for ; walked < maxWalk; walked++ {
		if h == last {
			return walked, true
		}
		if !ours[h] && !whole {
			// Older than the tail read: read more, once.
			ours, whole = storeWrites(s, gitstore.FeatureRef(feature), reflogMore)
		}
		if !ours[h] {
			return walked, false
		}
		c, err := s.ReadCommit(h)
		if err != nil || len(c.ParentHashes) > 1 {
			return walked, false
		}
		if len(c.ParentHashes) == 0 {
			return walked + 1, last.IsZero()
		}
		h = c.ParentHashes[0]
	}
	return walked, false
}

// lastGood is the newest first-parent ancestor of tip that was written or
// checked here, zero when there is none: where to go back to.
func lastGood(s *gitstore.Store, feature string, tip, last plumbing.Hash) plumbing.Hash {
	h := tip
	for i := 0; i < maxWalk; i++ {
		if _, ok := writtenHere(s, feature, h, last); ok {
			return h
		}
		c, err := s.ReadCommit(h)
		if err != nil || len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	return last
}

// reflogTail is how much of a reflog is read first: the commits since the
// last check are at its end (some 120 bytes an entry). reflogMore is read
// when that was not enough.
const (
	reflogTail = 8 << 10
	reflogMore = 256 << 10
)

// storeWrites lists the values the store set ref to, from the end of its
// reflog. The store updates refs with `git update-ref --stdin` under its
// own message (gitstore.ReflogMessage; older versions wrote none); git
// fetch, git push into this repository and the like record theirs ("fetch
// ...: fast-forward"), so what they brought is not in the set. whole says whether the whole reflog was read.
func storeWrites(s *gitstore.Store, ref string, tail int64) (ours map[plumbing.Hash]bool, whole bool) {
	out := map[plumbing.Hash]bool{}
	f, err := os.Open(filepath.Join(s.CommonDir, "logs", filepath.FromSlash(ref)))
	if err != nil {
		return out, true
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return out, true
	}
	off := max(fi.Size()-tail, 0)
	buf := make([]byte, fi.Size()-off)
	n, _ := f.ReadAt(buf, off)
	buf = buf[:n]
	if off > 0 {
		// The first line read is likely cut.
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	for len(buf) > 0 {
		line := buf
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			line, buf = buf[:i], buf[i+1:]
		} else {
			buf = nil
		}
		// <old> SP <new> SP <ident> [TAB <message>]
		if len(line) < 82 || line[40] != ' ' || line[81] != ' ' {
			continue
		}
		if i := bytes.IndexByte(line, '\t'); i >= 0 && i+1 < len(line) && string(line[i+1:]) != gitstore.ReflogMessage {
			continue
		}
		if h := string(line[41:81]); plumbing.IsHash(h) {
			out[plumbing.NewHash(h)] = true
		}
	}
	return out, off == 0
}
