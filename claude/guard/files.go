package guard

import (
	"path"
	"strings"
)

// refsFile: a path into the state refs of a repository.
func refsFile(p string) bool {
	if !strings.Contains(p, "refs/zerg") {
		return false
	}
	return strings.Contains(p, ".git") || strings.HasPrefix(p, "refs/zerg")
}

// fileWrites checks the programs that write, move or remove files: none
// of them may touch the state refs, the git directory or git's config
// files. Only what each writes counts: cp may read the git directory.
func (st *guardState) fileWrites(name string, args []string) string {
	var targets []string
	pos := operands(args)
	switch name {
	case "cp", "ln", "install", "rsync":
		if t, ok := optionValue(args, "-t", "--target-directory"); ok && name != "rsync" {
			targets = []string{t}
		} else if len(pos) > 0 {
			targets = pos[len(pos)-1:]
		}
	case "sed", "perl":
		if name == "sed" {
			pos = sedFiles(args, pos)
		}
		if inPlace(args) {
			targets = pos
		}
	case "dd":
		for _, a := range args {
			if of, ok := strings.CutPrefix(a, "of="); ok {
				targets = append(targets, of)
			}
		}
	case "rm", "mv", "tee", "truncate", "touch", "chmod", "chown", "chgrp", "mkdir", "rmdir", "unlink", "shred":
		targets = pos
	default:
		return ""
	}
	for _, a := range args {
		if refsFile(strings.TrimPrefix(a, "of=")) {
			return reasonRefs
		}
	}
	for _, t := range targets {
		// A lock file git left behind when it died is the one thing in
		// the git directory an agent may need to remove; the note a
		// worker leaves for the tasks after it (its prompt names the
		// file) is the one it is asked to write.
		if (name == "rm" || name == "unlink") && strings.HasSuffix(t, ".lock") || noteFile(t) {
			continue
		}
		if st.gitPath(t) {
			return reasonGitDir
		}
	}
	return ""
}

// operands are the words that are not options (all of them after "--").
func operands(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			out = append(out, a)
		}
	}
	return out
}

// optionValue is the value of a short or long option, as -t DIR, -tDIR,
// --target-directory DIR or --target-directory=DIR.
func optionValue(args []string, short, long string) (string, bool) {
	for i, a := range args {
		switch {
		case a == short || a == long:
			if i+1 < len(args) {
				return args[i+1], true
			}
		case strings.HasPrefix(a, long+"="):
			return strings.TrimPrefix(a, long+"="), true
		case strings.HasPrefix(a, short) && len(a) > len(short) && !strings.HasPrefix(a, "--"):
			return a[len(short):], true
		}
	}
	return "", false
}

// inPlace: sed -i or perl -i (also in a cluster such as -pi.bak).
func inPlace(args []string) bool {
	for _, a := range args {
		if a == "--in-place" || strings.HasPrefix(a, "--in-place=") {
			return true
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a[1:], 'i') {
			return true
		}
	}
	return false
}

// sedFiles drops sed's script from its operands when it is not given
// with -e or -f.
func sedFiles(args, pos []string) []string {
	for _, a := range args {
		if a == "-e" || a == "-f" || strings.HasPrefix(a, "--expression") || strings.HasPrefix(a, "--file") {
			return pos
		}
	}
	if len(pos) > 0 {
		return pos[1:]
	}
	return pos
}

// gitPath: a path, as written (after the cds so far), into a git
// directory or one of git's config files: a .git component, the state
// refs, info/exclude, a `git rev-parse --git-dir` or $GIT_DIR that the
// shell would put there, ~/.gitconfig, ~/.config/git/.
func (st *guardState) gitPath(p string) bool {
	return gitPathText(p) || gitPathText(st.join(p))
}

func gitPathText(p string) bool {
	if refsFile(p) || strings.HasSuffix(p, "info/exclude") || path.Base(p) == ".gitconfig" || strings.Contains(p, ".config/git/") {
		return true
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".git" {
			return true
		}
	}
	if strings.Contains(p, "rev-parse") {
		for _, f := range []string{"--git-dir", "--git-common-dir", "--absolute-git-dir", "--git-path"} {
			if strings.Contains(p, f) {
				return true
			}
		}
	}
	for _, v := range []string{"$GIT_DIR", "${GIT_DIR", "$GIT_COMMON_DIR", "${GIT_COMMON_DIR"} {
		if strings.Contains(p, v) {
			return true
		}
	}
	return false
}

// noteFile: a worker's note, <git dir>/zerg/run/<feature>/<task>/note.md.
func noteFile(p string) bool {
	dir, ok := strings.CutSuffix(p, "/note.md")
	i := strings.LastIndex(dir, "/zerg/run/")
	return ok && i >= 0 && strings.Count(dir[i+len("/zerg/run/"):], "/") == 1 && !strings.Contains(dir, "..")
}
