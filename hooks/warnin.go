package hooks

import (
	"context"
	"path/filepath"

	"github.com/git-zerg/git-zerg/gitcmd"
)

// warningIn is Warning for a caller that knows the repository's common git
// dir already (absolute): where git runs hooks follows from core.hooksPath
// alone, so it costs one git process instead of two. It is for commands a
// person runs over and over, such as status. The settings git expands
// ("~/", "%(prefix)/") and relative ones are rare; those are left to
// warning, so as to say exactly what git does.
func warningIn(ctx context.Context, git *gitcmd.Runner, commonDir string) (string, error) {
	v, err := git.Line(ctx, "config", "--get", "core.hooksPath")
	if err != nil && gitcmd.ExitCode(err) != 1 { // 1: not set
		return "", err
	}
	loc := Location{HooksPath: v, Default: filepath.Join(filepath.Clean(commonDir), "hooks")}
	switch {
	case v == "":
		loc.Dir = loc.Default
	case filepath.IsAbs(v):
		loc.Dir = filepath.Clean(v)
	default:
		return warning(ctx, git)
	}
	return problemAt(loc)
}
