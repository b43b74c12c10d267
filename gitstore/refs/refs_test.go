package refs

import "testing"

// TestValidRefName: the names git gives its own files among refs are no
// ref names; the names git-zerg gives its refs are.
func TestValidRefName(t *testing.T) {
	for _, name := range []string{"refs/zerg/features/f", "refs/zerg/locks", "refs/zerg/attempts/f/T-1/3", "refs/zerg-remotes/url-0a1b/features/x.y"} {
		if !validName(name) {
			t.Errorf("%s refused", name)
		}
	}
	for _, name := range []string{"refs/zerg/features/f.lock", "refs/zerg/locks.lock", "refs/zerg/features/.tmp", "refs/zerg/a..b", "refs/zerg/x.", "refs/zerg/x/", "refs/zerg//x", "refs/zerg/a b", "refs/zerg/a~1", "refs/zerg/a@{1}", "refs/zerg/x.lock/y"} {
		if validName(name) {
			t.Errorf("%s accepted", name)
		}
	}
}
