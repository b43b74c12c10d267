package gitcmd

import (
	"context"
	"strings"
)

// CommitFiles is a commit and the paths it changed.
type CommitFiles struct {
	Commit string
	Files  []string
}

// LogFiles runs `git log` for args (revisions, options, pathspecs) listing
// each commit with the paths it changed, renames as both paths, and
// parses it. Every caller that asks git which commits touched which files
// goes through here.
func (r *Runner) LogFiles(ctx context.Context, args ...string) ([]CommitFiles, error) {
	raw, err := r.Run(ctx, append([]string{"log", "-z", "--no-renames", "--name-only", "--format=%x01%H"}, args...)...)
	if err != nil {
		return nil, err
	}
	return ParseLogFiles(raw), nil
}

// ParseLogFiles reads `git log -z --name-only --format=%x01%H`: each
// commit is "\x01<id>\0", then its paths, each "\0"-terminated (the first
// after a "\n"). A commit that changed nothing has no paths.
func ParseLogFiles(raw []byte) []CommitFiles {
	var out []CommitFiles
	for _, tok := range strings.Split(string(raw), "\x00") {
		tok = strings.TrimPrefix(tok, "\n")
		if tok == "" {
			continue
		}
		if id, ok := strings.CutPrefix(tok, "\x01"); ok && isHex(id) {
			out = append(out, CommitFiles{Commit: id})
			continue
		}
		if len(out) > 0 {
			out[len(out)-1].Files = append(out[len(out)-1].Files, tok)
		}
	}
	return out
}

func isHex(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
