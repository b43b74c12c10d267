package worktree

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// activityEntries bounds the walk of Activity: past it, what a worker
// changes is not seen (its output still is). A walk of that many lstats
// takes some tens of milliseconds, and is made once per stall check.
const activityEntries = 20000

// Activity returns a fingerprint of the worker worktree at dir that
// changes when the worker changes it: the count and newest modification
// time of its entries (a bounded walk that follows no link and opens no
// file the worker made), and the index and HEAD log of git's
// administrative directory for it, which git add and git commit rewrite.
// Edits that keep a file's modification time, or past the walk's bound,
// go unseen: it is a sign of life for the stall watchdog, not a record.
func Activity(common, dir string) func() string {
	admin := adminOf(common, dir)
	return func() string {
		n, newest := 0, int64(0)
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if path == filepath.Join(dir, ".git") {
				return skipEntry(d)
			}
			if n++; n > activityEntries {
				return filepath.SkipAll
			}
			if fi, err := d.Info(); err == nil {
				newest = max(newest, fi.ModTime().UnixNano())
			}
			return nil
		})
		print := fmt.Sprintf("%d %d", n, newest)
		if admin != "" {
			for _, f := range []string{"index", "HEAD", filepath.Join("logs", "HEAD")} {
				if fi, err := os.Lstat(filepath.Join(admin, f)); err == nil {
					print += fmt.Sprintf(" %d/%d", fi.ModTime().UnixNano(), fi.Size())
				}
			}
		}
		return print
	}
}

func skipEntry(d fs.DirEntry) error {
	if d.IsDir() {
		return filepath.SkipDir
	}
	return nil
}
