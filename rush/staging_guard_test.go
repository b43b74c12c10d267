package rush

import (
	"errors"
	"strings"
	"testing"

	"github.com/git-zerg/git-zerg/config"
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/engine/enginetest"
	"github.com/git-zerg/git-zerg/words"
	"github.com/git-zerg/git-zerg/worktree"
)

// Staging at a tip git-zerg did not set is judged by the facts: a merge of
// verified work with the tree git's merge gives (what a crash between the
// move and its record leaves) is taken; a merge that carries one more
// file, a plain commit on top, or a move back are put back to the tip
// git-zerg set, the foreign commit kept; and a remote's staging that fails
// is refused, nothing moved.
func TestStagingGuard(t *testing.T) {
	cfg := config.Default()
	cfg.Workers.Command = `echo "$ZERG_TASK" > "$(echo "$ZERG_TASK" | tr AB ab).txt"`
	g, _ := enginetest.New(t, enginetest.TwoTasks, cfg)
	if _, err := Run(g, Options{Workers: 2, Mode: ModeSubprocess}); err != nil {
		t.Fatalf("rush: %v", err)
	}
	var notes []string
	g.Events = func(ev engine.Event) {
		if ev.Type == engine.EvNote {
			notes = append(notes, ev.Text)
		}
	}
	dir := g.Store.Top
	mgr := g.Manager()
	guard := mgr.Guard
	ref := mgr.StagingRef()
	full := enginetest.Run(t, dir, "git", "rev-parse", ref)
	if guard.Known() != full {
		t.Fatalf("record %q after the rush, staging at %s", guard.Known(), full)
	}
	level1 := enginetest.Run(t, dir, "git", "rev-parse", full+"^1")
	workB := enginetest.Run(t, dir, "git", "rev-parse", full+"^2")
	put := func(tip, record string) {
		t.Helper()
		enginetest.Run(t, dir, "git", "update-ref", ref, tip)
		if err := guard.Moved(record); err != nil {
			t.Fatal(err)
		}
	}
	ensure := func(want, why string) {
		t.Helper()
		notes = nil
		got, err := mgr.EnsureStaging(g.Context(), "")
		if err != nil {
			t.Fatalf("%s: %v", why, err)
		}
		now := enginetest.Run(t, dir, "git", "rev-parse", ref)
		if got != want || now != want || guard.Known() != want {
			t.Fatalf("%s: EnsureStaging = %s, staging at %s, record %s; want %s", why, got, now, guard.Known(), want)
		}
	}

	// The level-2 merge made but not recorded.
	put(full, level1)
	ensure(full, "an unrecorded merge of verified work")
	if len(notes) != 0 {
		t.Errorf("notes for a legitimate move: %q", notes)
	}

	// The same merge with a file no task owns added to its tree.
	evilTree := treeWith(t, dir, full, "evil.txt", "evil")
	evil := enginetest.Run(t, dir, "git", "commit-tree", evilTree, "-p", level1, "-p", workB, "-m", "merge B into staging")
	put(evil, level1)
	ensure(level1, "an evil merge")
	if len(notes) != 1 || !strings.Contains(notes[0], "moved outside git-zerg to "+words.ShortHash(evil)) {
		t.Errorf("notes: %q", notes)
	}
	if kept := enginetest.Run(t, dir, "git", "for-each-ref", "--format=%(objectname)", "refs/zerg/attempts/f/staging/"); !strings.Contains(kept, evil) {
		t.Errorf("the foreign commit is not kept: %q", kept)
	}

	// A plain commit on top, and a move back.
	plain := enginetest.Run(t, dir, "git", "commit-tree", evilTree, "-p", full, "-m", "more")
	put(plain, full)
	ensure(full, "a plain commit on top")
	put(level1, full)
	ensure(full, "a move back")

	// From a remote: refused, nothing moved.
	put(level1, level1)
	err := mgr.SetStaging(g.Context(), evil, level1)
	var fe *worktree.ForeignError
	if !errors.As(err, &fe) || !errors.Is(err, worktree.ErrForeignStaging) || fe.Found != evil {
		t.Fatalf("SetStaging of a foreign remote tip: %v", err)
	}
	if now := enginetest.Run(t, dir, "git", "rev-parse", ref); now != level1 {
		t.Fatalf("staging moved to %s", now)
	}
	if err := mgr.SetStaging(g.Context(), full, level1); err != nil {
		t.Fatalf("SetStaging of another host's merge: %v", err)
	}

	// This host merged B itself, and lost the race to push it: the
	// remote's staging, another host's merge of the same work, descends
	// from where both merges started.
	fullTree := enginetest.Run(t, dir, "git", "rev-parse", full+"^{tree}")
	mine := enginetest.Run(t, dir, "git", "commit-tree", fullTree, "-p", level1, "-p", workB, "-m", "merge B into staging (this host)")
	put(mine, mine)
	if err := mgr.SetStaging(g.Context(), full, mine); err != nil {
		t.Fatalf("SetStaging after a lost merge race: %v", err)
	}
	// But not when the remote's line holds a foreign commit.
	put(mine, mine)
	if err := mgr.SetStaging(g.Context(), evil, mine); !errors.Is(err, worktree.ErrForeignStaging) {
		t.Fatalf("SetStaging of an evil merge after a lost race: %v", err)
	}
}

// treeWith is the tree of commit with one more file.
func treeWith(t *testing.T, dir, commit, name, content string) string {
	t.Helper()
	index := t.TempDir() + "/index"
	blob := enginetest.Run(t, dir, "sh", "-c", "echo "+content+" | git hash-object -w --stdin")
	enginetest.Run(t, dir, "env", "GIT_INDEX_FILE="+index, "git", "read-tree", commit)
	enginetest.Run(t, dir, "env", "GIT_INDEX_FILE="+index, "git", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+name)
	return enginetest.Run(t, dir, "env", "GIT_INDEX_FILE="+index, "git", "write-tree")
}
