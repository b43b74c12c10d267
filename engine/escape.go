package engine

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/git-zerg/git-zerg/gitcmd"
	"github.com/git-zerg/git-zerg/worktree"
)

// walkLimit bounds the look at the disk that spares a claim its git
// listing: past it, git's index is the cheaper answer.
const walkLimit = 2000

// OwnedEscape is worktree.FindOwnedEscape without its git process in the
// common case. That listing is only for links below a directory or glob
// owner; when no symbolic link at all is on disk under those directories,
// none that git tracks there can lead anywhere, and the fixed part of each
// path (FindEscape: a few lstats) is all there is to check.
func OwnedEscape(ctx context.Context, git *gitcmd.Runner, root string, owned []string) (*worktree.Escape, error) {
	if linksBelow(root, owned) {
		return worktree.FindOwnedEscape(ctx, git, root, owned)
	}
	for _, p := range owned {
		if e, err := worktree.FindEscape(root, p); e != nil || err != nil {
			return e, err
		}
	}
	return nil, nil
}

// linksBelow reports whether a directory named by a directory or glob
// owner may hold a symbolic link: one is there, or it could not be told
// cheaply (the whole tree is owned, too many entries, an error).
func linksBelow(root string, owned []string) bool {
	seen := 0
	for _, p := range owned {
		dir, many := fixedDir(p)
		if !many {
			continue
		}
		if dir == "" {
			return true
		}
		found := false
		err := filepath.WalkDir(filepath.Join(root, filepath.FromSlash(dir)), func(_ string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if seen++; seen > walkLimit {
				return fs.SkipAll
			}
			if d.Type()&fs.ModeSymlink != 0 {
				found = true
				return fs.SkipAll
			}
			return nil
		})
		if found || seen > walkLimit || (err != nil && !errors.Is(err, fs.ErrNotExist)) {
			return true
		}
	}
	return false
}

// fixedDir is the directory a directory or glob owner names before its
// first wildcard, and whether p is such an owner (a plain path names one
// file, and FindEscape looks at all of it).
func fixedDir(p string) (string, bool) {
	if i := strings.IndexAny(p, "*?["); i >= 0 {
		return strings.TrimSuffix(p[:strings.LastIndexByte(p[:i], '/')+1], "/"), true
	}
	if strings.HasSuffix(p, "/") {
		return strings.TrimSuffix(p, "/"), true
	}
	return "", false
}
